/* SPDX-License-Identifier: GPL-2.0 */
/* `gpmm bench ...`: measurements printed side by side, policy by policy. */
#ifndef GPMM_BENCH_H
#define GPMM_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct progress;

struct frag_opts {
	uint64_t pool_mib;	/* 0: the trace's "# pool-mib", else 1024 */
	uint64_t seed;
	const char *profile;	/* built-in workload, when no trace */
	const char *trace;	/* trace file to replay instead */
	bool live;		/* movable stays live; then order-9 requests */
	bool gupta;		/* Gupta's test instead of a load */
	bool check_contents;	/* a pool with memory: patterns checked on moves */
	struct progress *progress;	/* status line, NULL: none */
};

/* A policy of the allocator, as the benchmark names it. */
struct frag_policy {
	const char *name;
	bool grouping;
	unsigned int flags;	/* MM_POLICY_* */
};

const struct frag_policy *frag_policy_find(const char *name);

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
	/* --live and --gupta */
	uint64_t blocks;		/* order-9 blocks handed out / yielded */
	uint64_t blocks_possible;	/* gupta: what the kept pages allow */
	uint64_t free_before_pages;
	uint64_t reclaimed_pages;
	uint64_t migrated_pages;
	uint64_t corrupted_bytes;
	double ms_per_block;
	uint64_t claim_blocks;
	uint64_t compact_stall;
	uint64_t lumpy_success;
	/* what the run took from the host */
	bool contents_checked;
	uint64_t peak_rss_bytes;	/* VmHWM, reset before the run */
	uint64_t metadata_bytes;	/* the allocator's, for this pool */
	uint64_t trace_table_bytes;	/* the replay's tables by ID: the trace's live set */
	uint64_t generator_bytes;	/* a built-in workload's own tables */
	uint64_t frame_table_bytes;	/* the replay's word per frame (live mode) */
};

/*
 * Run the load under @policy and measure it "at rest": by default every
 * MOVABLE and RECLAIMABLE allocation freed, UNMOVABLE ones kept; with
 * o->live, movable memory stays in use and order-9 blocks are requested
 * until one fails. The pool is metadata only (nothing of the host behind
 * its frames) unless o->check_contents. Returns 0, or -errno with a
 * message in @err.
 */
int bench_frag_measure(const struct frag_opts *o, const char *policy,
		       struct frag_result *res, char *err, size_t errlen);

int cmd_bench_frag(int argc, char **argv);
int cmd_bench_alloc(int argc, char **argv);
int cmd_bench_trace_gen(int argc, char **argv);
int cmd_bench_boot(int argc, char **argv);
/* `gpmm bench boot --linux`: cmd_bench_boot hands it its arguments. */
int cmd_bench_boot_linux(int argc, char **argv);
int cmd_bench_net(int argc, char **argv);
int cmd_bench_fault(int argc, char **argv);
int cmd_bench_migrate(int argc, char **argv);
int cmd_bench_hugeback(int argc, char **argv);
int cmd_bench_isolation(int argc, char **argv);
int cmd_bench_report(int argc, char **argv);
int cmd_bench_pool_fds(int argc, char **argv);

#endif
