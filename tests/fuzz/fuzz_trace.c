// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: allocation traces (bench/trace.c) replayed against a
 * real pool of mm/ (a pure library, no KVM). The input is a trace file.
 *
 * Each input runs twice on a fresh 4 MiB pool (two pageblocks, so a short
 * trace already meets fallbacks, reclaim and compaction): once as the
 * benchmarks replay, once live, where the replay owns its pages the way a
 * VMM does and mm/ moves and reclaims them through its callbacks.
 *
 * Checked besides the sanitizers: a refused trace says why in a C string;
 * a live replay never sees a page's contents change under a move; the
 * pool's count of allocated pages is the replay's; and once the replay
 * frees what it holds, every frame is free again.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/trace.h"

#define POOL_BYTES	(4UL << 20)

static void check_pool_matches(struct mm_pool *pool, const struct replay *r)
{
	const struct replay_counts *c = replay_counts(r);
	uint64_t ours = 0, theirs = 0;
	struct mm_stats st;

	if (mm_stats(pool, &st))
		abort();
	for (int t = 0; t < MIGRATE_TYPES; t++) {
		ours += c->live_pages[t];
		theirs += st.allocated_pages[t];
	}
	if (ours != theirs)
		abort();
}

static void check_all_free(struct mm_pool *pool)
{
	struct mm_stats st;

	mm_drain_all(pool);
	if (mm_stats(pool, &st) || st.free_pages != st.frames)
		abort();
}

static void replay_once(FILE *f, bool live)
{
	struct mm_pool_config cfg = { .size = POOL_BYTES, .grouping = true,
				      .policy = MM_POLICY_ALL };
	struct mm_pool *pool;
	struct mm_pcp *pcp = NULL;
	struct replay *r;
	char err[256];
	int ret;

	if (mm_pool_create(&cfg, &pool))
		abort();
	if (live && mm_pcp_create(pool, &pcp))
		abort();
	if (replay_create(pool, pcp, live, &r))
		abort();
	rewind(f);
	memset(err, 0xa5, sizeof(err));
	ret = trace_replay_file(f, r, err, sizeof(err));
	if (ret && (!memchr(err, '\0', sizeof(err)) || !err[0]))
		abort();	/* a refusal must say why, in a C string */
	if (live && (replay_counts(r)->corrupted_bytes || replay_verify(r)))
		abort();	/* a move lost or tore a page */
	check_pool_matches(pool, r);
	replay_free_types(r, (1U << MIGRATE_TYPES) - 1);
	replay_destroy(r);
	mm_pcp_destroy(pcp);
	check_all_free(pool);
	mm_pool_destroy(pool);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct trace_event ev;
	char line[300];
	FILE *f;

	if (!size)
		return 0;
	f = fmemopen((void *)data, size, "r");
	if (!f)
		abort();
	trace_pool_mib(f);
	replay_once(f, false);
	replay_once(f, true);
	/* every line on its own too, as `gpmm bench` parses a workload's events */
	rewind(f);
	while (fgets(line, sizeof(line), f))
		if (trace_parse_line(line, &ev) > 0 && (ev.order >= MM_MAX_ORDER ||
		    (unsigned int)ev.mt >= MIGRATE_TYPES))
			abort();
	fclose(f);
	return 0;
}
