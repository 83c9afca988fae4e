/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The pool service's wire protocol (vmm/pool_service/pool_service.c serves it,
 * vmm/pool_service/pool_client.c speaks it). Unix SOCK_SEQPACKET: one message is one
 * datagram, so a message arrives whole or not at all and a short or
 * oversized one is refused by its length alone, never half-parsed.
 *
 * A VM process connects and sends HELLO with its callback socket (one end
 * of a socketpair, SCM_RIGHTS). From then on the VM process asks on the
 * connection (ALLOC, FREE, ...: one request, one reply) and the service
 * asks on the callback socket (MIGRATE: move a block where the mapping
 * is). The pool is a file per pageblock (mm/pbfile.c): an ALLOC reply
 * carries the files of the pageblocks its frames are in, a MIGRATE the
 * file of the new block's, and a client is given no other memory. Both sides are the same
 * gpmm binary: HELLO refuses any other protocol version.
 */
#ifndef GPMM_POOL_PROTO_H
#define GPMM_POOL_PROTO_H

#include <stdint.h>

#include "mm/mm.h"

#define POOL_PROTO_VERSION	1
#define POOL_MAX_ITEMS		1024	/* frames, or infos, in one message */
#define POOL_MSG_FDS		8	/* descriptors with one message, at most */
#define POOL_NAME_MAX		64

enum pool_op {
	POOL_HELLO = 1,		/* a: version, ram bytes, (unused), POOL_CLIENT_*; data: name; fds: callback, slow */
	POOL_ALLOC,		/* a: order, count, POOL_ALLOC_* -> frames, pageblocks; a: zeroed, huge, pageblocks; fds: their files */
	POOL_FREE,		/* frames -> a[0]: how many were refused */
	POOL_SPLIT,		/* a[0]: frame */
	POOL_PIN,		/* a[0]: frame */
	POOL_UNPIN,		/* a[0]: frame */
	POOL_PINNED,		/* frames -> ret: pinned, a[0]: unallocated */
	POOL_INFO,		/* frames -> struct pool_wire_info each */
	POOL_STATS,		/* -> struct mm_stats */
	POOL_WALK,		/* a[0]: first pageblock -> struct mm_pageblock_info each */
	POOL_VM_REPORT,		/* data: the VM's report (JSON text); no reply */
	POOL_MIGRATE,		/* service to VM: a: old, new, order; fd: new's pageblock's file */
	POOL_RELEASE,		/* every frame of ours goes back -> a[0]: frames freed */
	POOL_WALK_OWN,		/* a[0]: first pageblock -> struct pool_wire_pb each, ours only */
	POOL_OPS
};

/*
 * What a client is, said in its HELLO (a[3]): a VM process reports on its
 * VM; any other tenant of the pool (gpmm fragmenting-tenant) only holds
 * frames, and the report lists it as that. 0 is a VM: what clients that
 * said nothing were.
 */
#define POOL_CLIENT_VM		0
#define POOL_CLIENT_TENANT	1

#define POOL_ALLOC_NOWAIT	0x1	/* never reclaim or compact */
#define POOL_ALLOC_SPLIT	0x2	/* into order-0 allocations */
#define POOL_ALLOC_PREPARE	0x4	/* a whole pageblock: made huge, zeroed known */

struct pool_msg {
	uint32_t op;
	uint32_t seq;
	int32_t ret;		/* replies: 0 or -errno (or a count) */
	uint32_t n;		/* items in data[] */
	uint64_t a[4];
	uint8_t data[];
};

struct pool_wire_info {
	uint8_t state;
	uint8_t order;
	uint8_t mt;
	uint8_t pins;
	uint32_t owner;
};

/* One of the client's own pageblocks (POOL_WALK_OWN). */
struct pool_wire_pb {
	uint64_t pb;
	struct mm_pageblock_info info;
};

/* The largest message: a report of a VM, or a batch of items. */
#define POOL_MSG_MAX		(sizeof(struct pool_msg) + (64U << 10))
/* Pageblocks of a client's own in one reply: fewer say there are no more. */
#define POOL_OWN_ITEMS		((POOL_MSG_MAX - sizeof(struct pool_msg)) / sizeof(struct pool_wire_pb))

/* HELLO's reply, a[]: frames, owner id, host flags, quota in frames; no descriptor. */
#define POOL_HOST_HUGE		(1ULL << 32)	/* a[2]: low 32 bits release_ms */
/* a[2] bits 40-55: the pool's overcommit ratio in % (0 from an older service: 100) */
#define POOL_HOST_OVERCOMMIT_SHIFT	40

#include <sys/types.h>

/* pool_wire.c */
__must_check ssize_t pool_wire_recv(int fd, struct pool_msg *m, size_t cap, int *fds,
				    unsigned int nfd);
__must_check int pool_wire_send(int fd, const struct pool_msg *m, size_t len, const int *fds,
				unsigned int nfd);
/* Wait up to @ms for @fd to be readable: 1, 0 on time-out, -errno. */
__must_check int pool_wire_wait(int fd, int ms);

#endif
