// SPDX-License-Identifier: GPL-2.0
/*
 * Trace parsing and replay. A live allocation whose ID is below the pool's
 * frame count (every ID the built-in workloads make: they reuse the IDs
 * of freed allocations) is kept in two arrays indexed by ID: its frame (4
 * bytes) and its order and type (1 byte), touched only as far as the
 * highest such ID, so the trace's state grows with its live allocations,
 * not with the pool. Wider IDs (trace files) go to an open-addressed table
 * keyed by ID; deletion shifts the following entries back so no
 * tombstones accumulate over long traces.
 * A replay whose allocations have an owner also finds them by frame (the
 * allocator's callbacks name frames): a 4-byte word per frame holds the ID
 * of the allocation that starts there (0.1% of the pool, a quarter of the
 * allocator's metadata); IDs too wide for the word are found through a
 * small table keyed by frame, of the kind above.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "bench/bigmem.h"
#include "bench/trace.h"

#define NO_FRAME	UINT32_MAX	/* the allocation failed, or was reclaimed */
/* id_at[frame]: 0 none, WIDE_ID look in the table at[], else the ID + 1 */
#define WIDE_ID		UINT32_MAX

/* by_id_om[]: bit 7 live; type in bits 4-5, order in bits 0-3 */
#define OM_LIVE		0x80
#define OM(order, mt)	(OM_LIVE | (uint8_t)((unsigned int)(mt) << 4 | (order)))
#define OM_ORDER(v)	((v) & 0xf)
#define OM_MT(v)	(((v) >> 4) & 3)

/* A live allocation of a wide ID (trace files only) */
struct live {
	uint64_t id;
	uint32_t frame;		/* NO_FRAME: holds nothing */
	uint8_t order;
	uint8_t mt;
	uint8_t used;
};

/* frame -> trace ID, for owned allocations; frame NO_FRAME: empty slot */
struct at {
	uint32_t frame;
	uint32_t id_lo;
	uint32_t id_hi;
};

/* One live allocation, wherever it is kept. */
struct ent {
	uint64_t id;
	uint32_t frame;		/* NO_FRAME: holds nothing */
	uint8_t order;
	uint8_t mt;
};

/* Where an allocation is kept: narrow ID @i, or slot @i of the wide table. */
struct ref {
	bool wide;
	size_t i;
};

struct replay {
	struct mm_pool *pool;
	struct mm_pcp *pcp;
	uint32_t *by_id_frame;	/* narrow IDs (below frames): NO_FRAME holds none */
	uint8_t *by_id_om;	/* narrow IDs: OM(), 0 not live */
	uint64_t ids_end;	/* narrow IDs seen are below it */
	struct live *slots;	/* wide IDs; cap a power of two */
	size_t cap;
	size_t nr;
	uint32_t *id_at;	/* by frame: see WIDE_ID */
	uint64_t frames;
	struct replay_counts counts;
	/* live mode */
	bool live;
	struct at *at;		/* wide IDs by frame; at_cap a power of two */
	size_t at_cap;
	size_t at_nr;
	uint8_t *base;		/* the pool memfd, mapped: NULL without one */
	uint32_t owner[MIGRATE_TYPES];
};

static bool id_is_wide(const struct replay *r, uint64_t id)
{
	return id >= r->frames || id >= WIDE_ID - 1;
}

/* Linear probing stays short up to 3/4 full. */
static bool table_full(size_t nr, size_t cap)
{
	return 4 * (nr + 1) > 3 * cap;
}

static size_t hash_slot(uint64_t id, size_t cap)
{
	uint64_t h = id * 0x9e3779b97f4a7c15ULL;

	return (h ^ (h >> 29)) & (cap - 1);
}

static size_t slot_of(const struct replay *r, uint64_t id)
{
	return hash_slot(id, r->cap);
}

static struct live *table_find(struct replay *r, uint64_t id)
{
	for (size_t i = slot_of(r, id);; i = (i + 1) & (r->cap - 1)) {
		if (!r->slots[i].used)
			return NULL;
		if (r->slots[i].id == id)
			return &r->slots[i];
	}
}

