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
void report_print_text(json_t *report, FILE *f);
/* Prometheus text exposition of a report (metrics.c). */
void report_write_prometheus(json_t *report, FILE *f);
int report_write_svg(json_t *report, FILE *f);

#endif
