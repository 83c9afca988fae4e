// SPDX-License-Identifier: GPL-2.0
/*
 * Workload generator. Time advances one tick per step; a step frees what
 * has expired and, while the pool is below its (swinging) target, makes
 * one allocation. The type of each allocation is drawn towards the
 * profile's target mix of live memory, so long-lived unmovable memory
 * neither vanishes nor piles up; lifetimes are exponential per type.
 * The ID of a freed allocation is given to a later one (last freed,
 * first reused), so IDs stay below the most allocations ever live at
 * once plus those waiting for their expiry: the generator's state and
 * the replay's tables by ID grow with the live set, not the run's length.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bigmem.h"
#include "bench/prng.h"
#include "bench/workload.h"

static const struct wl_profile profiles[] = {
	{
		.name = "default",
		.desc = "mixed host: ~90% full, 7% unmovable, 20% reclaimable, churning",
		.occupancy = 0.90, .swing = 0.06,
		.share = { 0.07, 0.20, 0.73 },
		.life = { 4.0, 0.6, 1.2 },
		.permanent = { 0.3, 0.0, 0.05 },
		.order_w = { { 60, 20, 12, 8 }, { 70, 15, 10, 5 }, { 70, 15, 10, 5 } },
		.churn = 4.0,
	},
	{
		.name = "vmhost",
		.desc = "VMs start and stop in bursts; device rings pinned; VMM caches",
		.occupancy = 0.85, .swing = 0.10,
		.share = { 0.05, 0.15, 0.80 },
		.life = { 3.0, 0.5, 1.0 },
		.permanent = { 0.3, 0.0, 0.0 },
		.order_w = { { 50, 20, 20, 10 }, { 60, 20, 15, 5 }, { 85, 5, 5, 5 } },
		.churn = 4.0, .burst = 2000, .reclaim_every = 50,
	},
	{
		.name = "nearfull",
		.desc = "95% full of churning movable pages; unmovable arrives late",
		.occupancy = 0.95, .swing = 0.0,
		.share = { 0.05, 0.05, 0.90 },
		.life = { 8.0, 0.5, 0.7 },
		.permanent = { 0.9, 0.0, 0.0 },
		.order_w = { { 100, 0, 0, 0 }, { 100, 0, 0, 0 }, { 100, 0, 0, 0 } },
		.churn = 3.0, .unmovable_start = 0.6,
	},
	/*
	 * Near-full hosts (issue 12): movable order-0/1 pages churn in a
	 * pool 93-97% full while unmovable (orders 0-2) and reclaimable
	 * order-0 allocations keep arriving from the start, and the
	 * reclaimable cache is cut by half now and then. They differ in
	 * occupancy, the U:R mix, orders and lifetimes, so that a policy
	 * tuned to one of them shows on the others.
	 */
	{
		.name = "nearfull-churn",
		.desc = "issue 12's load: 97% full, M 0-1 churn; U 0-2 and R 0 keep arriving, R halved",
		.occupancy = 0.97, .swing = 0.0,
		.share = { 0.05, 0.06, 0.89 },
		.life = { 0.3, 0.5, 0.5 },
		.permanent = { 0.2, 0.0, 0.0 },
		.order_w = { { 20, 30, 50, 0 }, { 100, 0, 0, 0 }, { 20, 80, 0, 0 } },
		.churn = 4.0, .rhalf_every = 15, .ramp = 1.0,
	},
	{
		.name = "nearfull-hi",
		.desc = "97% full, U long-lived and growing from 20% of the run, few R",
		.occupancy = 0.97, .swing = 0.0,
		.share = { 0.03, 0.03, 0.94 },
		.life = { 3.0, 0.5, 0.5 },
		.permanent = { 0.6, 0.0, 0.0 },
		.order_w = { { 50, 30, 20, 0 }, { 100, 0, 0, 0 }, { 60, 40, 0, 0 } },
		.churn = 4.0, .unmovable_start = 0.2, .rhalf_every = 25, .ramp = 0.6,
	},
	{
		.name = "nearfull-umix",
		.desc = "93% full, unmovable-heavy (U:R 3:1), U order 2 common and short-lived",
		.occupancy = 0.93, .swing = 0.0,
		.share = { 0.06, 0.02, 0.92 },
		.life = { 0.5, 0.8, 0.4 },
		.permanent = { 0.2, 0.0, 0.0 },
		.order_w = { { 30, 20, 50, 0 }, { 100, 0, 0, 0 }, { 70, 30, 0, 0 } },
		.churn = 4.0, .unmovable_start = 0.2, .rhalf_every = 30, .ramp = 0.8,
	},
	{
		.name = "nearfull-rchurn",
		.desc = "94% full, reclaimable-heavy cache (10%) halved often, U 0-2 trickles in",
		.occupancy = 0.94, .swing = 0.0,
		.share = { 0.02, 0.10, 0.88 },
		.life = { 2.0, 1.5, 0.5 },
		.permanent = { 0.4, 0.0, 0.0 },
		.order_w = { { 60, 25, 15, 0 }, { 100, 0, 0, 0 }, { 40, 60, 0, 0 } },
		.churn = 4.0, .rhalf_every = 10, .ramp = 1.0,
	},
	{
		.name = "nearfull-late",
		.desc = "95% full; U and R arrive in a rush after half the run, then churn",
		.occupancy = 0.95, .swing = 0.0,
		.share = { 0.04, 0.05, 0.91 },
		.life = { 0.5, 0.4, 0.6 },
		.permanent = { 0.3, 0.0, 0.0 },
		.order_w = { { 40, 30, 30, 0 }, { 100, 0, 0, 0 }, { 50, 50, 0, 0 } },
		.churn = 4.0, .unmovable_start = 0.5, .rhalf_every = 20, .ramp = 0.2,
	},
};

