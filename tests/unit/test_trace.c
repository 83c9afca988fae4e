// SPDX-License-Identifier: GPL-2.0
/*
 * Trace parsing and replay, and the fragmentation benchmark's figures on
 * the shipped traces.
 */
#include <CUnit/CUnit.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mm/mm.h"
#include "bench/bench.h"
#include "bench/trace.h"
#include "bench/workload.h"
#include "tests/suite.h"

static void test_parse_valid_lines(void)
{
	struct trace_event ev;

	CU_ASSERT_EQUAL(trace_parse_line("a 7 3 U\n", &ev), 1);
	CU_ASSERT_EQUAL(ev.op, TRACE_ALLOC);
	CU_ASSERT_EQUAL(ev.id, 7);
	CU_ASSERT_EQUAL(ev.order, 3);
	CU_ASSERT_EQUAL(ev.mt, MIGRATE_UNMOVABLE);
	CU_ASSERT_EQUAL(trace_parse_line("a 18446744073709551615 10 m", &ev), 1);
	CU_ASSERT_EQUAL(ev.id, UINT64_MAX);
	CU_ASSERT_EQUAL(ev.mt, MIGRATE_MOVABLE);
	CU_ASSERT_EQUAL(trace_parse_line("\tf 42  # done with it", &ev), 1);
	CU_ASSERT_EQUAL(ev.op, TRACE_FREE);
	CU_ASSERT_EQUAL(ev.id, 42);
	CU_ASSERT_EQUAL(trace_parse_line("r", &ev), 1);
	CU_ASSERT_EQUAL(ev.op, TRACE_RECLAIM);
	CU_ASSERT_EQUAL(trace_parse_line("c\r\n", &ev), 1);
	CU_ASSERT_EQUAL(ev.op, TRACE_COMPACT);
	CU_ASSERT_EQUAL(trace_parse_line("# a comment", &ev), 0);
	CU_ASSERT_EQUAL(trace_parse_line("   \n", &ev), 0);
}

static void test_parse_malformed_lines(void)
{
	static const char *const bad[] = {
		"a 1 0", "a 1 0 X", "a 1 11 M", "a -1 0 M", "a 1 -0 M",
		"a x 0 M", "a 1 0 M extra", "f", "f 1 2", "f abc", "r 1",
		"q 1", "a 99999999999999999999 0 M", "a 1 0 MM", "c c",
	};
	struct trace_event ev;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CU_ASSERT_EQUAL(trace_parse_line(bad[i], &ev), -EINVAL);
}

struct replay_env {
	struct mm_pool *pool;
	struct replay *r;
};

static int env_open(struct replay_env *e, size_t mib)
{
	struct mm_pool_config cfg = { .size = mib << 20, .grouping = true };

	if (mm_pool_create(&cfg, &e->pool))
		return -1;
	return replay_create(e->pool, NULL, false, &e->r);
}

static void env_close(struct replay_env *e)
{
	replay_destroy(e->r);
	mm_pool_destroy(e->pool);
}

static int replay_text(struct replay_env *e, const char *text, char *err,
		       size_t errlen)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int ret;

	if (!f)
		return -errno;
	ret = trace_replay_file(f, e->r, err, errlen);
	fclose(f);
	return ret;
}

static void test_malformed_line_number(void)
{
	struct replay_env e;
	char err[256] = "";

	CU_ASSERT_FATAL(env_open(&e, 4) == 0);
	CU_ASSERT_EQUAL(replay_text(&e, "# t\na 1 0 M\n\na 2 0 Z\n", err,
				    sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "line 4"));
	env_close(&e);
}

static void test_unknown_and_duplicate_ids(void)
{
	struct replay_env e;
	char err[256] = "";

	CU_ASSERT_FATAL(env_open(&e, 4) == 0);
	CU_ASSERT_EQUAL(replay_text(&e, "a 1 0 M\nf 2\n", err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "line 2"));
	CU_ASSERT_EQUAL(replay_text(&e, "a 5 0 M\na 5 1 U\n", err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "line 2"));
	env_close(&e);
}

