// SPDX-License-Identifier: GPL-2.0
/*
 * Trace parsing and replay. Live allocations are kept in an open-addressed
 * table keyed by the trace's ID (any 64-bit value); deletion shifts the
 * following entries back so no tombstones accumulate over long traces.
 * A replay whose allocations have an owner also finds them by frame (the
 * allocator's callbacks name frames): a 4-byte word per frame holds the ID
 * of the allocation that starts there (0.1% of the pool, a quarter of the
 * allocator's metadata, and one store or load where a hash table took a
 * probe chain of misses); IDs too wide for the word are found through a
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

struct replay {
	struct mm_pool *pool;
	struct mm_pcp *pcp;
	struct live *slots;
	size_t cap;		/* a power of two */
	size_t nr;
	struct replay_counts counts;
	/* live mode */
	bool live;
	uint32_t *id_at;	/* by frame: see WIDE_ID */
	uint64_t frames;
	struct at *at;		/* wide IDs by frame; at_cap a power of two */
	size_t at_cap;
	size_t at_nr;
	uint8_t *base;		/* the pool memfd, mapped: NULL without one */
	uint32_t owner[MIGRATE_TYPES];
};

/* Linear probing stays short up to 3/4 full. */
static bool table_full(size_t nr, size_t cap)
{
	return 4 * (nr + 1) > 3 * cap;
}

static size_t slot_of(const struct replay *r, uint64_t id)
{
	uint64_t h = id * 0x9e3779b97f4a7c15ULL;

	return (h ^ (h >> 29)) & (r->cap - 1);
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

	r->cap = old_cap ? old_cap * 2 : 1024;
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

static bool id_is_wide(uint64_t id)
{
	return id >= WIDE_ID - 1;
}

/* Record that @frame holds @id; room is made before the allocation. */
static void at_set(struct replay *r, uint32_t frame, uint64_t id)
{
	if (!r->live)
		return;
	if (id_is_wide(id)) {
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

static struct live *entry_of_frame(struct replay *r, uint64_t frame)
{
	uint64_t id;
	struct live *e;

	if (!at_get(r, frame, &id))
		return NULL;
	e = table_find(r, id);
	return e && e->frame == frame ? e : NULL;
}

/* The moved-to frame takes the moved-from one's place in the frame table. */
static int replay_migrate(void *priv, uint64_t old, uint64_t new, unsigned int order)
{
	struct replay *r = priv;
	struct live *e = entry_of_frame(r, old);

	if (!e || e->order != order)
		return -ENOENT;
	r->counts.corrupted_bytes += pattern_check(r, old, order, e->id);
	pattern_copy(r, old, new, order);
	at_clear(r, (uint32_t)old);
	at_set(r, (uint32_t)new, e->id);
	e->frame = (uint32_t)new;
	r->counts.migrated_pages += 1UL << order;
	return 0;
}

static int replay_reclaim(void *priv, uint64_t frame, unsigned int order)
{
	struct replay *r = priv;
	struct live *e = entry_of_frame(r, frame);

	if (!e || e->order != order)
		return -ENOENT;
	r->counts.corrupted_bytes += pattern_check(r, frame, order, e->id);
	r->counts.live_pages[e->mt] -= 1UL << order;
	r->counts.reclaimed_pages += 1UL << order;
	at_clear(r, (uint32_t)frame);
	/* the trace may still free it: keep the ID, like a failed allocation */
	e->frame = NO_FRAME;
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
	r->frames = frames;
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
	if (table_grow(r) || (live && replay_go_live(r))) {
		replay_destroy(r);
		return -ENOMEM;
	}
	*out = r;
	return 0;
}

uint64_t replay_verify(struct replay *r)
{
	uint64_t bad = 0;

	for (size_t i = 0; r->base && i < r->cap; i++)
		if (r->slots[i].used && r->slots[i].frame != NO_FRAME)
			bad += pattern_check(r, r->slots[i].frame, r->slots[i].order,
					     r->slots[i].id);
	return bad;
}

bool replay_checks_contents(const struct replay *r)
{
	return r->base;
}

size_t replay_table_bytes(const struct replay *r)
{
	return r->cap * sizeof(*r->slots) + r->at_cap * sizeof(*r->at) +
	       (r->id_at ? r->frames * sizeof(*r->id_at) : 0);
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
	free(r);
}

const struct replay_counts *replay_counts(const struct replay *r)
{
	return &r->counts;
}

static int replay_alloc(struct replay *r, const struct trace_event *ev,
			char *err, size_t errlen)
{
	struct live e = { .id = ev->id, .order = ev->order, .mt = ev->mt };
	long frame;

	if (table_find(r, ev->id)) {
		snprintf(err, errlen, "id %" PRIu64 " is already allocated", ev->id);
		return -EINVAL;
	}
	if ((table_full(r->nr, r->cap) && table_grow(r)) ||
	    (r->live && id_is_wide(ev->id) && table_full(r->at_nr, r->at_cap) &&
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
	table_put(r, &e);
	return 0;
}

static int release(struct replay *r, struct live *e)
{
	int ret = 0;

	if (e->frame != NO_FRAME) {
		r->counts.corrupted_bytes += pattern_check(r, e->frame, e->order, e->id);
		at_clear(r, e->frame);
		ret = mm_free(r->pool, r->pcp, e->frame);
		r->counts.live_pages[e->mt] -= 1UL << e->order;
		r->counts.frees++;
	}
	table_del(r, e);
	return ret;
}

static int replay_free(struct replay *r, const struct trace_event *ev,
		       char *err, size_t errlen)
{
	struct live *e = table_find(r, ev->id);
	int ret;

	if (!e) {
		snprintf(err, errlen, "free of id %" PRIu64 ", which is not allocated",
			 ev->id);
		return -EINVAL;
	}
	ret = release(r, e);
	if (ret)
		snprintf(err, errlen, "allocator refused to free id %" PRIu64 ": %s",
			 ev->id, strerror(-ret));
	return ret;
}

void replay_free_types(struct replay *r, unsigned int mask)
{
	size_t i = 0;

	/* a deletion may shift a later entry into slot i: look at i again */
	while (i < r->cap) {
		struct live *e = &r->slots[i];

		if (e->used && (mask & (1U << e->mt)))
			release(r, e);
		else
			i++;
	}
}

uint64_t replay_free_some(struct replay *r, unsigned int mask,
			  unsigned int permille, uint64_t seed)
{
	uint64_t freed = 0;
	size_t i = 0;

	while (i < r->cap) {
		struct live *e = &r->slots[i];

		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		if (e->used && (mask & (1U << e->mt)) && (seed >> 33) % 1000 < permille) {
			freed += e->frame != NO_FRAME ? 1UL << e->order : 0;
			release(r, e);
		} else {
			i++;
		}
	}
	return freed;
}

/*
 * 'r' asks every owner to give back what it can: live, the allocator asks
 * through the reclaim callbacks; otherwise the trace, owning its
 * RECLAIMABLE allocations, lets them go. 'c' compacts the whole pool.
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
		else
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