#define NR_PROFILES (sizeof(profiles) / sizeof(profiles[0]))

const struct wl_profile *wl_profile_find(const char *name)
{
	for (size_t i = 0; i < NR_PROFILES; i++)
		if (!strcmp(profiles[i].name, name))
			return &profiles[i];
	return NULL;
}

const struct wl_profile *wl_profile_at(unsigned int i)
{
	return i < NR_PROFILES ? &profiles[i] : NULL;
}

/*
 * Pending frees wait in a calendar queue: one bucket per span of ticks
 * of the run, each a list of 1 KiB chunks, so a free costs one append
 * and a pop reads its bucket in order, where a binary heap over tens of
 * millions of entries took log n misses per pop. An entry is one word:
 * the tick's offset in its bucket above the ID. Frees come out in tick
 * order, and in a fixed order within a tick, whatever the bucket size: a
 * bucket is counting-sorted (stably) by offset when its span begins, and
 * frees due within the current span go to a small heap.
 * A span is a power of two near a turnover / SPANS_PER_TURNOVER ticks:
 * few buckets (hundreds, some thousands at 256 GiB) keep what appends touch,
 * each bucket's header and the line being filled, in the cache, and
 * the sort's counters and a bucket's sorted entries stay small beside
 * the pool (a run's state grows with its live allocations). A chunk's
 * entries are read in a run, so only one miss in CHUNK_ENTRIES chases the
 * link to the next chunk. Every chunk of a bucket but its tail is full.
 */
#define SPANS_PER_TURNOVER	64.0
#define SPAN_BITS_MIN	8
#define SPAN_BITS_MAX	16
#define ID_BITS		40
#define ID_MASK		((1ULL << ID_BITS) - 1)
#define CHUNK_ENTRIES	127u
#define NO_CHUNK	UINT32_MAX

struct chunk {
	uint32_t next;
	uint32_t pad;		/* a chunk is 1 KiB */
	uint64_t e[CHUNK_ENTRIES];
};

struct bucket {
	uint32_t head, tail;
	uint32_t tail_nr;	/* entries in the tail chunk */
	uint32_t nr_chunks;
};

#define EMPTY_BUCKET	((struct bucket){ NO_CHUNK, NO_CHUNK, 0, 0 })

