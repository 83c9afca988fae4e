// SPDX-License-Identifier: GPL-2.0
/*
 * `gpmm bench frag`: Gorman's experiment on the pool. A load (built-in
 * workload or trace) runs once with plain buddy and once with grouping;
 * then everything movable and reclaimable is given back and we ask how
 * much of the memory not pinned by unmovable allocations is free in 2 MiB
 * blocks, i.e. could back a guest with huge pages.
 *
 * The pool is metadata only: a replay needs the allocator's metadata, not
 * memory behind the frames, so a pool far larger than the host replays
 * in the metadata's 16 bytes per 4 KiB frame plus the trace's tables.
 * Each run reports the peak RSS it took, read from the kernel.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "mm/mm.h"
#include "bench/bench.h"
#include "bench/progress.h"
#include "bench/workload.h"
#include "vmm/core/vm.h"

struct sink_ctx {
	struct replay *replay;
	struct progress *progress;
	uint64_t pool_pages;
	char *err;
	size_t errlen;
};

/*
 * The status line is looked at every PROGRESS_EVERY events: reading the
 * clock for each of a run's hundreds of millions of events cost seconds.
 */
#define PROGRESS_EVERY	4096

static int replay_sink(void *ctx, const struct trace_event *ev)
{
	struct sink_ctx *c = ctx;
	const struct replay_counts *rc = replay_counts(c->replay);

	if (rc->events % PROGRESS_EVERY == 0)
		progress_tick(c->progress, "%llu events, pool %.0f%% used, %llu failed",
			      (unsigned long long)rc->events,
			      100.0 * (double)(rc->live_pages[MIGRATE_UNMOVABLE] +
					       rc->live_pages[MIGRATE_RECLAIMABLE] +
					       rc->live_pages[MIGRATE_MOVABLE]) /
			      (double)c->pool_pages,
			      (unsigned long long)rc->alloc_failed);
	return replay_event(c->replay, ev, c->err, c->errlen);
}

static void replay_hint(void *ctx, uint64_t id, int stage)
{
	struct sink_ctx *c = ctx;

	replay_prefetch(c->replay, id, stage);
}

static int run_load(const struct frag_opts *o, FILE *trace, struct replay *r,
		    uint64_t pool_pages, size_t *gen_bytes, char *err, size_t errlen)
{
	struct sink_ctx ctx = { r, o->progress, pool_pages, err, errlen };
	const struct wl_profile *p;

	if (trace) {
		rewind(trace);
		return trace_replay_file(trace, r, err, errlen);
	}
	p = wl_profile_find(o->profile ? o->profile : "default");
	if (!p) {
		snprintf(err, errlen, "unknown workload profile '%s'", o->profile);
		return -EINVAL;
	}
	return wl_generate(p, pool_pages, o->seed, replay_sink, replay_hint, &ctx,
			   gen_bytes);
}

/*
 * Every unmovable page must live in some pageblock, so at best they fill
 * ceil(U / 512) blocks and every other block is free: that is the limit.
 */
static void measure_at_rest(const struct mm_stats *st, struct frag_result *res)
{
	uint64_t u = st->allocated_pages[MIGRATE_UNMOVABLE];
	uint64_t usable = st->frames - u;
	uint64_t huge = 0;
	uint64_t need = (u + MM_PAGEBLOCK_PAGES - 1) / MM_PAGEBLOCK_PAGES;

	for (unsigned int o = MM_PAGEBLOCK_ORDER; o < MM_MAX_ORDER; o++)
		huge += st->nr_free[o] << o;
	res->unmovable_pages = u;
	res->pool_pages = st->frames;
	res->huge_allocatable_pct = usable ? 100.0 * (double)huge / (double)usable : 0;
	res->physical_limit_pct = usable ?
		100.0 * (double)((st->pageblocks - need) * MM_PAGEBLOCK_PAGES) /
		(double)usable : 0;
	res->unusable_index_9 = mm_unusable_index(st, MM_PAGEBLOCK_ORDER);
	res->fragmentation_index_9 = mm_fragmentation_index(st, MM_PAGEBLOCK_ORDER);
	res->unmovable_pageblocks = st->pageblocks - st->free_pageblocks;
	res->fallbacks = st->counters.fallback[0] + st->counters.fallback[1] +
			 st->counters.fallback[2];
	res->pageblock_steals = st->counters.pageblock_steal;
}

