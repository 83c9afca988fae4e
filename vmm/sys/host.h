/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What this host's kernel gives gpmm, probed once per process: each
 * capability gpmm relies on, whether it works here (tried, not inferred
 * from a version number), and what the operator loses where it does not.
 */
#ifndef GPMM_HOST_H
#define GPMM_HOST_H

#include "vmm/core/compiler.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum host_cap_id {
	HOST_KVM,
	HOST_UFFD,
	HOST_UFFD_WP_SHMEM,
	HOST_UFFD_WP_SPAN,
	HOST_COLLAPSE_SHMEM,
	HOST_THP,
	HOST_MAX_MAP_COUNT,
	HOST_SCHED_FIFO,
	HOST_NR_CAPS,
};

enum host_level {
	HOST_OK,
	HOST_LIMITED,	/* works, at a cost said in the detail */
	HOST_MISSING,
};

struct host_cap_state {
	enum host_level level;
	char detail[192];	/* what the probe saw */
};

struct host_report {
	char kernel[96];	/* uname -r */
	struct host_cap_state cap[HOST_NR_CAPS];
};

/* The report of this process's host, probed on first use. */
const struct host_report *host_caps(void);
bool host_has(enum host_cap_id id);
const char *host_cap_name(enum host_cap_id id);
/* What is lost where @id is not OK. */
const char *host_cap_loss(enum host_cap_id id);

/* One line per capability that is not OK, each starting with @prefix. */
void host_caps_print_missing(FILE *f, const char *prefix);
/* The whole table (gpmm host-check). */
void host_caps_print(FILE *f, const struct host_report *rep);
json_t *host_caps_json(const struct host_report *rep);
/* The host's cap on mappings per process (vm.max_map_count), 0: unknown. */
uint64_t host_max_map_count(void);
/* Descriptors this process may need besides @need (sockets, guests, logs). */
#define HOST_NOFILE_ROOM	1024
/* Raise RLIMIT_NOFILE's soft limit for @need more descriptors; -EMFILE and why. */
__must_check int host_raise_nofile(uint64_t need, char *err, size_t errlen);

#endif