struct queue {
	struct bucket *buckets;
	uint64_t nr_buckets;
	uint64_t cur;			/* the bucket whose span we are in */
	struct chunk *chunks;		/* arena; freed chunks on a list */
	uint32_t nr_chunks, cap_chunks, free_chunk;
	uint64_t *due;			/* the current bucket, sorted */
	size_t nr_due, pos_due, cap_due, max_due;
	uint64_t *near;			/* min-heap: due within this span */
	size_t nr_near, cap_near, max_near;
	unsigned int span_bits;		/* a bucket spans 1 << span_bits ticks */
	uint32_t *count;		/* a counter per tick of a span, for the sort */
};

struct gen {
	const struct wl_profile *p;
	struct prng rng;
	wl_sink sink;
	wl_hint hint;
	void *ctx;
	struct queue q;
	uint8_t *info;		/* per id: INFO_* bits, order in 4-5, type in 0-1 */
	uint64_t nr_ids, cap_ids;
	uint32_t *spare;	/* IDs free for reuse, the last freed on top */
	size_t nr_spare, cap_spare, max_spare;
	uint64_t live[MIGRATE_TYPES];
	uint64_t live_total;
	double turnover;	/* ticks for the pool to turn over once */
};

#define INFO_LIVE	0x80
#define INFO_QUEUED	0x40	/* its expiry is in the queue */

static uint64_t span_of(const struct queue *q)
{
	return 1ULL << q->span_bits;
}

static int queue_init(struct queue *q, uint64_t end, double turnover)
{
	q->span_bits = SPAN_BITS_MIN;
	while (q->span_bits < SPAN_BITS_MAX &&
	       (double)(2ULL << q->span_bits) <= turnover / SPANS_PER_TURNOVER)
		q->span_bits++;
	q->nr_buckets = (end >> q->span_bits) + 1;
	q->buckets = bigmem_alloc(q->nr_buckets * sizeof(*q->buckets));
	q->count = calloc(span_of(q), sizeof(*q->count));
	if (!q->buckets || !q->count)
		return -ENOMEM;
	for (uint64_t b = 0; b < q->nr_buckets; b++)
		q->buckets[b] = EMPTY_BUCKET;
	q->free_chunk = NO_CHUNK;
	return 0;
}

static void queue_destroy(struct queue *q)
{
	bigmem_free(q->buckets, q->nr_buckets * sizeof(*q->buckets));
	bigmem_free(q->chunks, (size_t)q->cap_chunks * sizeof(*q->chunks));
	free(q->due);
	free(q->near);
	free(q->count);
}

static int chunk_new(struct queue *q, uint32_t *out)
{
	uint32_t c = q->free_chunk;

	if (c != NO_CHUNK) {
		q->free_chunk = q->chunks[c].next;
	} else {
		if (q->nr_chunks == q->cap_chunks) {
			uint32_t cap = q->cap_chunks ? q->cap_chunks * 2 : 1024;
			struct chunk *n;

			if (cap <= q->cap_chunks || cap == NO_CHUNK)
				return -E2BIG;
			n = bigmem_grow(q->chunks, (size_t)q->cap_chunks * sizeof(*n),
					(size_t)cap * sizeof(*n));
			if (!n)
				return -ENOMEM;
			q->chunks = n;
			q->cap_chunks = cap;
		}
		c = q->nr_chunks++;
	}
	q->chunks[c].next = NO_CHUNK;
	*out = c;
	return 0;
}

static int grow_u64(uint64_t **v, size_t *cap, size_t need)
{
	size_t n = *cap ? *cap : 1024;
	uint64_t *p;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	p = realloc(*v, n * sizeof(*p));
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = n;
	return 0;
}

static int near_push(struct queue *q, uint64_t key)
{
	size_t i;
	int ret = grow_u64(&q->near, &q->cap_near, q->nr_near + 1);

	if (ret)
		return ret;
	if (q->nr_near + 1 > q->max_near)
		q->max_near = q->nr_near + 1;
	for (i = q->nr_near++; i && q->near[(i - 1) / 2] > key; i = (i - 1) / 2)
		q->near[i] = q->near[(i - 1) / 2];
	q->near[i] = key;
	return 0;
}