static int open_trace(const struct frag_opts *o, FILE **trace,
		      uint64_t *pool_mib, char *err, size_t errlen)
{
	*trace = NULL;
	*pool_mib = o->pool_mib;
	if (o->trace) {
		*trace = fopen(o->trace, "r");
		if (!*trace) {
			int e = errno;

			snprintf(err, errlen, "cannot open trace %s: %s", o->trace,
				 strerror(e));
			return -e;
		}
		if (!*pool_mib)
			*pool_mib = trace_pool_mib(*trace);
	}
	if (!*pool_mib)
		*pool_mib = MM_DEFAULT_POOL_SIZE >> 20;
	return 0;
}

/*
 * The process's peak RSS starts again from its current RSS (Linux 4.0+:
 * "5" to clear_refs), so that each policy's run has a peak of its own.
 * Without it the peak is the process's so far, which only overstates.
 */
static void peak_rss_reset(void)
{
	int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	if (write(fd, "5", 1) != 1) {
		/* nothing to do: the peak stays the process's */
	}
	close(fd);
}

/* VmHWM of /proc/self/status, else getrusage's ru_maxrss. */
static uint64_t peak_rss_bytes(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	unsigned long long kib = 0;
	char line[128];
	struct rusage ru;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %llu kB", &kib) == 1)
			break;
	if (f)
		fclose(f);
	if (!kib && !getrusage(RUSAGE_SELF, &ru))
		kib = (unsigned long long)ru.ru_maxrss;
	return (uint64_t)kib << 10;
}

static const struct frag_policy policies[] = {
	{ "buddy", false, 0 },
	{ "grouping", true, 0 },
	{ "grouping+lumpy", true, MM_POLICY_LUMPY },
	{ "grouping+compaction", true, MM_POLICY_COMPACT },
	{ "all-seed", true, MM_POLICY_LUMPY | MM_POLICY_COMPACT | MM_POLICY_CLAIM_BLOCK },
	{ "all", true, MM_POLICY_ALL },
};

#define NR_POLICIES (sizeof(policies) / sizeof(policies[0]))

const struct frag_policy *frag_policy_find(const char *name)
{
	for (size_t i = 0; i < NR_POLICIES; i++)
		if (!strcmp(policies[i].name, name))
			return &policies[i];
	return NULL;
}

/*
 * --live: request 2 MiB MOVABLE blocks until one fails. What counts is
 * the share of the free memory (plus what reclaim gave back meanwhile)
 * that left as whole blocks.
 */
static void request_huge_blocks(struct mm_pool *pool, struct replay *r,
				struct progress *progress, struct frag_result *res)
{
	const struct replay_counts *c = replay_counts(r);
	uint64_t reclaimed0 = c->reclaimed_pages, migrated0 = c->migrated_pages;
	struct mm_stats st;
	uint64_t t0;

	mm_drain_all(pool);
	if (mm_stats(pool, &st))
		return;
	res->free_before_pages = st.free_pages;
	t0 = vm_now_ns();
	while (mm_alloc(pool, NULL, MM_PAGEBLOCK_ORDER, MIGRATE_MOVABLE, MM_NO_OWNER) >= 0) {
		res->blocks++;
		progress_tick(progress, "%llu 2 MiB blocks of %llu MiB free so far",
			      (unsigned long long)res->blocks,
			      (unsigned long long)(res->free_before_pages >> 8));
	}
	res->ms_per_block = res->blocks ?
		(double)(vm_now_ns() - t0) / 1e6 / (double)res->blocks : 0;
	res->reclaimed_pages = c->reclaimed_pages - reclaimed0;
	res->migrated_pages = c->migrated_pages - migrated0;
	res->huge_allocatable_pct = 100.0 * (double)(res->blocks * MM_PAGEBLOCK_PAGES) /
		(double)(res->free_before_pages + res->reclaimed_pages);
}

