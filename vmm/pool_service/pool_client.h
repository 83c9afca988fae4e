/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A VM process's side of the pool service (vmm/pool_service/pool_proto.h): frames
 * come in batches into a cache of its own (the per-thread list of a
 * process: one round trip a batch, not a page) and go back in batches;
 * the service's requests to move a block are answered by a thread of
 * ours through the owner operations the VM registered, as mm/ would call
 * them in one process.
 *
 * If the service goes away the VM keeps what it holds: frees go to the
 * cache and are used again, and a request for more fails with -ESHUTDOWN.
 */
#ifndef GPMM_POOL_CLIENT_H
#define GPMM_POOL_CLIENT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "mm/mm.h"

#define POOL_CLIENT_BATCH	64	/* frames a refill asks for */
#define POOL_CLIENT_RUN_ORDER	4	/* runs of 16 frames (a fault-around) are cached too */
#define POOL_CLIENT_RUNS	16	/* runs a refill asks for: 1 MiB */
#define POOL_CLIENT_HIGH	256	/* a cache above this gives half back */
#define POOL_CLIENT_ANSWER_MS	60000	/* a service that does not answer is gone */

struct pool_client;

struct pool_client_info {
	uint64_t frames;	/* in the pool */
	uint32_t owner;		/* our owner id there */
	uint64_t quota;		/* frames we may hold */
	bool host_huge;
	unsigned int release_ms;
	unsigned int overcommit_pct;	/* the pool lends this % of its size */
	uint8_t *base;		/* frame f at base + f * 4 KiB, while we hold it */
};

/* -errno with the service's sentence (or ours) in @err. */
/* @kind: POOL_CLIENT_VM or POOL_CLIENT_TENANT (pool_proto.h). */
__must_check int pool_client_connect(const char *path, const char *name, uint64_t ram_bytes,
				     unsigned int kind, struct pool_client **out,
				     struct pool_client_info *info, char *err, size_t errlen);
void pool_client_close(struct pool_client *c);
/* The file and offset behind a frame we hold (not a copy), or -ENOENT. */
int pool_client_frame_file(struct pool_client *c, uint64_t frame, off_t *off);
bool pool_client_gone(struct pool_client *c);

/* The owner operations the service's requests run (NULL: refuse them). */
void pool_client_set_owner(struct pool_client *c, const struct mm_owner_ops *ops, void *priv);

/* One order-0 frame from the cache (refilled without compaction). */
__must_check long pool_client_page(struct pool_client *c);
/*
 * 2^@order contiguous frames, each an order-0 allocation (a fault-around
 * block): runs of POOL_CLIENT_RUN_ORDER come from a cache of runs, refilled
 * POOL_CLIENT_RUNS at a time; other orders are asked for one by one.
 */
__must_check long pool_client_pages(struct pool_client *c, unsigned int order);
/*
 * @n blocks of @order (POOL_ALLOC_* @flags); how many came, or -errno.
 * With POOL_ALLOC_PREPARE, @bits gets zeroed (bit 0) and host huge (bit 1).
 */
__must_check long pool_client_alloc(struct pool_client *c, unsigned int order, unsigned int n,
				    unsigned int flags, uint32_t *frames, unsigned int *bits);
/* The same, failing unless more than @keep_free pageblocks stay free. */
__must_check long pool_client_alloc_keep(struct pool_client *c, unsigned int order,
					 unsigned int n, unsigned int flags, uint64_t keep_free,
					 uint32_t *frames, unsigned int *bits);
/* An order-0 frame goes to the cache, a block back to the service. */
__must_check int pool_client_free(struct pool_client *c, uint64_t frame, unsigned int order);
/* POOL_SPLIT, POOL_PIN, POOL_UNPIN of one block. */
__must_check int pool_client_frame_op(struct pool_client *c, unsigned int op, uint64_t frame);
__must_check long pool_client_pinned(struct pool_client *c, const uint32_t *frames, size_t n,
				     size_t *unallocated);
__must_check int pool_client_info(struct pool_client *c, const uint32_t *frames, size_t n,
				  struct mm_frame_info *infos);
__must_check int pool_client_stats(struct pool_client *c, struct mm_stats *st);
__must_check int pool_client_walk(struct pool_client *c, mm_pageblock_fn fn, void *opaque);
/* Our own pageblocks only (the service's pageblocks are owned whole). */
__must_check int pool_client_walk_own(struct pool_client *c, mm_pageblock_fn fn, void *opaque);
/* The VM's report of itself, kept by the service for its host-wide view. */
void pool_client_report(struct pool_client *c, const char *json_text);
/* Every frame we hold back to the service at once (the VM ends); how many, or -errno. */
__must_check long pool_client_release(struct pool_client *c);
/* Give the cache back now (the VM ends); frames the service refused. */
uint64_t pool_client_drain(struct pool_client *c);
/* Frames in the cache; frames the service refused back (a bug if not 0). */
uint64_t pool_client_cached(struct pool_client *c);
uint64_t pool_client_refused(struct pool_client *c);

#endif
