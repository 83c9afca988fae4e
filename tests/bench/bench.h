/* SPDX-License-Identifier: GPL-2.0 */
/* `gpmm bench ...`: measurements printed side by side, policy by policy. */
#ifndef GPMM_BENCH_H
#define GPMM_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct frag_opts {
	uint64_t pool_mib;	/* 0: the trace's "# pool-mib", else 1024 */
	uint64_t seed;
	const char *profile;	/* built-in workload, when no trace */
	const char *trace;	/* trace file to replay instead */
};

struct frag_result {
	const char *policy;
	double huge_allocatable_pct;
	double physical_limit_pct;
	double unusable_index_9;
	double fragmentation_index_9;
	uint64_t mixed_pageblocks;	/* at the end of the load */
	uint64_t unmovable_pageblocks;	/* at rest: blocks holding U */
	uint64_t unmovable_pages;	/* at rest */
	uint64_t pool_pages;
	uint64_t fallbacks;
	uint64_t pageblock_steals;
	uint64_t events;
	uint64_t alloc_failed;
	double seconds;
};

/*
 * Run the load with grouping on or off and measure it "at rest": every
 * MOVABLE and RECLAIMABLE allocation freed, UNMOVABLE ones kept.
 * Returns 0, or -errno with a message in @err.
 */
int bench_frag_measure(const struct frag_opts *o, const char *policy,
		       bool grouping, struct frag_result *res, char *err,
		       size_t errlen);

int cmd_bench_frag(int argc, char **argv);
int cmd_bench_alloc(int argc, char **argv);
int cmd_bench_trace_gen(int argc, char **argv);
int cmd_bench_boot(int argc, char **argv);
int cmd_bench_fault(int argc, char **argv);

#endif