static void count_mechanisms(struct mm_pool *pool, struct frag_result *res)
{
	struct mm_stats st;

	if (mm_stats(pool, &st))
		return;
	res->claim_blocks = st.counters.claim_block;
	res->compact_stall = st.counters.compact_stall;
	res->lumpy_success = st.counters.lumpy_success;
	if (!res->migrated_pages)
		res->migrated_pages = st.counters.pgmigrate_success;
}

/*
 * Gupta's test: the whole pool as order-0 movable pages, three quarters of
 * every 2 MiB chunk freed, then one compaction of everything. The best it
 * can do is pack the kept quarter into a quarter of the pageblocks.
 */
static int run_gupta(struct mm_pool *pool, struct replay *r,
		     struct frag_result *res, char *err, size_t errlen)
{
	uint64_t frames = mm_pool_frames(pool), kept = 0;
	struct trace_event ev = { .op = TRACE_ALLOC, .mt = MIGRATE_MOVABLE };
	struct mm_stats st;
	uint64_t t0;
	int ret = 0;

	for (ev.id = 0; ev.id < frames && !ret; ev.id++)
		ret = replay_event(r, &ev, err, errlen);
	ev.op = TRACE_FREE;
	for (ev.id = 0; ev.id < frames && !ret; ev.id++)
		if (ev.id % 4)
			ret = replay_event(r, &ev, err, errlen);
		else
			kept++;
	if (ret)
		return ret;
	mm_drain_all(pool);
	t0 = vm_now_ns();
	mm_compact_all(pool);
	res->ms_per_block = (double)(vm_now_ns() - t0) / 1e6;
	ret = mm_stats(pool, &st);
	for (unsigned int o = MM_PAGEBLOCK_ORDER; o < MM_MAX_ORDER; o++)
		res->blocks += st.nr_free[o] << (o - MM_PAGEBLOCK_ORDER);
	res->blocks_possible = st.pageblocks - (kept + MM_PAGEBLOCK_PAGES - 1) / MM_PAGEBLOCK_PAGES;
	res->free_before_pages = st.free_pages;
	res->huge_allocatable_pct = 100.0 * (double)res->blocks / (double)res->blocks_possible;
	res->migrated_pages = replay_counts(r)->migrated_pages;
	return ret;
}

int bench_frag_measure(const struct frag_opts *o, const char *policy,
		       struct frag_result *res, char *err, size_t errlen)
{
	const struct frag_policy *p = frag_policy_find(policy);
	struct mm_pool_config cfg = { 0 };
	bool live = o->live || o->gupta || (p && p->flags);
	struct mm_pool *pool = NULL;
	struct mm_pcp *pcp = NULL;
	struct replay *r = NULL;
	struct mm_stats st;
	uint64_t pool_mib;
	size_t gen_bytes = 0;
	FILE *trace;
	uint64_t t0 = vm_now_ns();
	int ret;

	memset(res, 0, sizeof(*res));
	if (!p) {
		snprintf(err, errlen, "unknown policy '%s'", policy);
		return -EINVAL;
	}
	res->policy = p->name;
	cfg.grouping = p->grouping;
	cfg.policy = p->flags;
	cfg.metadata_only = !o->check_contents;
	peak_rss_reset();
	ret = open_trace(o, &trace, &pool_mib, err, errlen);
	if (ret)
		return ret;
	cfg.size = pool_mib << 20;
	ret = mm_pool_create(&cfg, &pool);
	if (ret) {
		snprintf(err, errlen, "cannot create a %llu MiB pool: %s",
			 (unsigned long long)pool_mib, strerror(-ret));
		goto out;
	}
	ret = mm_pcp_create(pool, &pcp);
	if (!ret)
		ret = replay_create(pool, pcp, live, &r);
	if (ret) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (o->gupta) {
		ret = run_gupta(pool, r, res, err, errlen);
		goto done;
	}
	ret = run_load(o, trace, r, mm_pool_frames(pool), &gen_bytes, err, errlen);
	if (ret)
		goto out;