static uint64_t near_pop(struct queue *q)
{
	uint64_t top = q->near[0], last = q->near[--q->nr_near];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= q->nr_near)
			break;
		if (c + 1 < q->nr_near && q->near[c + 1] < q->near[c])
			c++;
		if (q->near[c] >= last)
			break;
		q->near[i] = q->near[c];
		i = c;
	}
	if (q->nr_near)
		q->near[i] = last;
	return top;
}

static int queue_push(struct queue *q, uint64_t tick, uint64_t id)
{
	uint64_t b = tick >> q->span_bits;
	uint64_t key = (tick & (span_of(q) - 1)) << ID_BITS | id;
	struct bucket *bk;
	uint32_t c;
	int ret;

	if (id > ID_MASK || b >= q->nr_buckets)
		return -E2BIG;
	if (b == q->cur)
		return near_push(q, key);
	bk = &q->buckets[b];
	if (bk->tail == NO_CHUNK || bk->tail_nr == CHUNK_ENTRIES) {
		ret = chunk_new(q, &c);
		if (ret)
			return ret;
		if (bk->tail == NO_CHUNK)
			bk->head = c;
		else
			q->chunks[bk->tail].next = c;
		bk->tail = c;
		bk->tail_nr = 0;
		bk->nr_chunks++;
	}
	q->chunks[bk->tail].e[bk->tail_nr++] = key;
	return 0;
}

/* Entries in chunk @c of bucket @bk. */
static uint32_t chunk_nr(const struct bucket *bk, uint32_t c)
{
	return c == bk->tail ? bk->tail_nr : CHUNK_ENTRIES;
}

/*
 * Bucket @b's span begins: its entries are sorted stably by tick offset
 * into q->due, and its chunks go back to the list.
 */
static int queue_enter(struct queue *q, uint64_t b)
{
	struct bucket *bk = &q->buckets[b];
	size_t n, sum = 0;
	int ret;

	q->cur = b;
	q->nr_due = q->pos_due = 0;
	if (bk->head == NO_CHUNK)
		return 0;
	n = (size_t)(bk->nr_chunks - 1) * CHUNK_ENTRIES + bk->tail_nr;
	ret = grow_u64(&q->due, &q->cap_due, n);
	if (ret)
		return ret;
	if (n > q->max_due)
		q->max_due = n;
	memset(q->count, 0, span_of(q) * sizeof(*q->count));
	for (uint32_t c = bk->head; c != NO_CHUNK; c = q->chunks[c].next)
		for (uint32_t i = 0; i < chunk_nr(bk, c); i++)
			q->count[q->chunks[c].e[i] >> ID_BITS]++;
	for (uint32_t off = 0; off < span_of(q); off++) {
		size_t k = q->count[off];

		q->count[off] = (uint32_t)sum;
		sum += k;
	}
	for (uint32_t c = bk->head, next; c != NO_CHUNK; c = next) {
		for (uint32_t i = 0; i < chunk_nr(bk, c); i++)
			q->due[q->count[q->chunks[c].e[i] >> ID_BITS]++] = q->chunks[c].e[i];
		next = q->chunks[c].next;
		q->chunks[c].next = q->free_chunk;
		q->free_chunk = c;
	}
	*bk = EMPTY_BUCKET;
	q->nr_due = n;
	return 0;
}

/* The next ID due at or before @tick, in tick order; false: none. */
static bool queue_pop_due(struct queue *q, uint64_t tick, uint64_t *id)
{
	uint64_t limit = (tick & (span_of(q) - 1)) << ID_BITS | ID_MASK, key;
	bool from_due = q->pos_due < q->nr_due;

	if (q->nr_near && (!from_due || q->near[0] < q->due[q->pos_due]))
		from_due = false;
	else if (!from_due)
		return false;
	key = from_due ? q->due[q->pos_due] : q->near[0];
	if (key > limit)
		return false;
	if (from_due)
		q->pos_due++;
	else
		near_pop(q);
	*id = key & ID_MASK;
	return true;
}

