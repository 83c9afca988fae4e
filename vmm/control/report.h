/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fragmentation report: per VM and host-wide, as one JSON document
 * (QMP query-fragmentation), which the CLI prints as text or draws as SVG.
 */
#ifndef GPMM_REPORT_H
#define GPMM_REPORT_H

#include <jansson.h>
#include <stdio.h>

#include "vmm/core/vm.h"

/* @vms: the VMs to describe; @map: add the per-pageblock picture data. */
json_t *report_build(struct pool *pool, struct vm **vms, unsigned int nr,
		     bool map);
/*
 * The same, with the picture's owners numbered past @vms by @others: the
 * owner ids of VMs in other processes (the pool service's clients), whose
 * reports the caller appends to "vms" in that order.
 */
json_t *report_build_owners(struct pool *pool, struct vm **vms, unsigned int nr, bool map,
			    const uint32_t *others, unsigned int nr_others);
/* The report as text: each line answers one question (docs/report.md). */
void report_print_text(json_t *report, FILE *f);
/* The pool's raw buddyinfo and pagetypeinfo tables, under a one-line legend. */
void report_print_tables(json_t *report, FILE *f);
/* The mappings of this process (/proc/self/maps), which vm.max_map_count caps. */
uint64_t report_process_mappings(void);
/*
 * vm.max_map_count; GPMM_TEST_MAX_MAP_COUNT instead when set, a test hook
 * that shows the warning without lowering a host-wide setting.
 */
uint64_t report_max_map_count(void);
/* From how many mappings a process is near @limit (vm.max_map_count): 3/4 of it. */
uint64_t report_map_count_warn_at(uint64_t limit);
/*
 * 1, with what is happening and what to do in @buf, when @mappings are
 * near @limit (0: unknown, never near); else 0.
 */
int report_map_count_warning(uint64_t mappings, uint64_t limit, char *buf, size_t len);
/* Prometheus text exposition of a report (metrics.c). */
void report_write_prometheus(json_t *report, FILE *f);
int report_write_svg(json_t *report, FILE *f);

#endif