	mm_drain_all(pool);
	ret = mm_stats(pool, &st);
	res->mixed_pageblocks = st.mixed_pageblocks;
	res->events = replay_counts(r)->events;
	res->alloc_failed = replay_counts(r)->alloc_failed;
	if (o->live) {
		request_huge_blocks(pool, r, o->progress, res);
		ret = mm_stats(pool, &st);
		res->unmovable_pages = st.allocated_pages[MIGRATE_UNMOVABLE];
		res->pool_pages = st.frames;
		goto done;
	}
	replay_free_types(r, 1U << MIGRATE_MOVABLE | 1U << MIGRATE_RECLAIMABLE);
	mm_drain_all(pool);
	if (!ret)
		ret = mm_stats(pool, &st);
	if (!ret)
		measure_at_rest(&st, res);
done:
	count_mechanisms(pool, res);
	res->corrupted_bytes = replay_counts(r)->corrupted_bytes + replay_verify(r);
	res->pool_pages = mm_pool_frames(pool);
	res->seconds = (double)(vm_now_ns() - t0) / 1e9;
	res->contents_checked = replay_checks_contents(r);
	res->metadata_bytes = (uint64_t)(mm_metadata_bytes_per_frame(pool) *
					 (double)mm_pool_frames(pool));
	res->trace_table_bytes = replay_table_bytes(r);
	res->frame_table_bytes = replay_frame_table_bytes(r);
	res->generator_bytes = gen_bytes;
	res->peak_rss_bytes = peak_rss_bytes();
out:
	replay_destroy(r);
	mm_pcp_destroy(pcp);
	mm_pool_destroy(pool);
	if (trace)
		fclose(trace);
	return ret;
}

static json_t *result_json(const struct frag_result *r)
{
	return json_pack("{s:s, s:f, s:f, s:I, s:f, s:f, s:I, s:I, s:I, s:I, s:I, s:I,"
			 " s:f, s:I, s:I, s:I, s:I, s:I, s:f, s:I, s:I, s:I, s:I, s:b, s:I, s:I, s:I,"
			 " s:I, s:I}",
		"policy", r->policy,
		"huge_allocatable_pct", r->huge_allocatable_pct,
		"physical_limit_pct", r->physical_limit_pct,
		"mixed_pageblocks", (json_int_t)r->mixed_pageblocks,
		"unusable_index_9", r->unusable_index_9,
		"fragmentation_index_9", r->fragmentation_index_9,
		"unmovable_pageblocks", (json_int_t)r->unmovable_pageblocks,
		"unmovable_pages", (json_int_t)r->unmovable_pages,
		"fallbacks", (json_int_t)r->fallbacks,
		"pageblock_steals", (json_int_t)r->pageblock_steals,
		"events", (json_int_t)r->events,
		"alloc_failed", (json_int_t)r->alloc_failed,
		"seconds", r->seconds,
		"blocks", (json_int_t)r->blocks,
		"blocks_possible", (json_int_t)r->blocks_possible,
		"free_before_pages", (json_int_t)r->free_before_pages,
		"reclaimed_pages", (json_int_t)r->reclaimed_pages,
		"migrated_pages", (json_int_t)r->migrated_pages,
		"ms_per_block", r->ms_per_block,
		"corrupted_bytes", (json_int_t)r->corrupted_bytes,
		"claim_blocks", (json_int_t)r->claim_blocks,
		"compact_stall", (json_int_t)r->compact_stall,
		"lumpy_success", (json_int_t)r->lumpy_success,
		"contents_checked", r->contents_checked,
		"peak_rss_bytes", (json_int_t)r->peak_rss_bytes,
		"metadata_bytes", (json_int_t)r->metadata_bytes,
		"trace_table_bytes", (json_int_t)r->trace_table_bytes,
		"generator_bytes", (json_int_t)r->generator_bytes,
		"frame_table_bytes", (json_int_t)r->frame_table_bytes);
}