/* A trace bigger than the pool: failures are counted, nothing breaks. */
static void test_pool_runs_out(void)
{
	struct replay_env e;
	struct mm_stats st;
	char err[256] = "";

	CU_ASSERT_FATAL(env_open(&e, 2) == 0);
	CU_ASSERT_EQUAL(replay_text(&e, "a 1 9 M\na 2 0 U\nf 2\nf 1\na 3 9 R\n",
				    err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(replay_counts(e.r)->alloc_failed, 1);
	CU_ASSERT_EQUAL(replay_counts(e.r)->live_pages[MIGRATE_RECLAIMABLE], 512);
	replay_free_types(e.r, 7);
	CU_ASSERT_EQUAL(mm_stats(e.pool, &st), 0);
	CU_ASSERT_EQUAL(st.free_pages, 512);
	CU_ASSERT_EQUAL(st.nr_free[9], 1);
	env_close(&e);
}

static void test_reclaim_event_frees_reclaimable(void)
{
	struct replay_env e;
	struct mm_stats st;
	char err[256] = "";

	CU_ASSERT_FATAL(env_open(&e, 8) == 0);
	CU_ASSERT_EQUAL(replay_text(&e, "a 1 2 R\na 2 0 M\na 3 1 R\na 4 0 U\nr\nc\n",
				    err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(mm_stats(e.pool, &st), 0);
	CU_ASSERT_EQUAL(st.allocated_pages[MIGRATE_RECLAIMABLE], 0);
	CU_ASSERT_EQUAL(st.allocated_pages[MIGRATE_MOVABLE], 1);
	CU_ASSERT_EQUAL(st.allocated_pages[MIGRATE_UNMOVABLE], 1);
	CU_ASSERT_EQUAL(replay_counts(e.r)->reclaims, 1);
	/* a reclaimed ID may be reused by a later allocation */
	CU_ASSERT_EQUAL(replay_text(&e, "a 1 0 M\nf 1\n", err, sizeof(err)), 0);
	env_close(&e);
}

static void check_shipped_trace(const char *path)
{
	struct frag_opts o = { .trace = path };
	struct frag_result buddy, grouping;
	char err[256] = "";

	CU_ASSERT_EQUAL_FATAL(bench_frag_measure(&o, "buddy", &buddy, err,
						 sizeof(err)), 0);
	CU_ASSERT_EQUAL_FATAL(bench_frag_measure(&o, "grouping", &grouping,
						 err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(grouping.pool_pages, 64 << 8);
	CU_ASSERT(grouping.events > 10000);
	CU_ASSERT(grouping.huge_allocatable_pct >= 95.0);
	CU_ASSERT(grouping.huge_allocatable_pct <= grouping.physical_limit_pct + 1e-9);
	CU_ASSERT(grouping.huge_allocatable_pct > 2 * buddy.huge_allocatable_pct);
	CU_ASSERT(grouping.unmovable_pageblocks < buddy.unmovable_pageblocks);
	CU_ASSERT_EQUAL(buddy.pageblock_steals, 0);
}

static void test_shipped_traces(void)
{
	check_shipped_trace("tests/traces/default-64m.trace");
	check_shipped_trace("tests/traces/vmhost-64m.trace");
	check_shipped_trace("tests/traces/nearfull-64m.trace");
}

static void test_missing_trace_file(void)
{
	struct frag_opts o = { .trace = "/nonexistent/x.trace" };
	struct frag_result res;
	char err[256] = "";

	CU_ASSERT_EQUAL(bench_frag_measure(&o, "grouping", &res, err,
					   sizeof(err)), -ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "/nonexistent/x.trace"));
}

/* The default workload at a small size: deterministic and above 95%. */
static void test_builtin_workload(void)
{
	struct frag_opts o = { .pool_mib = 128, .seed = 3 };
	struct frag_result a, b, buddy;
	char err[256] = "";

	CU_ASSERT_EQUAL_FATAL(bench_frag_measure(&o, "grouping", &a, err,
						 sizeof(err)), 0);
	CU_ASSERT_EQUAL_FATAL(bench_frag_measure(&o, "grouping", &b, err,
						 sizeof(err)), 0);
	CU_ASSERT_EQUAL_FATAL(bench_frag_measure(&o, "buddy", &buddy, err,
						 sizeof(err)), 0);
	CU_ASSERT_EQUAL(a.events, b.events);
	CU_ASSERT_DOUBLE_EQUAL(a.huge_allocatable_pct, b.huge_allocatable_pct, 1e-12);
	CU_ASSERT(a.huge_allocatable_pct >= 95.0);
	CU_ASSERT(a.huge_allocatable_pct > buddy.huge_allocatable_pct);
	/* the unmovable share the profile promises: 5-10% of the pool */
	CU_ASSERT(a.unmovable_pages * 20 >= a.pool_pages);
	CU_ASSERT(a.unmovable_pages * 10 <= a.pool_pages);
	o.profile = "no-such-profile";
	CU_ASSERT_EQUAL(bench_frag_measure(&o, "grouping", &a, err,
					   sizeof(err)), -EINVAL);
}

/*
 * What a built-in workload says, checked event by event: an ID is
 * allocated only while nobody holds it, freed only while held, and after
 * 'r' no reclaimable ID is held.
 */
struct id_check {
	uint8_t *held;		/* by ID: 0 free, else 1 + type */
	uint64_t cap, max_id, allocs, bad;
};

static int id_check_sink(void *ctx, const struct trace_event *ev)
{
	struct id_check *c = ctx;

	switch (ev->op) {
	case TRACE_ALLOC:
		c->allocs++;
		if (ev->id >= c->cap || c->held[ev->id]) {
			c->bad++;
			return 0;
		}
		c->held[ev->id] = (uint8_t)(1 + ev->mt);
		if (ev->id > c->max_id)
			c->max_id = ev->id;
		return 0;
	case TRACE_FREE:
		if (ev->id >= c->cap || !c->held[ev->id])
			c->bad++;
		else
			c->held[ev->id] = 0;
		return 0;
	case TRACE_RECLAIM:
		for (uint64_t id = 0; id < c->cap; id++)
			if (c->held[id] == 1 + MIGRATE_RECLAIMABLE)
				c->held[id] = 0;
		return 0;
	case TRACE_COMPACT:
		return 0;
	}
	return -EINVAL;
}

/*
 * The generator hands a freed allocation's ID to a later one, so that the
 * IDs (and the replay's tables by ID) stay below the pool's frame count
 * and grow with the live set, not with the run: on every profile a run of
 * five turnovers makes several times more allocations than it has IDs.
 * Before, each allocation took a new ID.
 */
static void test_workload_reuses_ids(void)
{
	uint64_t frames = (32ULL << 20) >> MM_PAGE_SHIFT;
	const struct wl_profile *p;

	for (unsigned int i = 0; (p = wl_profile_at(i)); i++) {
		struct id_check c = { .cap = 64 * frames };
		size_t state = 0;

		c.held = calloc(c.cap, 1);
		CU_ASSERT_FATAL(c.held != NULL);
		CU_ASSERT_EQUAL(wl_generate(p, frames, 1, id_check_sink, NULL, &c,
					    &state), 0);
		if (c.bad || c.max_id >= frames || c.allocs < 4 * (c.max_id + 1))
			fprintf(stderr, "\n  %s: %llu bad events, IDs up to %llu for "
				"%llu allocations, %llu frames\n", p->name,
				(unsigned long long)c.bad, (unsigned long long)c.max_id,
				(unsigned long long)c.allocs, (unsigned long long)frames);
		CU_ASSERT_EQUAL(c.bad, 0);
		CU_ASSERT(c.max_id < frames);
		CU_ASSERT(c.allocs >= 4 * (c.max_id + 1));
		CU_ASSERT(state > 0);
		free(c.held);
	}
}

/*
 * --live on the default workload: compaction must turn nearly all free
 * (and reclaimable) memory into 2 MiB blocks, moving live pages without
 * corrupting a byte; plain grouping cannot.
 */
static void test_live_compaction(void)
{
	struct frag_opts o = { .pool_mib = 512, .seed = 1, .live = true,
				.check_contents = true };
	struct frag_result g, gc;
	char err[256] = "";

	CU_ASSERT_EQUAL_FATAL(bench_frag_measure(&o, "grouping", &g, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL_FATAL(bench_frag_measure(&o, "grouping+compaction", &gc, err,
						 sizeof(err)), 0);
	CU_ASSERT(gc.huge_allocatable_pct >= 97.0);
	CU_ASSERT(gc.blocks > g.blocks);
	CU_ASSERT(gc.compact_stall > 0);
	CU_ASSERT(gc.contents_checked);
	CU_ASSERT_EQUAL(gc.corrupted_bytes, 0);
	CU_ASSERT_EQUAL(g.migrated_pages, 0);
}

/* The near-full case: claiming a compacted block beats the seed's rule. */
static void test_nearfull_claim_block(void)
{
	struct frag_opts o = { .pool_mib = 256, .seed = 1, .profile = "nearfull",
				.check_contents = true };
	struct frag_result g, all;
	char err[256] = "";

	CU_ASSERT_EQUAL_FATAL(bench_frag_measure(&o, "grouping", &g, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL_FATAL(bench_frag_measure(&o, "all", &all, err, sizeof(err)), 0);
	CU_ASSERT(all.claim_blocks > 0);
	CU_ASSERT(all.huge_allocatable_pct > g.huge_allocatable_pct + 20.0);
	CU_ASSERT(all.unmovable_pageblocks < g.unmovable_pageblocks);
	CU_ASSERT_EQUAL(all.corrupted_bytes, 0);
}

/*
 * Issue 12's near-full host: the seed's policies scatter unmovable memory
 * over two or three times the pageblocks it needs; claiming only whole
 * pageblocks keeps it within two of the minimum, and 90% of the rest
 * allocatable as 2 MiB blocks at rest.
 */
static void test_nearfull_churn(void)
{
	struct frag_opts o = { .pool_mib = 128, .seed = 1, .profile = "nearfull-churn",
				.check_contents = true };
	struct frag_result seed, all;
	uint64_t need;
	char err[256] = "";

	CU_ASSERT_EQUAL_FATAL(bench_frag_measure(&o, "all-seed", &seed, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL_FATAL(bench_frag_measure(&o, "all", &all, err, sizeof(err)), 0);
	need = (all.unmovable_pages + MM_PAGEBLOCK_PAGES - 1) / MM_PAGEBLOCK_PAGES;
	CU_ASSERT(all.unmovable_pageblocks <= need + 2);
	CU_ASSERT(seed.unmovable_pageblocks > need + 2);
	CU_ASSERT(all.huge_allocatable_pct >= 90.0);
	CU_ASSERT(all.huge_allocatable_pct > seed.huge_allocatable_pct);
	CU_ASSERT_EQUAL(all.alloc_failed, 0);
	CU_ASSERT_EQUAL(all.corrupted_bytes, 0);
}

static void test_gupta(void)
{
	struct frag_opts o = { .pool_mib = 64, .gupta = true,
				.check_contents = true };
	struct frag_result r;
	char err[256] = "";

	CU_ASSERT_EQUAL_FATAL(bench_frag_measure(&o, "grouping+compaction", &r, err,
						 sizeof(err)), 0);
	CU_ASSERT_EQUAL(r.blocks_possible, 24);
	CU_ASSERT(r.blocks * 10 >= r.blocks_possible * 9);
	CU_ASSERT(r.migrated_pages > 0);
	CU_ASSERT(r.contents_checked);
	CU_ASSERT_EQUAL(r.corrupted_bytes, 0);
	CU_ASSERT_EQUAL(bench_frag_measure(&o, "no-such-policy", &r, err, sizeof(err)),
			-EINVAL);
}

/* A size field of /proc/self/status ("VmRSS:", "VmHWM:") in bytes, 0 if absent. */
static uint64_t status_bytes(const char *field)
{
	FILE *f = fopen("/proc/self/status", "r");
	unsigned long long kib = 0;
	char line[128];

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, field, strlen(field)) &&
		    sscanf(line + strlen(field), "%llu", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return (uint64_t)kib << 10;
}

/* The peak RSS starts again from the current RSS ("5" to clear_refs). */
static int reset_peak_rss(void)
{
	int fd = open("/proc/self/clear_refs", O_WRONLY);
	int ret;

	if (fd < 0)
		return -errno;
	ret = write(fd, "5", 1) == 1 ? 0 : -errno;
	close(fd);
	return ret;
}

/* Sanitizers keep shadow memory for every byte touched (TSan: several). */
#if defined(__SANITIZE_THREAD__)
#define SHADOW_FACTOR	8
#elif defined(__SANITIZE_ADDRESS__)
#define SHADOW_FACTOR	5
#else
#define SHADOW_FACTOR	1
#endif

/*
 * A replay needs the allocator's metadata, not memory behind the frames:
 * Gupta's test on a 1 GiB pool (every frame allocated by a replay that
 * owns its pages, then compaction moving them) may raise the peak RSS by
 * no more than 0.5% of the pool (the metadata's 16 bytes a frame) plus
 * the trace's tables, at most 64 bytes per allocation live at once, here
 * one per frame. Backing the frames would take 1 GiB.
 */
static void test_replay_leaves_host_memory_alone(void)
{
	struct frag_opts o = { .pool_mib = 1024, .gupta = true };
	uint64_t pool = o.pool_mib << 20, frames = pool >> MM_PAGE_SHIFT;
	uint64_t before, peak, bound;
	struct frag_result r;
	char err[256] = "";

	CU_ASSERT_EQUAL_FATAL(reset_peak_rss(), 0);
	before = status_bytes("VmRSS:");
	CU_ASSERT_FATAL(before > 0);
	CU_ASSERT_EQUAL_FATAL(bench_frag_measure(&o, "grouping+compaction", &r, err,
						 sizeof(err)), 0);
	peak = status_bytes("VmHWM:");
	bound = SHADOW_FACTOR * (pool / 200 + 64 * frames) + (8 << 20);
	if (peak > before + bound)
		fprintf(stderr, "\n  peak RSS grew by %llu MiB for a %llu MiB pool "
			"(bound %llu MiB)\n", (unsigned long long)((peak - before) >> 20),
			(unsigned long long)o.pool_mib, (unsigned long long)(bound >> 20));
	CU_ASSERT(peak <= before + bound);
	CU_ASSERT(r.migrated_pages > 0);	/* the moves were asked for */
	CU_ASSERT(r.blocks * 10 >= r.blocks_possible * 9);
}

/*
 * The replay's own tables on the default workload (about 0.55 live
 * allocations a frame): what grows with the pool is its word per frame,
 * so that with the allocator's 16 bytes a frame stays within 0.5% of the
 * pool (20.48 bytes); its tables by ID (5 bytes an ID) and the generator's
 * grow with the live allocations, at most ID_BYTES_PER_FRAME a frame
 * together (7.6 measured). Before IDs were reused and kept by ID, the
 * tables alone took 13 bytes a frame (28 before that), and the generator
 * a byte per allocation ever made.
 */
#define ID_BYTES_PER_FRAME 10

static void test_replay_tables_per_frame(void)
{
	struct frag_opts o = { .pool_mib = 1024, .seed = 1 };
	uint64_t frames = (o.pool_mib << 20) >> MM_PAGE_SHIFT;
	uint64_t by_id;
	struct frag_result r;
	char err[256] = "";

	CU_ASSERT_EQUAL_FATAL(bench_frag_measure(&o, "all", &r, err, sizeof(err)), 0);
	by_id = r.trace_table_bytes + r.generator_bytes;
	if (by_id > ID_BYTES_PER_FRAME * frames)
		fprintf(stderr, "\n  trace state: %.1f bytes a frame (bound %d)\n",
			(double)by_id / (double)frames, ID_BYTES_PER_FRAME);
	CU_ASSERT(r.trace_table_bytes > 0);
	CU_ASSERT(r.generator_bytes > 0);
	CU_ASSERT(by_id <= ID_BYTES_PER_FRAME * frames);
	CU_ASSERT_EQUAL(r.frame_table_bytes, 4 * frames);
	CU_ASSERT(r.metadata_bytes + r.frame_table_bytes <= frames * 4096 / 200);
}

int register_trace_suite(void)
{
	static const struct suite_test tests[] = {
		{ "parse valid lines", test_parse_valid_lines },
		{ "parse malformed lines", test_parse_malformed_lines },
		{ "malformed line number", test_malformed_line_number },
		{ "unknown and duplicate ids", test_unknown_and_duplicate_ids },
		{ "pool runs out", test_pool_runs_out },
		{ "reclaim event", test_reclaim_event_frees_reclaimable },
		{ "shipped traces", test_shipped_traces },
		{ "missing trace file", test_missing_trace_file },
		{ "built-in workload", test_builtin_workload },
		{ "workload reuses IDs", test_workload_reuses_ids },
		{ "live: compaction", test_live_compaction },
		{ "near-full: claim block", test_nearfull_claim_block },
		{ "near-full: issue 12's churn", test_nearfull_churn },
		{ "gupta", test_gupta },
		{ "replay leaves host memory alone", test_replay_leaves_host_memory_alone },
		{ "replay tables per frame", test_replay_tables_per_frame },
	};

	return SUITE("trace", tests);
}
