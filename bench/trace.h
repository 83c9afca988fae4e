/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Allocation traces (DESIGN.md): `a ID ORDER TYPE`, `f ID`, `r`, `c`, `#`
 * comments. A replay executes events against a pool and keeps the live
 * allocations by ID; the built-in workloads feed it the same events.
 */
#ifndef GPMM_TRACE_H
#define GPMM_TRACE_H

#include <stdio.h>

#include "mm/mm.h"

enum trace_op { TRACE_ALLOC, TRACE_FREE, TRACE_RECLAIM, TRACE_COMPACT };

struct trace_event {
	enum trace_op op;
	uint64_t id;
	unsigned int order;
	enum mm_migratetype mt;
};

struct replay_counts {
	uint64_t events;
	uint64_t allocs;
	uint64_t alloc_failed;
	uint64_t frees;
	uint64_t reclaims;
	uint64_t compacts;
	uint64_t live_pages[MIGRATE_TYPES];
	/* live mode: what the allocator did through our owner callbacks */
	uint64_t migrated_pages;
	uint64_t reclaimed_pages;
	uint64_t corrupted_bytes;	/* pattern mismatches (a pool with memory only) */
};

struct replay;

/*
 * @live: the replay owns its allocations the way a VMM would: MOVABLE ones
 * can be migrated, RECLAIMABLE ones also reclaimed, through owner
 * callbacks. On a pool with memory every allocated page carries a
 * pattern, checked on each move; a metadata-only pool is never touched.
 */
int replay_create(struct mm_pool *pool, struct mm_pcp *pcp, bool live,
		  struct replay **out);
/* Live mode: re-check every live allocation's pattern; corrupted bytes. */
uint64_t replay_verify(struct replay *r);
/* Are contents checked (live, on a pool with memory)? */
bool replay_checks_contents(const struct replay *r);
/* What the replay's tables by ID take now: the trace's live allocations. */
size_t replay_table_bytes(const struct replay *r);
/* Live mode: its table by frame, which grows with the pool (4 B a frame). */
size_t replay_frame_table_bytes(const struct replay *r);
void replay_destroy(struct replay *r);
/* 0, or -EINVAL with a message in @err (unknown or duplicate ID). */
int replay_event(struct replay *r, const struct trace_event *ev, char *err,
		 size_t errlen);
/*
 * Cache hints for an ID freed soon: stage 0 brings in its table slot,
 * stage 1 (a few events later) its frame's metadata, stage 2 (later
 * still) what freeing the frame touches. No effect on the replay's
 * results.
 */
void replay_prefetch(struct replay *r, uint64_t id, int stage);
/* Free every live allocation whose type bit (1 << mt) is in @mask. */
void replay_free_types(struct replay *r, unsigned int mask);
/* Free about @permille/1000 of them, picked with @seed; pages freed. */
uint64_t replay_free_some(struct replay *r, unsigned int mask,
			  unsigned int permille, uint64_t seed);
const struct replay_counts *replay_counts(const struct replay *r);

/* 1 = one event, 0 = blank or comment, -EINVAL = malformed. */
int trace_parse_line(const char *line, struct trace_event *ev);
void trace_print_event(FILE *f, const struct trace_event *ev);
/*
 * Replay a whole trace file. On a malformed line or an impossible event,
 * returns -EINVAL and puts "line N: why" into @err.
 */
int trace_replay_file(FILE *f, struct replay *r, char *err, size_t errlen);
/* The pool size a trace asks for in a "# pool-mib N" comment, or 0. */
unsigned long trace_pool_mib(FILE *f);

#endif