/* bad_B: pattern bytes that differed, or "-" when nothing was checked. */
static const char *bad_bytes(const struct frag_result *r, char *buf, size_t len)
{
	if (!r->contents_checked)
		return "-";
	snprintf(buf, len, "%llu", (unsigned long long)r->corrupted_bytes);
	return buf;
}

/*
 * What each run took from the host against the pool it modelled. The
 * peak RSS holds what grows with the pool (the allocator's metadata and,
 * live, the replay's word per frame) and what grows with the trace (the
 * replay's tables by ID and a built-in workload's pending frees and IDs):
 * less_trace% is the peak without the second, against the pool.
 */
static void print_memory(const struct frag_result *res, int n)
{
	printf("\nhost memory: peak RSS of each run (VmHWM); the allocator's metadata "
	       "and the replay's frame words\n"
	       "grow with the pool, the trace's state "
	       "(tables by ID, generator) with the live allocations\n");
	printf("%-20s %10s %8s %9s %8s %10s %10s %11s\n", "policy", "peak_MiB",
	       "pool%", "meta_MiB", "meta%", "frame_MiB", "trace_MiB", "less_trace%");
	for (int i = 0; i < n; i++) {
		double pool = (double)(res[i].pool_pages << MM_PAGE_SHIFT);
		double trace = (double)(res[i].trace_table_bytes + res[i].generator_bytes);

		printf("%-20s %10.1f %8.3f %9.1f %8.3f %10.1f %10.1f %11.3f\n",
		       res[i].policy, (double)res[i].peak_rss_bytes / (1 << 20),
		       100.0 * (double)res[i].peak_rss_bytes / pool,
		       (double)res[i].metadata_bytes / (1 << 20),
		       100.0 * (double)res[i].metadata_bytes / pool,
		       (double)res[i].frame_table_bytes / (1 << 20), trace / (1 << 20),
		       100.0 * ((double)res[i].peak_rss_bytes - trace) / pool);
	}
}

static void print_header(const struct frag_opts *o, const struct frag_result *res)
{
	printf("gpmm bench frag%s: %s %s, pool %llu MiB, seed %llu\n",
	       o->gupta ? " --gupta" : o->live ? " --live" : "",
	       o->trace ? "trace" : "profile",
	       o->gupta ? "(Gupta: all order-0, 3/4 of each 2 MiB freed)" :
	       o->trace ? o->trace : (o->profile ? o->profile : "default"),
	       (unsigned long long)(res[0].pool_pages >> 8),
	       (unsigned long long)o->seed);
}

static void print_rest_table(const struct frag_result *res, int n)
{
	printf("at rest: movable and reclaimable freed, unmovable kept "
	       "(%llu pages = %.1f%% of the pool)\n\n",
	       (unsigned long long)res[0].unmovable_pages,
	       100.0 * (double)res[0].unmovable_pages / (double)res[0].pool_pages);
	printf("%-20s %11s %7s %8s %9s %8s %8s %9s %7s %6s %6s %6s\n", "policy",
	       "huge_alloc%", "limit%", "mixed_pb", "unusable9", "U_blocks",
	       "fallback", "steals", "claims", "failed", "bad_B", "secs");
	for (int i = 0; i < n; i++) {
		char bad[24];

		printf("%-20s %11.2f %7.2f %8llu %9.3f %8llu %8llu %9llu %7llu %6llu %6s %6.2f\n",
		       res[i].policy, res[i].huge_allocatable_pct,
		       res[i].physical_limit_pct,
		       (unsigned long long)res[i].mixed_pageblocks,
		       res[i].unusable_index_9,
		       (unsigned long long)res[i].unmovable_pageblocks,
		       (unsigned long long)res[i].fallbacks,
		       (unsigned long long)res[i].pageblock_steals,
		       (unsigned long long)res[i].claim_blocks,
		       (unsigned long long)res[i].alloc_failed,
		       bad_bytes(&res[i], bad, sizeof(bad)), res[i].seconds);
	}
}

