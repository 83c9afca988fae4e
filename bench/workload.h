/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Built-in allocation workloads: seeded, deterministic generators of trace
 * events that imitate host loads. The same events feed a replay (bench) or
 * a trace file (`gpmm bench trace-gen`).
 */
#ifndef GPMM_WORKLOAD_H
#define GPMM_WORKLOAD_H

#include "bench/trace.h"

struct wl_profile {
	const char *name;
	const char *desc;
	double occupancy;		/* target share of the pool in use */
	double swing;			/* occupancy dips by up to this much */
	double share[MIGRATE_TYPES];	/* target share of live memory */
	double life[MIGRATE_TYPES];	/* mean lifetime, in pool turnovers */
	double permanent[MIGRATE_TYPES];/* share that lives to the end */
	unsigned int order_w[MIGRATE_TYPES][4];	/* weights of orders 0..3 */
	double churn;			/* run length, in pool turnovers */
	double unmovable_start;		/* U allocations begin this late (0..1) */
	unsigned int burst;		/* M frees grouped into epochs (VM exits) */
	unsigned int reclaim_every;	/* emit 'r' every N turnovers/100, 0 none */
	/*
	 * Every N turnovers/100 (0: never) the reclaimable owner lets about
	 * half of its live allocations go at once, as plain 'f' events: a
	 * cache shrinking under pressure, not the allocator asking.
	 */
	unsigned int rhalf_every;
	double ramp;			/* U and R targets grow over this much of the run */
};

typedef int (*wl_sink)(void *ctx, const struct trace_event *ev);
/* Optional: ID will be freed soon (stage 0: in a while, 1, 2: sooner). */
typedef void (*wl_hint)(void *ctx, uint64_t id, int stage);

const struct wl_profile *wl_profile_find(const char *name);
const struct wl_profile *wl_profile_at(unsigned int i);	/* NULL past the end */
/* @state_bytes (may be NULL): the most the generator's own tables took. */
int wl_generate(const struct wl_profile *p, uint64_t pool_pages, uint64_t seed,
		wl_sink sink, wl_hint hint, void *ctx, size_t *state_bytes);

#endif