static void table_put(struct replay *r, const struct live *e)
{
	size_t i = slot_of(r, e->id);

	while (r->slots[i].used)
		i = (i + 1) & (r->cap - 1);
	r->slots[i] = *e;
	r->slots[i].used = 1;
	r->nr++;
}

static int table_grow(struct replay *r)
{
	struct live *old = r->slots;
	size_t old_cap = r->cap;

	r->cap = old_cap ? old_cap * 2 : 16;
	r->slots = bigmem_alloc(r->cap * sizeof(*r->slots));
	if (!r->slots) {
		r->slots = old;
		r->cap = old_cap;
		return -ENOMEM;
	}
	r->nr = 0;
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].used)
			table_put(r, &old[i]);
	bigmem_free(old, old_cap * sizeof(*old));
	return 0;
}

/* Backward-shift deletion for linear probing. */
static void table_del(struct replay *r, struct live *e)
{
	size_t mask = r->cap - 1;
	size_t hole = (size_t)(e - r->slots);

	for (size_t i = (hole + 1) & mask; r->slots[i].used; i = (i + 1) & mask) {
		size_t home = slot_of(r, r->slots[i].id);

		if (((i - home) & mask) >= ((i - hole) & mask)) {
			r->slots[hole] = r->slots[i];
			hole = i;
		}
	}
	r->slots[hole].used = 0;
	r->nr--;
}

/* Both kinds behind one interface: find, read, re-point, put, delete. */
static bool ent_find(struct replay *r, uint64_t id, struct ref *ref)
{
	struct live *e;

	ref->wide = id_is_wide(r, id);
	if (!ref->wide) {
		ref->i = id;
		return id < r->ids_end && r->by_id_om[id];
	}
	e = table_find(r, id);
	if (e)
		ref->i = (size_t)(e - r->slots);
	return e;
}

static bool ref_used(const struct replay *r, struct ref ref)
{
	return ref.wide ? r->slots[ref.i].used : r->by_id_om[ref.i];
}

static struct ent ent_get(const struct replay *r, struct ref ref)
{
	uint8_t om;

	if (ref.wide) {
		const struct live *l = &r->slots[ref.i];

		return (struct ent){ l->id, l->frame, l->order, l->mt };
	}
	om = r->by_id_om[ref.i];
	return (struct ent){ ref.i, r->by_id_frame[ref.i], OM_ORDER(om), OM_MT(om) };
}

/* @frame (or NO_FRAME) now holds the allocation at @ref. */
static void ref_set_frame(struct replay *r, struct ref ref, uint32_t frame)
{
	if (ref.wide)
		r->slots[ref.i].frame = frame;
	else
		r->by_id_frame[ref.i] = frame;
}

static int ent_room(struct replay *r, uint64_t id)
{
	if (id_is_wide(r, id))
		return table_full(r->nr, r->cap) ? table_grow(r) : 0;
	return 0;
}

/* Room was made by ent_room. */
static void ent_put(struct replay *r, const struct ent *e)
{
	struct live l = { .id = e->id, .frame = e->frame, .order = e->order,
			  .mt = e->mt };

	if (id_is_wide(r, e->id)) {
		table_put(r, &l);
		return;
	}
	r->by_id_frame[e->id] = e->frame;
	r->by_id_om[e->id] = OM(e->order, e->mt);
	if (e->id >= r->ids_end)
		r->ids_end = e->id + 1;
}

static void ref_del(struct replay *r, struct ref ref)
{
	if (ref.wide)
		table_del(r, &r->slots[ref.i]);
	else
		r->by_id_om[ref.i] = 0;
}

/* The frame table: the same scheme, keyed by frame. */
static size_t at_slot_of(const struct replay *r, uint32_t frame)
{
	uint64_t h = (uint64_t)frame * 0x9e3779b97f4a7c15ULL;

	return (h ^ (h >> 29)) & (r->at_cap - 1);
}