static void print_live_table(const struct frag_result *res, int n)
{
	printf("live: movable memory stays in use (patterns checked), reclaimable may be\n"
	       "reclaimed; then 2 MiB MOVABLE blocks are requested until one fails.\n"
	       "huge_alloc%% = 2 MiB x blocks / (free before + reclaimed meanwhile)\n\n");
	printf("%-20s %11s %7s %10s %10s %10s %9s %8s %7s %7s %6s\n", "policy",
	       "huge_alloc%", "blocks", "free_MiB", "reclm_MiB", "migrated",
	       "mig/blk", "ms/blk", "stalls", "lumpy", "bad_B");
	for (int i = 0; i < n; i++) {
		char bad[24];

		printf("%-20s %11.2f %7llu %10.1f %10.1f %10llu %9.1f %8.3f %7llu %7llu %6s\n",
		       res[i].policy, res[i].huge_allocatable_pct,
		       (unsigned long long)res[i].blocks,
		       (double)res[i].free_before_pages / 256.0,
		       (double)res[i].reclaimed_pages / 256.0,
		       (unsigned long long)res[i].migrated_pages,
		       res[i].blocks ? (double)res[i].migrated_pages / (double)res[i].blocks : 0.0,
		       res[i].ms_per_block,
		       (unsigned long long)res[i].compact_stall,
		       (unsigned long long)res[i].lumpy_success,
		       bad_bytes(&res[i], bad, sizeof(bad)));
	}
}

static void print_gupta_table(const struct frag_result *res, int n)
{
	printf("one compaction of the whole pool; possible = pageblocks the kept\n"
	       "quarter does not need\n\n");
	printf("%-20s %8s %9s %8s %10s %10s %6s\n", "policy", "blocks", "possible",
	       "pct", "migrated", "ms", "bad_B");
	for (int i = 0; i < n; i++) {
		char bad[24];

		printf("%-20s %8llu %9llu %8.2f %10llu %10.1f %6s\n", res[i].policy,
		       (unsigned long long)res[i].blocks,
		       (unsigned long long)res[i].blocks_possible,
		       res[i].huge_allocatable_pct,
		       (unsigned long long)res[i].migrated_pages, res[i].ms_per_block,
		       bad_bytes(&res[i], bad, sizeof(bad)));
	}
}

static void print_table(const struct frag_opts *o, const struct frag_result *res,
			int n)
{
	const struct frag_result *buddy = NULL, *best = NULL;

	print_header(o, res);
	if (o->gupta)
		print_gupta_table(res, n);
	else if (o->live)
		print_live_table(res, n);
	else
		print_rest_table(res, n);
	print_memory(res, n);
	for (int i = 0; i < n; i++) {
		if (!strcmp(res[i].policy, "buddy"))
			buddy = &res[i];
		if (!best || res[i].huge_allocatable_pct > best->huge_allocatable_pct)
			best = &res[i];
	}
	if (buddy && best != buddy && buddy->huge_allocatable_pct > 0)
		printf("\nratio %s/buddy: %.2fx\n", best->policy,
		       best->huge_allocatable_pct / buddy->huge_allocatable_pct);
}

static void print_json(const struct frag_opts *o, const struct frag_result *res, int n)
{
	json_t *root = json_object(), *arr = json_array();

	for (int i = 0; i < n; i++)
		json_array_append_new(arr, result_json(&res[i]));
	json_object_set_new(root, "mode", json_string(o->gupta ? "gupta" :
						      o->live ? "live" : "rest"));
	json_object_set_new(root, "results", arr);
	for (int i = 0; i < n; i++)
		if (!strcmp(res[i].policy, "buddy") && res[i].huge_allocatable_pct > 0)
			for (int j = 0; j < n; j++)
				if (!strcmp(res[j].policy, "grouping"))
					json_object_set_new(root, "ratio_grouping_buddy",
						json_real(res[j].huge_allocatable_pct /
							  res[i].huge_allocatable_pct));
	json_dumpf(root, stdout, JSON_INDENT(2));
	putchar('\n');
	json_decref(root);
}