static int emit(struct gen *g, enum trace_op op, uint64_t id)
{
	struct trace_event ev = { .op = op, .id = id };

	if (op == TRACE_ALLOC) {
		ev.order = (g->info[id] >> 4) & 3;
		ev.mt = g->info[id] & 3;
	}
	return g->sink(g->ctx, &ev);
}

static void forget(struct gen *g, uint64_t id)
{
	uint8_t info = g->info[id];
	uint64_t pages = 1UL << ((info >> 4) & 3);

	g->info[id] = info & ~INFO_LIVE;
	g->live[info & 3] -= pages;
	g->live_total -= pages;
}

/*
 * A dead ID may be handed out again once no queue entry names it: the
 * entry would otherwise free the ID's next allocation. The replay has let
 * go of it by then (freed, or dropped by a reclaim event).
 */
static int recycle(struct gen *g, uint64_t id)
{
	if (g->info[id] & (INFO_LIVE | INFO_QUEUED))
		return 0;
	if (g->nr_spare == g->cap_spare) {
		size_t cap = g->cap_spare ? 2 * g->cap_spare : 65536;
		uint32_t *v = bigmem_grow(g->spare, g->cap_spare * sizeof(*v),
					  cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		g->spare = v;
		g->cap_spare = cap;
	}
	g->spare[g->nr_spare++] = (uint32_t)id;
	if (g->nr_spare > g->max_spare)
		g->max_spare = g->nr_spare;
	return 0;
}

/* The ID the next allocation takes, without taking it. */
static uint64_t id_ahead(const struct gen *g, size_t ahead)
{
	if (ahead < g->nr_spare)
		return g->spare[g->nr_spare - 1 - ahead];
	return g->nr_ids + (ahead - g->nr_spare);
}

/*
 * The frees due next are known: each costs a few cache misses (its ID's
 * byte here, the replay's slot, the frame's metadata, its neighbours on
 * a list), each found through the one before, so ask for them HINT_FAR,
 * HINT_NEAR and HINT_LINKS frees ahead, overlapping the misses.
 */
#define HINT_FAR	16
#define HINT_NEAR	8
#define HINT_LINKS	4

static void hint_ahead(struct gen *g)
{
	struct queue *q = &g->q;
	size_t far = q->pos_due + HINT_FAR, near = q->pos_due + HINT_NEAR;
	size_t links = q->pos_due + HINT_LINKS;

	if (!g->hint)
		return;
	if (far < q->nr_due) {
		uint64_t id = q->due[far] & ID_MASK;

		__builtin_prefetch(&g->info[id], 1);
		g->hint(g->ctx, id, 0);
	}
	if (near < q->nr_due)
		g->hint(g->ctx, q->due[near] & ID_MASK, 1);
	if (links < q->nr_due)
		g->hint(g->ctx, q->due[links] & ID_MASK, 2);
}

static int free_expired(struct gen *g, uint64_t tick)
{
	uint64_t id;
	int ret;

	if (tick >> g->q.span_bits != g->q.cur || tick == 0) {
		ret = queue_enter(&g->q, tick >> g->q.span_bits);
		if (ret)
			return ret;
	}
	while (queue_pop_due(&g->q, tick, &id)) {
		hint_ahead(g);
		g->info[id] &= ~INFO_QUEUED;
		if (g->info[id] & INFO_LIVE) {	/* else freed or reclaimed meanwhile */
			forget(g, id);
			ret = emit(g, TRACE_FREE, id);
			if (ret)
				return ret;
		}
		ret = recycle(g, id);
		if (ret)
			return ret;
	}
	return 0;
}

static unsigned int pick_order(struct gen *g, enum mm_migratetype mt)
{
	const unsigned int *w = g->p->order_w[mt];
	uint64_t r = prng_below(&g->rng, w[0] + w[1] + w[2] + w[3]);
	unsigned int o = 0;

	while (o < 3 && r >= w[o])
		r -= w[o++];
	return o;
}

/*
 * The share of live memory type @t aims at @done (0..1) through the run.
 * With a ramp, unmovable and reclaimable memory keep arriving: their
 * targets grow from nothing (unmovable: from its start) over the first
 * @ramp of the run, and movable memory, churning, gives way to them.
 */
static double share_now(const struct gen *g, int t, double done)
{
	double start = t == MIGRATE_UNMOVABLE ? g->p->unmovable_start : 0.0;

	if (!g->p->ramp || t == MIGRATE_MOVABLE)
		return g->p->share[t];
	return g->p->share[t] * fmin(1.0, fmax(0.0, done - start) / g->p->ramp);
}

/* Draw towards the target mix: weight = how far a type is below target. */
static enum mm_migratetype pick_type(struct gen *g, double target, bool allow_u,
				     double done)
{
	double w[MIGRATE_TYPES], sum = 0, r;
	int t;

	for (t = 0; t < MIGRATE_TYPES; t++) {
		double want = share_now(g, t, done) * target;

		w[t] = fmax(0.0, want - (double)g->live[t]) + 0.001 * want;
		if (t == MIGRATE_UNMOVABLE && !allow_u)
			w[t] = 0;
		sum += w[t];
	}
	r = prng_unit(&g->rng) * sum;
	for (t = 0; t < MIGRATE_TYPES - 1 && r >= w[t]; t++)
		r -= w[t];
	return t;
}

static uint64_t lifetime(struct gen *g, enum mm_migratetype mt, uint64_t tick,
			 uint64_t end)
{
	uint64_t life, expiry;

	if (prng_unit(&g->rng) < g->p->permanent[mt])
		return UINT64_MAX;
	life = 1 + (uint64_t)prng_exp(&g->rng, g->p->life[mt] * g->turnover);
	expiry = tick + life;
	if (mt == MIGRATE_MOVABLE && g->p->burst)
		expiry = (expiry / g->p->burst + 1) * g->p->burst;
	return expiry >= end ? UINT64_MAX : expiry;
}

static int allocate_one(struct gen *g, uint64_t tick, uint64_t end,
			double target, bool allow_u)
{
	enum mm_migratetype mt = pick_type(g, target, allow_u,
					   (double)tick / (double)end);
	unsigned int order = pick_order(g, mt);
	uint64_t id, expiry;
	int ret;

	if (!g->nr_spare && g->nr_ids == g->cap_ids) {
		uint64_t cap = g->cap_ids ? 2 * g->cap_ids : 65536;
		uint8_t *info;

		if (cap > UINT32_MAX)	/* the spare list holds 32-bit IDs */
			return -E2BIG;
		info = bigmem_grow(g->info, g->cap_ids, cap);
		if (!info)
			return -ENOMEM;
		g->info = info;
		g->cap_ids = cap;
	}
	id = g->nr_spare ? g->spare[--g->nr_spare] : g->nr_ids++;
	if (g->hint)	/* the slot an allocation a few ahead will take */
		g->hint(g->ctx, id_ahead(g, HINT_FAR), 0);
	g->info[id] = INFO_LIVE | (uint8_t)(order << 4) | (uint8_t)mt;
	g->live[mt] += 1UL << order;
	g->live_total += 1UL << order;
	ret = emit(g, TRACE_ALLOC, id);
	if (ret)
		return ret;
	expiry = lifetime(g, mt, tick, end);
	if (expiry == UINT64_MAX)
		return 0;
	g->info[id] |= INFO_QUEUED;
	return queue_push(&g->q, expiry, id);
}

/*
 * The reclaimable owner shrinks: each live reclaimable allocation goes
 * with probability 1/2, freed by the owner itself ('f'), so the holes it
 * leaves are scattered over every block reclaimable memory sits in.
 */
static int free_half_reclaimable(struct gen *g)
{
	int ret = 0;

	for (uint64_t id = 0; id < g->nr_ids && !ret; id++) {
		if (!(g->info[id] & INFO_LIVE) ||
		    (g->info[id] & 3) != MIGRATE_RECLAIMABLE ||
		    prng_below(&g->rng, 2))
			continue;
		forget(g, id);
		ret = emit(g, TRACE_FREE, id);
		if (!ret)
			ret = recycle(g, id);
	}
	return ret;
}

/* After 'r' the replay holds no reclaimable ID: each may be reused. */
static int reclaim_all(struct gen *g)
{
	int ret = emit(g, TRACE_RECLAIM, 0);

	for (uint64_t id = 0; id < g->nr_ids && !ret; id++) {
		if ((g->info[id] & INFO_LIVE) &&
		    (g->info[id] & 3) == MIGRATE_RECLAIMABLE) {
			forget(g, id);
			ret = recycle(g, id);
		}
	}
	return ret;
}

/*
 * The target swings once a turnover: it is computed TARGET_STEPS times a
 * turnover, not for each of a big pool's hundreds of millions of ticks.
 */
#define TARGET_STEPS	65536.0

static double target_at(const struct gen *g, uint64_t tick, uint64_t pool_pages)
{
	double phase = (double)tick / g->turnover;
	double dip = g->p->swing * 0.5 * (1.0 - cos(2.0 * M_PI * phase));

	return (g->p->occupancy - dip) * (double)pool_pages;
}

static int run(struct gen *g, uint64_t pool_pages)
{
	uint64_t end = (uint64_t)((1.0 + g->p->churn) * g->turnover);
	uint64_t u_start = (uint64_t)(g->p->unmovable_start * (double)end);
	uint64_t reclaim = g->p->reclaim_every ?
		(uint64_t)(g->turnover * g->p->reclaim_every / 100.0) : 0;
	uint64_t rhalf = g->p->rhalf_every ?
		(uint64_t)(g->turnover * g->p->rhalf_every / 100.0) : 0;
	uint64_t every = (uint64_t)fmax(1.0, g->turnover / TARGET_STEPS);
	int ret = queue_init(&g->q, end, g->turnover);
	double target = 0;

	for (uint64_t tick = 0; tick < end && !ret; tick++) {
		if (tick % every == 0)
			target = target_at(g, tick, pool_pages);

		ret = free_expired(g, tick);
		if (!ret && reclaim && tick && tick % reclaim == 0)
			ret = reclaim_all(g);
		if (!ret && rhalf && tick && tick % rhalf == 0)
			ret = free_half_reclaimable(g);
		/* room for a few per tick, so frees never outrun allocation */
		for (int k = 0; k < 4 && !ret && (double)g->live_total + 8 <= target; k++)
			ret = allocate_one(g, tick, end, target, tick >= u_start);
	}
	return ret;
}

/*
 * The most the tables held: memory is taken as it is first written, so
 * what counts is each table's high-water mark, not its reserved size.
 */
static size_t state_bytes(const struct gen *g)
{
	const struct queue *q = &g->q;

	return g->nr_ids + g->max_spare * sizeof(*g->spare) +
	       q->nr_buckets * sizeof(*q->buckets) +
	       (size_t)q->nr_chunks * sizeof(*q->chunks) +
	       (q->max_due + q->max_near) * sizeof(uint64_t) +
	       span_of(q) * sizeof(*q->count);
}

int wl_generate(const struct wl_profile *p, uint64_t pool_pages, uint64_t seed,
		wl_sink sink, wl_hint hint, void *ctx, size_t *state)
{
	struct gen g = { .p = p, .sink = sink, .hint = hint, .ctx = ctx };
	int ret;

	prng_seed(&g.rng, seed);
	/* Allocations average ~1.7 pages: the pool turns over in this many. */
	g.turnover = p->occupancy * (double)pool_pages / 1.7;
	ret = run(&g, pool_pages);
	if (state)
		*state = state_bytes(&g);
	queue_destroy(&g.q);
	bigmem_free(g.info, g.cap_ids);
	bigmem_free(g.spare, g.cap_spare * sizeof(*g.spare));
	return ret;
}