static struct at *at_find(struct replay *r, uint32_t frame)
{
	for (size_t i = at_slot_of(r, frame);; i = (i + 1) & (r->at_cap - 1)) {
		if (r->at[i].frame == NO_FRAME)
			return NULL;
		if (r->at[i].frame == frame)
			return &r->at[i];
	}
}

static void at_insert(struct replay *r, uint32_t frame, uint64_t id)
{
	size_t i = at_slot_of(r, frame);

	while (r->at[i].frame != NO_FRAME)
		i = (i + 1) & (r->at_cap - 1);
	r->at[i] = (struct at){ frame, (uint32_t)id, (uint32_t)(id >> 32) };
	r->at_nr++;
}

static int at_grow(struct replay *r)
{
	struct at *old = r->at;
	size_t old_cap = r->at_cap, cap = old_cap ? old_cap * 2 : 1024;
	struct at *at = bigmem_alloc(cap * sizeof(*at));

	if (!at)
		return -ENOMEM;
	for (size_t i = 0; i < cap; i++)
		at[i].frame = NO_FRAME;
	r->at = at;
	r->at_cap = cap;
	r->at_nr = 0;
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].frame != NO_FRAME)
			at_insert(r, old[i].frame, (uint64_t)old[i].id_hi << 32 | old[i].id_lo);
	bigmem_free(old, old_cap * sizeof(*old));
	return 0;
}

static void at_del(struct replay *r, struct at *a)
{
	size_t mask = r->at_cap - 1;
	size_t hole = (size_t)(a - r->at);

	for (size_t i = (hole + 1) & mask; r->at[i].frame != NO_FRAME; i = (i + 1) & mask) {
		size_t home = at_slot_of(r, r->at[i].frame);

		if (((i - home) & mask) >= ((i - hole) & mask)) {
			r->at[hole] = r->at[i];
			hole = i;
		}
	}
	r->at[hole].frame = NO_FRAME;
	r->at_nr--;
}

/* Record that @frame holds @id; room is made before the allocation. */
static void at_set(struct replay *r, uint32_t frame, uint64_t id)
{
	if (!r->live)
		return;
	if (id_is_wide(r, id)) {
		r->id_at[frame] = WIDE_ID;
		at_insert(r, frame, id);
	} else {
		r->id_at[frame] = (uint32_t)id + 1;
	}
}

static void at_clear(struct replay *r, uint32_t frame)
{
	struct at *a;

	if (!r->live)
		return;
	if (r->id_at[frame] == WIDE_ID && (a = at_find(r, frame)))
		at_del(r, a);
	r->id_at[frame] = 0;
}

/* The ID of the allocation starting at @frame; false: none. */
static bool at_get(struct replay *r, uint64_t frame, uint64_t *id)
{
	uint32_t v;
	struct at *a;

	if (!r->live || frame >= r->frames || !(v = r->id_at[frame]))
		return false;
	if (v != WIDE_ID) {
		*id = v - 1;
		return true;
	}
	a = at_find(r, (uint32_t)frame);
	if (a)
		*id = (uint64_t)a->id_hi << 32 | a->id_lo;
	return a;
}

/*
 * The pattern of a page: its first and last words name the allocation and
 * the page, so a copy to the wrong place, a torn copy or a lost page all
 * show up as mismatching bytes. Only a pool with memory behind it has
 * patterns; on a metadata-only pool frames are numbers.
 */
static uint64_t page_tag(uint64_t id, uint64_t page)
{
	return (id + 1) * 0x9e3779b97f4a7c15ULL ^ (page << 40) ^ 0x5a5a;
}

static void pattern_write(struct replay *r, uint64_t frame, unsigned int order,
			  uint64_t id)
{
	for (uint64_t i = 0; r->base && i < (1UL << order); i++) {
		uint64_t *p = (uint64_t *)(r->base + ((frame + i) << MM_PAGE_SHIFT));

		p[0] = page_tag(id, i);
		p[MM_PAGE_SIZE / 8 - 1] = ~page_tag(id, i);
	}
}