static const char frag_usage[] =
	"usage: gpmm bench frag [--policy LIST] [--pool-mib N] [--seed N]\n"
	"                       [--profile NAME | --trace FILE] [--live | --gupta]\n"
	"                       [--check-contents] [--json]\n"
	"Fills the pool with a mixed workload and reports how much memory is\n"
	"allocatable as 2 MiB blocks. Default: at rest, movable and reclaimable\n"
	"freed. --live: movable stays in use; 2 MiB blocks are requested until\n"
	"one fails (lumpy reclaim and compaction at work). --gupta: all order-0,\n"
	"3/4 of every 2 MiB freed, then compaction.\n"
	"The pool is metadata only (no memory behind its frames; about 0.4% of\n"
	"its size in host memory, plus the trace's tables); each run reports\n"
	"its peak RSS. --check-contents: a pool with memory instead, every page\n"
	"allocated gets a pattern, checked on every move (bad_B); it takes as\n"
	"much host memory as the load uses.\n"
	"Policies (comma-separated): buddy grouping grouping+lumpy\n"
	"grouping+compaction all-seed (grouping with lumpy, compaction and\n"
	"compacting a block free for unmovable when no order-5 block is left)\n"
	"all (all-seed, and unmovable/reclaimable only ever claim a wholly\n"
	"free pageblock, compacting one first). Default: buddy,grouping,\n"
	"all-seed,all at rest; all with --live; grouping+compaction with --gupta.\n"
	"Profiles: default, vmhost, nearfull, and the near-full hosts\n"
	"nearfull-churn, nearfull-hi, nearfull-umix, nearfull-rchurn,\n"
	"nearfull-late (gpmm bench trace-gen --list).\n";

static int parse_u64_arg(const char *name, const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	if (errno || *end || !*s || *s == '-') {
		fprintf(stderr, "gpmm: %s: invalid number '%s'\n", name, s);
		return -EINVAL;
	}
	return 0;
}

/* Split a comma-separated policy list; every name must be known. */
static int parse_policies(char *list, const char **names, int max)
{
	int n = 0;

	for (char *save = NULL, *t = strtok_r(list, ",", &save); t;
	     t = strtok_r(NULL, ",", &save)) {
		if (!frag_policy_find(t)) {
			fprintf(stderr, "gpmm bench frag: unknown policy '%s'\n", t);
			return -1;
		}
		if (n == max)
			return -1;
		names[n++] = t;
	}
	return n ? n : -1;
}

