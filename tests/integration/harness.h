/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the integration suites: real KVM VMs in this process, or the
 * gpmm binary as a child process.
 */
#ifndef GPMM_TESTS_HARNESS_H
#define GPMM_TESTS_HARNESS_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>

#include "vmm/control/console_buf.h"
#include "vmm/core/vm.h"


struct run_result {
	enum vm_state state;
	int exit_code;
	char report[4096];
	struct vm_stats stats;
	struct console_buf console;
};

/* Path of a built guest file (GUESTS env, else build/guests). */
const char *guest_file(const char *name);
/*
 * The payloads' directory, which a daemon must be given (--allow) to run
 * them: its sandbox opens files nowhere else outside its run directory.
 */
const char *guests_dir(void);
/* Path of a built payload: guest_file(NAME.bin). */
const char *payload(const char *name);
/* A pool of @mib MiB with grouping on; NULL recorded as a failure. */
struct pool *test_pool(unsigned int mib);
void test_config(struct vm_config *cfg, const char *name, const char *kernel,
		 unsigned int ram_mib, unsigned int cpus);
/* Create (console to @res), returns 0 or the vm_create error. */
int test_vm_create(struct pool *pool, const struct vm_config *cfg,
		   struct run_result *res, struct vm **out, char *err,
		   size_t errlen);
/* Wait for the VM to end by itself, then collect and destroy it. */
void test_vm_finish(struct vm *vm, struct run_result *res);
/* Create, run to the end, destroy. */
int run_payload(struct pool *pool, const struct vm_config *cfg,
		struct run_result *res);
/* True when every frame of the pool is free again. */
bool pool_is_whole(struct pool *pool);
bool console_has(struct run_result *res, const char *needle);
/* ShmemPmdMapped of a process, from the kernel (smaps_rollup); -1: unknown. */
long long smaps_pmd_kb(int pid);
/*
 * Shared memory a process can reach, by the kernel's word: the sizes of
 * the distinct memfds it maps or holds a descriptor of (/proc/PID/maps,
 * map_files and fd; root), -1 if unreadable; @files gets how many.
 */
long long shared_memory_bytes(int pid, int *files);

/* The gpmm binary (GPMM env, else build/gpmm) with a private run dir. */
const char *gpmm_bin(void);
const char *test_run_dir(void);
/* Run a shell command line; returns its exit status, output in @out. */
int sh(char *out, size_t outlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The pid in @file, 0 if none. */
int read_pid(const char *file);
/* Run @cmd in the background, output to RUN_DIR/@tag.log; its pid, 0 on failure. */
int spawn_bg(const char *tag, const char *cmd);
/* Wait (bounded by count, 0.2 s each) until RUN_DIR/@tag.log says @needle. */
bool log_says(const char *tag, const char *needle, int tries);
/* `gpmm frag --json` of a VM by name, or of a daemon by its socket's path. */
json_t *frag_json(const char *target);

#endif