static uint64_t bytes_differ(uint64_t a, uint64_t b)
{
	uint64_t n = 0;

	for (uint64_t x = a ^ b; x; x >>= 8)
		n += (x & 0xff) != 0;
	return n;
}

static uint64_t pattern_check(struct replay *r, uint64_t frame,
			      unsigned int order, uint64_t id)
{
	uint64_t bad = 0;

	for (uint64_t i = 0; r->base && i < (1UL << order); i++) {
		const uint64_t *p = (const uint64_t *)(r->base + ((frame + i) << MM_PAGE_SHIFT));

		bad += bytes_differ(p[0], page_tag(id, i));
		bad += bytes_differ(p[MM_PAGE_SIZE / 8 - 1], ~page_tag(id, i));
	}
	return bad;
}

static void pattern_copy(struct replay *r, uint64_t old, uint64_t new, unsigned int order)
{
	if (r->base)
		memcpy(r->base + (new << MM_PAGE_SHIFT), r->base + (old << MM_PAGE_SHIFT),
		       MM_PAGE_SIZE << order);
}

void replay_prefetch(struct replay *r, uint64_t id, int stage)
{
	if (id_is_wide(r, id) || id >= r->ids_end)
		return;
	if (stage == 0) {
		__builtin_prefetch(&r->by_id_frame[id], 1);
		__builtin_prefetch(&r->by_id_om[id], 1);
		return;
	}
	if (!r->by_id_om[id] || r->by_id_frame[id] == NO_FRAME)
		return;
	if (stage == 1) {
		mm_prefetch(r->pool, r->by_id_frame[id]);
		return;
	}
	mm_prefetch_links(r->pool, r->by_id_frame[id]);
	/* a freed frame is the next one its per-thread list hands out */
	if (r->id_at)
		__builtin_prefetch(&r->id_at[r->by_id_frame[id]], 1);
}

/* The allocation that starts at @frame, owned (live mode). */
static bool ref_of_frame(struct replay *r, uint64_t frame, struct ref *ref,
			 struct ent *e)
{
	uint64_t id;

	if (!at_get(r, frame, &id) || !ent_find(r, id, ref))
		return false;
	*e = ent_get(r, *ref);
	return e->frame == frame;
}

/* The moved-to frame takes the moved-from one's place in the frame table. */
static int replay_migrate(void *priv, uint64_t old, uint64_t new, unsigned int order)
{
	struct replay *r = priv;
	struct ref ref;
	struct ent e;

	if (!ref_of_frame(r, old, &ref, &e) || e.order != order)
		return -ENOENT;
	r->counts.corrupted_bytes += pattern_check(r, old, order, e.id);
	pattern_copy(r, old, new, order);
	at_clear(r, (uint32_t)old);
	at_set(r, (uint32_t)new, e.id);
	ref_set_frame(r, ref, (uint32_t)new);
	r->counts.migrated_pages += 1UL << order;
	return 0;
}

static int replay_reclaim(void *priv, uint64_t frame, unsigned int order)
{
	struct replay *r = priv;
	struct ref ref;
	struct ent e;

	if (!ref_of_frame(r, frame, &ref, &e) || e.order != order)
		return -ENOENT;
	r->counts.corrupted_bytes += pattern_check(r, frame, order, e.id);
	r->counts.live_pages[e.mt] -= 1UL << order;
	r->counts.reclaimed_pages += 1UL << order;
	at_clear(r, (uint32_t)frame);
	/* the trace may still free it: keep the ID, like a failed allocation */
	ref_set_frame(r, ref, NO_FRAME);
	return 0;
}

static const struct mm_owner_ops movable_ops = { .migrate = replay_migrate };
static const struct mm_owner_ops reclaimable_ops = {
	.migrate = replay_migrate, .reclaim = replay_reclaim,
};