int cmd_bench_frag(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "policy", required_argument, NULL, 'p' },
		{ "pool-mib", required_argument, NULL, 'm' },
		{ "seed", required_argument, NULL, 's' },
		{ "profile", required_argument, NULL, 'w' },
		{ "trace", required_argument, NULL, 't' },
		{ "live", no_argument, NULL, 'l' },
		{ "gupta", no_argument, NULL, 'g' },
		{ "json", no_argument, NULL, 'j' },
		{ "check-contents", no_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct frag_opts o = { .seed = 1 };
	char list[256] = "", err[256];
	const char *names[NR_POLICIES];
	struct frag_result res[NR_POLICIES];
	struct progress progress;
	bool json = false;
	int c, n;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'p': snprintf(list, sizeof(list), "%s", optarg); break;
		case 'm': if (parse_u64_arg("--pool-mib", optarg, &o.pool_mib)) return 2; break;
		case 's': if (parse_u64_arg("--seed", optarg, &o.seed)) return 2; break;
		case 'w': o.profile = optarg; break;
		case 't': o.trace = optarg; break;
		case 'l': o.live = true; break;
		case 'g': o.gupta = true; break;
		case 'j': json = true; break;
		case 'c': o.check_contents = true; break;
		case 'h': fputs(frag_usage, stdout); return 0;
		default: fputs(frag_usage, stderr); return 2;
		}
	}
	if (!list[0])
		snprintf(list, sizeof(list), "%s", o.gupta ? "grouping+compaction" :
			 o.live ? "buddy,grouping,grouping+lumpy,grouping+compaction,all" :
			 "buddy,grouping,all-seed,all");
	n = parse_policies(list, names, NR_POLICIES);
	if (optind < argc || n < 0 || (o.live && o.gupta)) {
		fputs(frag_usage, stderr);
		return 2;
	}
	if (o.pool_mib && o.pool_mib % 2) {
		fprintf(stderr, "gpmm: --pool-mib must be a multiple of 2 (pageblocks are 2 MiB)\n");
		return 2;
	}
	progress_init(&progress, json);
	o.progress = &progress;
	for (int i = 0; i < n; i++) {
		if (i)
			progress_phase(&progress, "bench frag %d/%d %s (%s %.2f%% huge)",
				       i + 1, n, names[i], res[i - 1].policy,
				       res[i - 1].huge_allocatable_pct);
		else
			progress_phase(&progress, "bench frag 1/%d %s", n, names[i]);
		if (bench_frag_measure(&o, names[i], &res[i], err, sizeof(err))) {
			progress_clear(&progress);
			fprintf(stderr, "gpmm bench frag: %s\n", err);
			return 1;
		}
	}
	progress_clear(&progress);
	if (json)
		print_json(&o, res, n);
	else
		print_table(&o, res, n);
	return 0;
}

static int print_sink(void *ctx, const struct trace_event *ev)
{
	trace_print_event(ctx, ev);
	return 0;
}

static const char gen_usage[] =
	"usage: gpmm bench trace-gen [--profile NAME] [--pool-mib N] [--seed N]\n"
	"                            [-o FILE] | --list\n"
	"Writes a built-in workload as an allocation trace (DESIGN.md format).\n";

int cmd_bench_trace_gen(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "profile", required_argument, NULL, 'w' },
		{ "pool-mib", required_argument, NULL, 'm' },
		{ "seed", required_argument, NULL, 's' },
		{ "output", required_argument, NULL, 'o' },
		{ "list", no_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *name = "default", *out = NULL;
	uint64_t mib = 64, seed = 1;
	const struct wl_profile *p;
	FILE *f = stdout;
	int c, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'w': name = optarg; break;
		case 'm': if (parse_u64_arg("--pool-mib", optarg, &mib)) return 2; break;
		case 's': if (parse_u64_arg("--seed", optarg, &seed)) return 2; break;
		case 'o': out = optarg; break;
		case 'l':
			for (unsigned int i = 0; (p = wl_profile_at(i)); i++)
				printf("%-16s %s\n", p->name, p->desc);
			return 0;
		case 'h': fputs(gen_usage, stdout); return 0;
		default: fputs(gen_usage, stderr); return 2;
		}
	}
	p = wl_profile_find(name);
	if (!p || optind < argc || !mib || mib % 2) {
		if (!p)
			fprintf(stderr, "gpmm: unknown profile '%s' (try --list)\n", name);
		fputs(gen_usage, stderr);
		return 2;
	}
	if (out && !(f = fopen(out, "w"))) {
		perror(out);
		return 1;
	}
	fprintf(f, "# gpmm allocation trace: profile %s, seed %llu\n# %s\n# pool-mib %llu\n",
		p->name, (unsigned long long)seed, p->desc, (unsigned long long)mib);
	ret = wl_generate(p, (mib << 20) >> MM_PAGE_SHIFT, seed, print_sink, NULL, f, NULL);
	if (f != stdout && fclose(f))
		ret = -errno;
	if (ret)
		fprintf(stderr, "gpmm bench trace-gen: %s\n", strerror(-ret));
	return ret ? 1 : 0;
}