/*
 * A pool with memory gets patterns, written through a view of its memfd;
 * a metadata-only pool (no memfd) is never touched.
 */
static int replay_go_live(struct replay *r)
{
	uint64_t frames = mm_pool_frames(r->pool);
	int ret;

	if (mm_pool_fd(r->pool) >= 0) {
		r->base = mmap(NULL, frames << MM_PAGE_SHIFT, PROT_READ | PROT_WRITE,
			       MAP_SHARED, mm_pool_fd(r->pool), 0);
		if (r->base == MAP_FAILED) {
			r->base = NULL;
			return -errno;
		}
	}
	r->id_at = bigmem_alloc(frames * sizeof(*r->id_at));
	ret = r->id_at ? at_grow(r) : -ENOMEM;
	if (!ret)
		ret = mm_owner_register(r->pool, &movable_ops, r, &r->owner[MIGRATE_MOVABLE]);
	if (!ret)
		ret = mm_owner_register(r->pool, &reclaimable_ops, r,
					&r->owner[MIGRATE_RECLAIMABLE]);
	r->live = !ret;
	return ret;
}

int replay_create(struct mm_pool *pool, struct mm_pcp *pcp, bool live,
		  struct replay **out)
{
	struct replay *r = calloc(1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	r->pool = pool;
	r->pcp = pcp;
	r->frames = mm_pool_frames(pool);
	r->by_id_frame = bigmem_alloc(r->frames * sizeof(*r->by_id_frame));
	r->by_id_om = bigmem_alloc(r->frames);
	if (!r->by_id_frame || !r->by_id_om || table_grow(r) ||
	    (live && replay_go_live(r))) {
		replay_destroy(r);
		return -ENOMEM;
	}
	*out = r;
	return 0;
}

/* Each slot of the narrow table, then of the wide one, in table order. */
#define for_each_ref(r, ref)						\
	for (ref = (struct ref){ false, 0 };				\
	     ref.i < (ref.wide ? (r)->cap : (r)->ids_end) ||		\
	     (!ref.wide && ((ref = (struct ref){ true, 0 }), ref.i < (r)->cap)); \
	     ref.i++)

uint64_t replay_verify(struct replay *r)
{
	uint64_t bad = 0;
	struct ref ref;

	if (!r->base)
		return 0;
	for_each_ref(r, ref) {
		struct ent e;

		if (!ref_used(r, ref))
			continue;
		e = ent_get(r, ref);
		if (e.frame != NO_FRAME)
			bad += pattern_check(r, e.frame, e.order, e.id);
	}
	return bad;
}

bool replay_checks_contents(const struct replay *r)
{
	return r->base;
}

size_t replay_table_bytes(const struct replay *r)
{
	return r->ids_end * (sizeof(*r->by_id_frame) + sizeof(*r->by_id_om)) +
	       r->cap * sizeof(*r->slots) + r->at_cap * sizeof(*r->at);
}

size_t replay_frame_table_bytes(const struct replay *r)
{
	return r->id_at ? r->frames * sizeof(*r->id_at) : 0;
}

void replay_destroy(struct replay *r)
{
	if (!r)
		return;
	for (int t = 0; t < MIGRATE_TYPES; t++)
		if (r->owner[t])
			mm_owner_unregister(r->pool, r->owner[t]);
	if (r->base)
		munmap(r->base, mm_pool_frames(r->pool) << MM_PAGE_SHIFT);
	bigmem_free(r->at, r->at_cap * sizeof(*r->at));
	bigmem_free(r->id_at, r->frames * sizeof(*r->id_at));
	bigmem_free(r->slots, r->cap * sizeof(*r->slots));
	bigmem_free(r->by_id_frame, r->frames * sizeof(*r->by_id_frame));
	bigmem_free(r->by_id_om, r->frames);
	free(r);
}

const struct replay_counts *replay_counts(const struct replay *r)
{
	return &r->counts;
}

static int replay_alloc(struct replay *r, const struct trace_event *ev,
			char *err, size_t errlen)
{
	struct ent e = { .id = ev->id, .order = ev->order, .mt = ev->mt };
	struct ref ref;
	long frame;

	if (ent_find(r, ev->id, &ref)) {
		snprintf(err, errlen, "id %" PRIu64 " is already allocated", ev->id);
		return -EINVAL;
	}
	if (ent_room(r, ev->id) ||
	    (r->live && id_is_wide(r, ev->id) && table_full(r->at_nr, r->at_cap) &&
	     at_grow(r))) {
		snprintf(err, errlen, "out of memory for the trace table");
		return -ENOMEM;
	}
	frame = mm_alloc(r->pool, r->pcp, ev->order, ev->mt, r->owner[ev->mt]);
	e.frame = frame < 0 ? NO_FRAME : (uint32_t)frame;
	if (frame < 0) {
		r->counts.alloc_failed++;
	} else {
		r->counts.live_pages[ev->mt] += 1UL << ev->order;
		pattern_write(r, (uint64_t)frame, ev->order, ev->id);
		at_set(r, (uint32_t)frame, ev->id);
	}
	r->counts.allocs++;
	ent_put(r, &e);
	return 0;
}

static int release(struct replay *r, struct ref ref)
{
	struct ent e = ent_get(r, ref);
	int ret = 0;

	if (e.frame != NO_FRAME) {
		r->counts.corrupted_bytes += pattern_check(r, e.frame, e.order, e.id);
		/*
		 * A narrow ID's word may stay: a frame is found only for an
		 * allocation the allocator names, and the entry the word
		 * leads to must hold that frame. Not writing it saves a
		 * cache miss per free.
		 */
		if (ref.wide)
			at_clear(r, e.frame);
		ret = mm_free(r->pool, r->pcp, e.frame);
		r->counts.live_pages[e.mt] -= 1UL << e.order;
		r->counts.frees++;
	}
	ref_del(r, ref);
	return ret;
}

static int replay_free(struct replay *r, const struct trace_event *ev,
		       char *err, size_t errlen)
{
	struct ref ref;
	int ret;

	if (!ent_find(r, ev->id, &ref)) {
		snprintf(err, errlen, "free of id %" PRIu64 ", which is not allocated",
			 ev->id);
		return -EINVAL;
	}
	ret = release(r, ref);
	if (ret)
		snprintf(err, errlen, "allocator refused to free id %" PRIu64 ": %s",
			 ev->id, strerror(-ret));
	return ret;
}

void replay_free_types(struct replay *r, unsigned int mask)
{
	struct ref ref;

	/* a deletion may shift a later entry into slot i: look at i again */
	for_each_ref(r, ref)
		while (ref_used(r, ref) && (mask & (1U << ent_get(r, ref).mt)))
			release(r, ref);
}

uint64_t replay_free_some(struct replay *r, unsigned int mask,
			  unsigned int permille, uint64_t seed)
{
	uint64_t freed = 0;
	struct ref ref;

	for_each_ref(r, ref) {
		for (;;) {
			struct ent e;

			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			if (!ref_used(r, ref))
				break;
			e = ent_get(r, ref);
			if (!(mask & (1U << e.mt)) || (seed >> 33) % 1000 >= permille)
				break;
			freed += e.frame != NO_FRAME ? 1UL << e.order : 0;
			release(r, ref);
		}
	}
	return freed;
}

/*
 * 'r' asks every owner to give back what it can: live, the allocator asks
 * through the reclaim callbacks, then the trace lets go of what was not
 * taken; otherwise the trace, owning its RECLAIMABLE allocations, lets
 * them go. Either way the trace holds no reclaimable ID after it, so the
 * IDs may come back in later allocations. 'c' compacts the whole pool.
 */
int replay_event(struct replay *r, const struct trace_event *ev, char *err,
		 size_t errlen)
{
	r->counts.events++;
	switch (ev->op) {
	case TRACE_ALLOC:
		return replay_alloc(r, ev, err, errlen);
	case TRACE_FREE:
		return replay_free(r, ev, err, errlen);
	case TRACE_RECLAIM:
		r->counts.reclaims++;
		if (r->live)
			mm_shrink(r->pool, UINT64_MAX, 1U << MIGRATE_RECLAIMABLE);
		replay_free_types(r, 1U << MIGRATE_RECLAIMABLE);
		return 0;
	case TRACE_COMPACT:
		r->counts.compacts++;
		mm_compact_all(r->pool);
		return 0;
	}
	return -EINVAL;
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || *end ? -EINVAL : 0;
}

int trace_parse_line(const char *line, struct trace_event *ev)
{
	char buf[256], *tok[5], *save = NULL;
	int n = 0;
	uint64_t order;

	if (strlen(line) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, line);
	buf[strcspn(buf, "#")] = '\0';
	for (char *t = strtok_r(buf, " \t\r\n", &save); t && n < 5;
	     t = strtok_r(NULL, " \t\r\n", &save))
		tok[n++] = t;
	if (!n)
		return 0;
	memset(ev, 0, sizeof(*ev));
	if (!strcmp(tok[0], "a") && n == 4) {
		ev->op = TRACE_ALLOC;
		if (parse_u64(tok[1], &ev->id) || parse_u64(tok[2], &order) ||
		    order >= MM_MAX_ORDER || strlen(tok[3]) != 1 ||
		    mm_migratetype_parse(tok[3], &ev->mt))
			return -EINVAL;
		ev->order = (unsigned int)order;
		return 1;
	}
	if (!strcmp(tok[0], "f") && n == 2) {
		ev->op = TRACE_FREE;
		return parse_u64(tok[1], &ev->id) ? -EINVAL : 1;
	}
	if ((!strcmp(tok[0], "r") || !strcmp(tok[0], "c")) && n == 1) {
		ev->op = tok[0][0] == 'r' ? TRACE_RECLAIM : TRACE_COMPACT;
		return 1;
	}
	return -EINVAL;
}

void trace_print_event(FILE *f, const struct trace_event *ev)
{
	static const char type_letter[MIGRATE_TYPES] = { 'U', 'R', 'M' };

	switch (ev->op) {
	case TRACE_ALLOC:
		fprintf(f, "a %" PRIu64 " %u %c\n", ev->id, ev->order,
			type_letter[ev->mt]);
		break;
	case TRACE_FREE:
		fprintf(f, "f %" PRIu64 "\n", ev->id);
		break;
	case TRACE_RECLAIM:
		fputs("r\n", f);
		break;
	case TRACE_COMPACT:
		fputs("c\n", f);
		break;
	}
}

int trace_replay_file(FILE *f, struct replay *r, char *err, size_t errlen)
{
	char line[512], why[200];
	unsigned long lineno = 0;
	struct trace_event ev;

	while (fgets(line, sizeof(line), f)) {
		int ret;

		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			snprintf(err, errlen, "line %lu: line too long", lineno);
			return -EINVAL;
		}
		ret = trace_parse_line(line, &ev);
		if (ret < 0) {
			line[strcspn(line, "\r\n")] = '\0';
			snprintf(err, errlen, "line %lu: malformed event '%.60s'",
				 lineno, line);
			return -EINVAL;
		}
		if (ret == 0)
			continue;
		ret = replay_event(r, &ev, why, sizeof(why));
		if (ret) {
			snprintf(err, errlen, "line %lu: %s", lineno, why);
			return ret;
		}
	}
	if (ferror(f)) {
		snprintf(err, errlen, "read error after line %lu", lineno);
		return -EIO;
	}
	return 0;
}

unsigned long trace_pool_mib(FILE *f)
{
	char line[256];
	unsigned long mib = 0;
	long pos = ftell(f);

	while (fgets(line, sizeof(line), f) && line[0] == '#')
		if (sscanf(line, "# pool-mib %lu", &mib) == 1)
			break;
	if (pos >= 0)
		fseek(f, pos, SEEK_SET);
	return mib;
}
