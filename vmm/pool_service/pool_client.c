// SPDX-License-Identifier: GPL-2.0
/*
 * The VM process's end of the pool service. Two request channels, as the
 * service has two threads for us (pool_service.c): a fault's allocation,
 * under the VM's memory lock, never queues behind an assembly's, which
 * may wait for compaction calling back into this very process. A third
 * socket carries the service's requests, answered by cb_thread. What of
 * the pool we can reach is pool_files.c's: the files of our pageblocks,
 * installed as replies bring them, dropped as our frames go back.
 *
 * Locks (vm.h's list): chan.lock and cache_lock are leaves, never held
 * together (the files' lock is taken under either), and taken under the VM's mem_lock (a fault's refill, a free);
 * ops_lock is read-held by cb_thread around an owner callback (which takes
 * mem_lock), and write-held only to change the operations.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "vmm/pool_service/pool_client.h"
#include "vmm/pool_service/pool_files.h"
#include "vmm/pool_service/pool_proto.h"
#include "vmm/sys/host.h"

struct chan {
	int fd;
	pthread_mutex_t lock;	/* one request in flight; q, r and fds */
	uint32_t seq;
	struct pool_msg *q, *r;
	int fds[POOL_MSG_FDS];	/* that came with r, -1: none */
};

struct pool_client {
	struct chan fast, slow;
	int cb_fd;
	pthread_t cb_thread;
	bool cb_running;
	uint64_t frames;
	uint32_t owner;
	bool gone;			/* atomic */
	uint64_t refused;		/* frames the service would not take back: a bug */
	pthread_mutex_t cache_lock;
	uint32_t *cache;		/* order-0 frames of ours, unused */
	size_t nr, cap;
	uint32_t runs[POOL_CLIENT_RUNS];	/* first frames of unused runs */
	unsigned int nr_runs;
	uint32_t *blocks;		/* whole pageblocks freed with the service gone */
	size_t nr_blocks, cap_blocks;
	pthread_rwlock_t ops_lock;
	const struct mm_owner_ops *ops;
	void *priv;
	struct pool_files *files;
};

static void close_fds(int *fds, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		if (fds[i] >= 0)
			close(fds[i]);
		fds[i] = -1;
	}
}

static void went_away(struct pool_client *c, int why)
{
	if (!__atomic_exchange_n(&c->gone, true, __ATOMIC_ACQ_REL))
		fprintf(stderr, "gpmm: the pool service is gone (%s): this VM keeps the "
			"memory it has and cannot grow\n", strerror(-why));
}

bool pool_client_gone(struct pool_client *c)
{
	return __atomic_load_n(&c->gone, __ATOMIC_ACQUIRE);
}

/*
 * One request, its reply in ch->r; the reply's length or -errno. A
 * service that closes is gone for good, and so is one that leaves a
 * request of the fast channel unanswered for POOL_CLIENT_ANSWER_MS; the
 * slow channel's requests compact, which takes as long as it takes
 * (other VM processes answer moves on the way), so they wait for an
 * answer or the end of the connection.
 */
static ssize_t __call(struct pool_client *c, struct chan *ch, size_t qlen)
{
	ssize_t len;
	int ret;

	if (pool_client_gone(c))
		return -ESHUTDOWN;
	ch->q->seq = ++ch->seq;
	ret = pool_wire_send(ch->fd, ch->q, qlen, NULL, 0);
	for (;;) {
		if (ret)
			break;
		ret = pool_wire_wait(ch->fd, ch == &c->slow ? -1 : POOL_CLIENT_ANSWER_MS);
		if (ret <= 0) {
			ret = ret ? ret : -ETIMEDOUT;
			break;
		}
		close_fds(ch->fds, POOL_MSG_FDS);
		len = pool_wire_recv(ch->fd, ch->r, POOL_MSG_MAX, ch->fds, POOL_MSG_FDS);
		if (len <= 0) {
			ret = len ? (int)len : -ECONNRESET;
			break;
		}
		if (len >= (ssize_t)sizeof(*ch->r) && ch->r->seq == ch->q->seq)
			return len;
	}
	went_away(c, ret);
	return -ESHUTDOWN;
}

static struct pool_msg *begin(struct chan *ch, uint32_t op, uint32_t n)
{
	pthread_mutex_lock(&ch->lock);
	memset(ch->q, 0, sizeof(*ch->q));
	ch->q->op = op;
	ch->q->n = n;
	return ch->q;
}

/* Files a reply brought and nobody took are closed here. */
static void end(struct chan *ch)
{
	close_fds(ch->fds, POOL_MSG_FDS);
	pthread_mutex_unlock(&ch->lock);
}

/* A request without items; its reply's ret (or -errno). */
static int call_simple(struct pool_client *c, uint32_t op, uint64_t a0)
{
	struct pool_msg *q = begin(&c->fast, op, 0);
	ssize_t len;
	int ret;

	q->a[0] = a0;
	len = __call(c, &c->fast, sizeof(*q));
	ret = len < 0 ? (int)len : c->fast.r->ret;
	end(&c->fast);
	return ret;
}

/*
 * An ALLOC reply's frames become ours: first the files it brought (the
 * pageblocks' numbers follow the frames), then the count of each frame's
 * pageblock. A frame in a pageblock we have no file for cannot be used:
 * the service broke the protocol. The frames' count, or -EPROTO.
 */
static long take_frames(struct pool_client *c, struct chan *ch, const uint32_t *frames,
			unsigned int order)
{
	const uint32_t *pbs = (const uint32_t *)ch->r->data + ch->r->n;
	long ret = (long)ch->r->n;
	off_t off;

	for (uint32_t i = 0; i < ch->r->a[2]; i++) {
		int fd = ch->fds[i];

		ch->fds[i] = -1;
		if (fd < 0 || pool_files_install(c->files, pbs[i], fd))
			ret = -EPROTO;
	}
	for (uint32_t i = 0; i < ch->r->n; i++) {
		pool_files_hold(c->files, frames[i], order, true);
		if (pool_files_fd(c->files, frames[i], &off) < 0)
			ret = -EPROTO;
	}
	return ret;
}

/* Append @frame to the list *@list of *@nr, growing it (from @first) when full. */
static int list_push(uint32_t **list, size_t *nr, size_t *cap, size_t first, uint32_t frame)
{
	if (*nr == *cap) {
		size_t grown = *cap ? *cap * 2 : first;
		uint32_t *p = realloc(*list, grown * sizeof(*p));

		if (!p)
			return -ENOMEM;
		*list = p;
		*cap = grown;
	}
	(*list)[(*nr)++] = frame;
	return 0;
}

static int cache_push(struct pool_client *c, uint32_t frame)
{
	return list_push(&c->cache, &c->nr, &c->cap, POOL_CLIENT_HIGH * 2, frame);
}

/* cache_lock held: a pageblock freed whole with the service gone stays whole. */
static int block_keep(struct pool_client *c, uint32_t frame)
{
	return list_push(&c->blocks, &c->nr_blocks, &c->cap_blocks, 16, frame);
}

/*
 * With the service gone the VM lives on what it holds (docs/pool-service.md):
 * a pageblock it freed whole was kept whole (pool_client_free), so a range
 * that swap sends out can come back as one block; a page (asked for once
 * the page cache is empty) is carved out of such a block, the rest of it
 * going to the page cache. Runs are not: a fault-around falls back to a
 * page. Nothing kept: -ENOMEM, as from a full pool, which is what sends
 * the fault path to reclaim its own cold ranges.
 */
static long alloc_kept(struct pool_client *c, unsigned int order, unsigned int n,
		       uint32_t *frames, unsigned int *bits)
{
	unsigned int pieces, got = 0;
	uint32_t block;

	if (bits)
		*bits = 0;
	if ((order && order != MM_PAGEBLOCK_ORDER) || !n)
		return -ENOMEM;
	pieces = 1U << (MM_PAGEBLOCK_ORDER - order);
	pthread_mutex_lock(&c->cache_lock);
	if (!c->nr_blocks) {
		pthread_mutex_unlock(&c->cache_lock);
		return -ENOMEM;
	}
	block = c->blocks[--c->nr_blocks];
	while (got < n && got < pieces) {
		frames[got] = block + (got << order);
		got++;
	}
	for (uint32_t f = got << order; f < MM_PAGEBLOCK_PAGES; f++)
		if (cache_push(c, block + f))
			break;	/* no room to list them: they stay unused, still ours */
	pthread_mutex_unlock(&c->cache_lock);
	return got;
}

long pool_client_alloc(struct pool_client *c, unsigned int order, unsigned int n,
		       unsigned int flags, uint32_t *frames, unsigned int *bits)
{
	return pool_client_alloc_keep(c, order, n, flags, 0, frames, bits);
}

long pool_client_alloc_keep(struct pool_client *c, unsigned int order, unsigned int n,
			    unsigned int flags, uint64_t keep_free, uint32_t *frames,
			    unsigned int *bits)
{
	struct chan *ch = flags & POOL_ALLOC_NOWAIT ? &c->fast : &c->slow;
	struct pool_msg *q = begin(ch, POOL_ALLOC, 0);
	ssize_t len;
	long ret;

	q->a[0] = order;
	q->a[1] = n;
	q->a[2] = flags;
	q->a[3] = keep_free;
	len = __call(c, ch, sizeof(*q));
	if (len < 0) {
		ret = len;
	} else if (ch->r->ret < 0) {
		ret = ch->r->ret;
	} else if (ch->r->n > n || ch->r->a[2] > POOL_MSG_FDS ||
		   (size_t)len != sizeof(*ch->r) + (ch->r->n + ch->r->a[2]) * sizeof(uint32_t)) {
		ret = -EPROTO;
	} else {
		memcpy(frames, ch->r->data, ch->r->n * sizeof(uint32_t));
		if (bits)
			*bits = (ch->r->a[0] ? 1 : 0) | (ch->r->a[1] ? 2 : 0);
		ret = ch->r->n ? (long)ch->r->n : -ENOMEM;
		for (uint32_t i = 0; i < ch->r->n; i++)
			if (frames[i] >= c->frames)
				ret = -EPROTO;
		if (ret > 0)
			ret = take_frames(c, ch, frames, order);
	}
	end(ch);
	if (ret == -ESHUTDOWN)
		ret = alloc_kept(c, order, n, frames, bits);
	return ret;
}

/*
 * Send @n blocks of @order back; how many the service refused (counted),
 * or -errno. What the service answered for is ours no more, refused or
 * not: a pageblock left with none of our frames is unmapped. What it
 * never answered for stays (the VM lives on it without a service).
 */
static long give_back(struct pool_client *c, const uint32_t *frames, size_t n,
		      unsigned int order)
{
	long refused = 0;

	while (n) {
		size_t k = n < POOL_MAX_ITEMS ? n : POOL_MAX_ITEMS;
		struct pool_msg *q = begin(&c->fast, POOL_FREE, (uint32_t)k);
		ssize_t len;

		memcpy(q->data, frames, k * sizeof(uint32_t));
		len = __call(c, &c->fast, sizeof(*q) + k * sizeof(uint32_t));
		refused += len < 0 ? (long)k : (long)c->fast.r->a[0];
		end(&c->fast);
		if (len < 0)
			return len;
		for (size_t i = 0; i < k; i++)
			pool_files_hold(c->files, frames[i], order, false);
		frames += k;
		n -= k;
	}
	__atomic_add_fetch(&c->refused, (uint64_t)refused, __ATOMIC_RELAXED);
	return refused;
}

long pool_client_page(struct pool_client *c)
{
	uint32_t got[POOL_CLIENT_BATCH];
	long n, frame = -ENOMEM;

	pthread_mutex_lock(&c->cache_lock);
	if (c->nr) {
		frame = c->cache[--c->nr];
		pthread_mutex_unlock(&c->cache_lock);
		return frame;
	}
	pthread_mutex_unlock(&c->cache_lock);
	n = pool_client_alloc(c, 0, POOL_CLIENT_BATCH, POOL_ALLOC_NOWAIT, got, NULL);
	if (n <= 0)
		return n ? n : -ENOMEM;
	pthread_mutex_lock(&c->cache_lock);
	frame = got[--n];
	while (n > 0 && cache_push(c, got[n - 1]) == 0)
		n--;
	pthread_mutex_unlock(&c->cache_lock);
	/* the cache could not grow: these go straight back (a refusal is counted) */
	if (n)
		give_back(c, got, (size_t)n, 0);
	return frame;
}

long pool_client_pages(struct pool_client *c, unsigned int order)
{
	uint32_t got[POOL_CLIENT_RUNS];
	long n, head;

	if (order != POOL_CLIENT_RUN_ORDER) {
		n = pool_client_alloc(c, order, 1, POOL_ALLOC_NOWAIT | POOL_ALLOC_SPLIT, got, NULL);
		return n < 0 ? n : (long)got[0];
	}
	pthread_mutex_lock(&c->cache_lock);
	if (c->nr_runs) {
		head = c->runs[--c->nr_runs];
		pthread_mutex_unlock(&c->cache_lock);
		return head;
	}
	pthread_mutex_unlock(&c->cache_lock);
	n = pool_client_alloc(c, order, POOL_CLIENT_RUNS, POOL_ALLOC_NOWAIT | POOL_ALLOC_SPLIT,
			      got, NULL);
	if (n <= 0)
		return n ? n : -ENOMEM;
	head = got[--n];
	pthread_mutex_lock(&c->cache_lock);
	/* another thread may have refilled meanwhile: the runs fit all the same */
	while (n > 0 && c->nr_runs < POOL_CLIENT_RUNS)
		c->runs[c->nr_runs++] = got[--n];
	pthread_mutex_unlock(&c->cache_lock);
	for (long i = 0; i < n; i++)
		for (uint32_t k = 0; k < 1U << POOL_CLIENT_RUN_ORDER; k++)
			if (pool_client_free(c, got[i] + k, 0))
				break;
	return head;
}

/*
 * The cache keeps order-0 frames for the next faults; past its high mark
 * half goes back in one message. With the service gone everything stays:
 * the VM lives on what it has, a whole pageblock kept whole (alloc_kept).
 */
int pool_client_free(struct pool_client *c, uint64_t frame, unsigned int order)
{
	uint32_t spill[POOL_CLIENT_HIGH];
	size_t n = 0;
	long refused;
	int ret = 0;

	if (frame >= c->frames || order > MM_PAGEBLOCK_ORDER)
		return -EINVAL;
	if (order && !pool_client_gone(c)) {
		uint32_t f = (uint32_t)frame;

		refused = give_back(c, &f, 1, order);
		if (refused != -ESHUTDOWN)
			return refused ? -EINVAL : 0;
	}
	pthread_mutex_lock(&c->cache_lock);
	if (order == MM_PAGEBLOCK_ORDER && !block_keep(c, (uint32_t)frame)) {
		pthread_mutex_unlock(&c->cache_lock);
		return 0;
	}
	for (uint64_t i = 0; i < 1UL << order && !ret; i++)
		ret = cache_push(c, (uint32_t)(frame + i));
	if (c->nr > POOL_CLIENT_HIGH && !pool_client_gone(c)) {
		n = POOL_CLIENT_HIGH / 2;
		c->nr -= n;
		memcpy(spill, &c->cache[c->nr], n * sizeof(*spill));
	}
	pthread_mutex_unlock(&c->cache_lock);
	refused = n ? give_back(c, spill, n, 0) : 0;
	return ret ? ret : refused > 0 ? -EINVAL : 0;
}

uint64_t pool_client_cached(struct pool_client *c)
{
	uint64_t n;

	pthread_mutex_lock(&c->cache_lock);
	n = c->nr + ((uint64_t)c->nr_runs << POOL_CLIENT_RUN_ORDER) +
	    ((uint64_t)c->nr_blocks << MM_PAGEBLOCK_ORDER);
	pthread_mutex_unlock(&c->cache_lock);
	return n;
}

uint64_t pool_client_refused(struct pool_client *c)
{
	return __atomic_load_n(&c->refused, __ATOMIC_RELAXED);
}

/*
 * Cached runs become single cached frames (a run has to be whole to be
 * handed out as one). cache_lock held; a frame that finds no room stays in
 * its run.
 */
static void __dissolve_runs(struct pool_client *c)
{
	while (c->nr_runs) {
		uint32_t head = c->runs[c->nr_runs - 1];

		for (uint32_t k = 0; k < 1U << POOL_CLIENT_RUN_ORDER; k++)
			if (cache_push(c, head + k))
				return;
		c->nr_runs--;
	}
}

uint64_t pool_client_drain(struct pool_client *c)
{
	uint32_t *frames;
	size_t n;
	long refused;

	pthread_mutex_lock(&c->cache_lock);
	__dissolve_runs(c);
	frames = c->cache;
	n = c->nr;
	c->cache = NULL;
	c->nr = c->cap = 0;
	pthread_mutex_unlock(&c->cache_lock);
	refused = n ? give_back(c, frames, n, 0) : 0;
	free(frames);
	return refused < 0 ? n : (uint64_t)refused;
}

/*
 * Everything we hold goes back in one request (the VM ends): the service
 * frees what the pool says is ours, the cache included, so the cache is
 * just forgotten.
 */
long pool_client_release(struct pool_client *c)
{
	struct pool_msg *q = begin(&c->fast, POOL_RELEASE, 0);
	ssize_t len = __call(c, &c->fast, sizeof(*q));
	long ret = len < 0 ? (long)len : c->fast.r->ret ? c->fast.r->ret : (long)c->fast.r->a[0];

	end(&c->fast);
	if (ret < 0)
		return ret;
	pthread_mutex_lock(&c->cache_lock);
	c->nr = 0;
	c->nr_runs = 0;
	c->nr_blocks = 0;
	pthread_mutex_unlock(&c->cache_lock);
	pool_files_drop_all(c->files);
	return ret;
}

int pool_client_frame_op(struct pool_client *c, unsigned int op, uint64_t frame)
{
	if (op != POOL_SPLIT && op != POOL_PIN && op != POOL_UNPIN)
		return -EINVAL;
	/* without a service nobody else looks at our blocks: nothing to tell */
	if (pool_client_gone(c))
		return 0;
	return call_simple(c, op, frame);
}

long pool_client_pinned(struct pool_client *c, const uint32_t *frames, size_t n,
			size_t *unallocated)
{
	long pinned = 0;

	if (unallocated)
		*unallocated = 0;
	while (n && !pool_client_gone(c)) {
		size_t k = n < POOL_MAX_ITEMS ? n : POOL_MAX_ITEMS;
		struct pool_msg *q = begin(&c->fast, POOL_PINNED, (uint32_t)k);
		ssize_t len;

		memcpy(q->data, frames, k * sizeof(uint32_t));
		len = __call(c, &c->fast, sizeof(*q) + k * sizeof(uint32_t));
		if (len >= 0 && c->fast.r->ret >= 0) {
			pinned += c->fast.r->ret;
			if (unallocated)
				*unallocated += c->fast.r->a[0];
		}
		len = len < 0 ? len : c->fast.r->ret < 0 ? c->fast.r->ret : 0;
		end(&c->fast);
		if (len < 0)
			return len;
		frames += k;
		n -= k;
	}
	return pinned;
}

int pool_client_info(struct pool_client *c, const uint32_t *frames, size_t n,
		     struct mm_frame_info *infos)
{
	while (n) {
		size_t k = n < POOL_MAX_ITEMS ? n : POOL_MAX_ITEMS;
		struct pool_msg *q = begin(&c->fast, POOL_INFO, (uint32_t)k);
		const struct pool_wire_info *w = (const struct pool_wire_info *)c->fast.r->data;
		ssize_t len;
		int ret = 0;

		memcpy(q->data, frames, k * sizeof(uint32_t));
		len = __call(c, &c->fast, sizeof(*q) + k * sizeof(uint32_t));
		if (len < 0 || c->fast.r->ret < 0 || c->fast.r->n != k)
			ret = len < 0 ? (int)len : c->fast.r->ret < 0 ? c->fast.r->ret : -EPROTO;
		for (size_t i = 0; !ret && i < k; i++)
			infos[i] = (struct mm_frame_info){ .state = w[i].state, .order = w[i].order,
				.mt = w[i].mt, .owner = w[i].owner, .pins = w[i].pins };
		end(&c->fast);
		if (ret)
			return ret;
		frames += k;
		infos += k;
		n -= k;
	}
	return 0;
}

int pool_client_stats(struct pool_client *c, struct mm_stats *st)
{
	struct pool_msg *q = begin(&c->fast, POOL_STATS, 0);
	ssize_t len = __call(c, &c->fast, sizeof(*q));
	int ret = len < 0 ? (int)len : c->fast.r->ret;

	if (!ret && (size_t)len != sizeof(*q) + sizeof(*st))
		ret = -EPROTO;
	if (!ret)
		memcpy(st, c->fast.r->data, sizeof(*st));
	end(&c->fast);
	return ret;
}

/*
 * A VM process reads its own pageblocks only: the rest of the pool is
 * other VMs' business, and a read of it would cost the whole pool.
 */
int pool_client_walk_own(struct pool_client *c, mm_pageblock_fn fn, void *opaque)
{
	uint64_t pbs = c->frames >> MM_PAGEBLOCK_ORDER, first = 0;

	for (;;) {
		struct pool_msg *q = begin(&c->fast, POOL_WALK_OWN, 0);
		const struct pool_wire_pb *own = (const struct pool_wire_pb *)c->fast.r->data;
		ssize_t len;
		int ret;

		q->a[0] = first;
		len = __call(c, &c->fast, sizeof(*q));
		ret = len < 0 ? (int)len : c->fast.r->ret;
		for (uint32_t i = 0; !ret && i < c->fast.r->n; i++) {
			if (own[i].pb < first || own[i].pb >= pbs) {
				ret = -EPROTO;
				break;
			}
			fn(opaque, own[i].pb, &own[i].info);
			first = own[i].pb + 1;
		}
		/* a short page is the last */
		ret = ret ? ret : c->fast.r->n == POOL_OWN_ITEMS ? 1 : 0;
		end(&c->fast);
		if (ret <= 0)
			return ret;
	}
}

int pool_client_walk(struct pool_client *c, mm_pageblock_fn fn, void *opaque)
{
	uint64_t pbs = c->frames >> MM_PAGEBLOCK_ORDER, first = 0;

	while (first < pbs) {
		struct pool_msg *q = begin(&c->fast, POOL_WALK, 0);
		const struct mm_pageblock_info *pbi =
			(const struct mm_pageblock_info *)c->fast.r->data;
		ssize_t len;
		int ret;

		q->a[0] = first;
		len = __call(c, &c->fast, sizeof(*q));
		ret = len < 0 ? (int)len : c->fast.r->ret;
		if (!ret && (!c->fast.r->n || first + c->fast.r->n > pbs))
			ret = -EPROTO;
		for (uint32_t i = 0; !ret && i < c->fast.r->n; i++)
			fn(opaque, first + i, &pbi[i]);
		if (!ret)
			first += c->fast.r->n;
		end(&c->fast);
		if (ret)
			return ret;
	}
	return 0;
}

void pool_client_report(struct pool_client *c, const char *json_text)
{
	size_t n = strlen(json_text);
	struct pool_msg *q;

	if (n > POOL_MSG_MAX - sizeof(*q) || pool_client_gone(c))
		return;
	q = begin(&c->fast, POOL_VM_REPORT, 0);
	memcpy(q->data, json_text, n);
	/* no reply: a report lost with the service is lost with its reader */
	if (pool_wire_send(c->fast.fd, q, sizeof(*q) + n, NULL, 0) == -EPIPE)
		went_away(c, -EPIPE);
	end(&c->fast);
}

void pool_client_set_owner(struct pool_client *c, const struct mm_owner_ops *ops, void *priv)
{
	pthread_rwlock_wrlock(&c->ops_lock);
	c->ops = ops;
	c->priv = priv;
	pthread_rwlock_unlock(&c->ops_lock);
}

/*
 * The service asks us to move a block. A frame in our cache holds nothing
 * yet: the new one simply takes its place. Anything else is the owner's
 * (the VM's ram_migrate), exactly as mm/ would call it in one process.
 */
static int __answer_migrate(struct pool_client *c, uint64_t old, uint64_t new,
			    unsigned int order)
{
	int ret = -EBUSY;

	if (!order) {
		pthread_mutex_lock(&c->cache_lock);
		/* a frame of a cached run: the runs break up into single frames */
		for (unsigned int i = 0; i < c->nr_runs; i++)
			if (old - c->runs[i] < 1U << POOL_CLIENT_RUN_ORDER) {
				__dissolve_runs(c);
				break;
			}
		for (size_t i = 0; i < c->nr; i++)
			if (c->cache[i] == old) {
				c->cache[i] = (uint32_t)new;
				ret = 0;
				break;
			}
		pthread_mutex_unlock(&c->cache_lock);
		if (!ret)
			return 0;
	}
	pthread_rwlock_rdlock(&c->ops_lock);
	if (c->ops && c->ops->migrate)
		ret = c->ops->migrate(c->priv, old, new, order);
	pthread_rwlock_unlock(&c->ops_lock);
	return ret;
}

/*
 * A service binds its socket before it listens: a client started in that
 * moment (right after the daemon, as a unit or a benchmark starts one) is
 * refused. Such a refusal is retried, 1 s at most; a socket nobody serves
 * at all is refused the same way, and is said after that second.
 */
static int connect_service(int fd, const struct sockaddr_un *sa)
{
	struct timespec pause = { 0, 10 * 1000 * 1000 };
	int ret;

	for (int i = 0; (ret = connect(fd, (const struct sockaddr *)sa, sizeof(*sa))) &&
			errno == ECONNREFUSED && i < 100; i++)
		nanosleep(&pause, NULL);
	return ret;
}

/*
 * The new block's pageblock file (@fd, ours now) is mapped first; a
 * move done makes the new block ours and the old one the service's.
 */
static int answer_migrate(struct pool_client *c, uint64_t old, uint64_t new, unsigned int order,
			  int fd)
{
	int ret;

	if (old >= c->frames || new >= c->frames || order > MM_PAGEBLOCK_ORDER) {
		if (fd >= 0)
			close(fd);
		return -EINVAL;
	}
	if (fd < 0 || pool_files_install(c->files, new >> MM_PAGEBLOCK_ORDER, fd))
		return -EBUSY;
	pool_files_hold(c->files, new, order, true);
	ret = __answer_migrate(c, old, new, order);
	pool_files_hold(c->files, ret ? new : old, order, false);
	return ret;
}

static void *cb_thread(void *arg)
{
	struct pool_client *c = arg;
	struct pool_msg m;

	for (;;) {
		int fd = -1;
		ssize_t len = pool_wire_recv(c->cb_fd, &m, sizeof(m), &fd, 1);

		if (len <= 0)
			break;
		if (len != (ssize_t)sizeof(m) || m.op != POOL_MIGRATE) {
			if (fd >= 0)
				close(fd);
			continue;
		}
		m.ret = answer_migrate(c, m.a[0], m.a[1], (unsigned int)m.a[2], fd);
		if (pool_wire_send(c->cb_fd, &m, sizeof(m), NULL, 0))
			break;
	}
	return NULL;
}

static int chan_init(struct chan *ch, int fd)
{
	ch->fd = fd;
	for (unsigned int i = 0; i < POOL_MSG_FDS; i++)
		ch->fds[i] = -1;
	pthread_mutex_init(&ch->lock, NULL);
	ch->q = calloc(1, POOL_MSG_MAX);
	ch->r = calloc(1, POOL_MSG_MAX);
	return ch->q && ch->r ? 0 : -ENOMEM;
}

static void chan_fini(struct chan *ch)
{
	close_fds(ch->fds, POOL_MSG_FDS);
	if (ch->fd >= 0)
		close(ch->fd);
	pthread_mutex_destroy(&ch->lock);
	free(ch->q);
	free(ch->r);
}

static int say_hello(struct pool_client *c, const char *name, uint64_t ram_bytes,
		     unsigned int kind, const int theirs[2], struct pool_client_info *info,
		     char *err, size_t errlen)
{
	struct pool_msg *m = c->fast.q;
	size_t n = strnlen(name, POOL_NAME_MAX - 1);
	ssize_t len;
	int ret;

	*m = (struct pool_msg){ .op = POOL_HELLO, .n = (uint32_t)n,
				.a = { POOL_PROTO_VERSION, ram_bytes, 0, kind } };
	memcpy(m->data, name, n);
	ret = pool_wire_send(c->fast.fd, m, sizeof(*m) + n, theirs, 2);
	if (ret) {
		snprintf(err, errlen, "saying hello to the pool service: %s", strerror(-ret));
		return ret;
	}
	ret = pool_wire_wait(c->fast.fd, POOL_CLIENT_ANSWER_MS);
	len = ret > 0 ? pool_wire_recv(c->fast.fd, c->fast.r, POOL_MSG_MAX, NULL, 0) : -ETIMEDOUT;
	m = c->fast.r;
	if (len < (ssize_t)sizeof(*m) || m->op != POOL_HELLO) {
		snprintf(err, errlen, "the pool service did not answer");
		ret = len < 0 ? (int)len : -EPROTO;
	} else if (m->ret < 0) {
		size_t k = (size_t)len - sizeof(*m) < errlen - 1 ? (size_t)len - sizeof(*m) : errlen - 1;

		memcpy(err, m->data, k);
		err[k] = '\0';
		ret = m->ret;
	} else if (!m->a[0] || m->a[0] % MM_PAGEBLOCK_PAGES || m->a[0] > UINT32_MAX ||
		   (ret = pool_files_init(m->a[0], &c->files))) {
		snprintf(err, errlen, "cannot map a view of the pool of %llu frames",
			 (unsigned long long)m->a[0]);
		ret = ret ? ret : -EPROTO;
	} else {
		c->frames = m->a[0];
		c->owner = (uint32_t)m->a[1];
		*info = (struct pool_client_info){ .frames = m->a[0], .owner = c->owner,
			.quota = m->a[3], .host_huge = m->a[2] & POOL_HOST_HUGE,
			.release_ms = (unsigned int)m->a[2], .base = pool_files_base(c->files),
			.overcommit_pct = (unsigned int)(m->a[2] >> POOL_HOST_OVERCOMMIT_SHIFT) & 0xffff };
		return 0;
	}
	return ret;
}

int pool_client_connect(const char *path, const char *name, uint64_t ram_bytes,
			unsigned int kind, struct pool_client **out,
			struct pool_client_info *info, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int cb[2] = { -1, -1 }, slow[2] = { -1, -1 }, theirs[2];
	struct pool_client *c = calloc(1, sizeof(*c));
	sigset_t all, old;
	int ret = -ENOMEM;

	if (!c)
		return ret;
	c->cb_fd = c->fast.fd = c->slow.fd = -1;
	for (unsigned int i = 0; i < POOL_MSG_FDS; i++)
		c->fast.fds[i] = c->slow.fds[i] = -1;
	pthread_mutex_init(&c->cache_lock, NULL);
	pthread_rwlock_init(&c->ops_lock, NULL);
	if (chan_init(&c->fast, socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0)) ||
	    chan_init(&c->slow, -1))
		goto fail;
	ret = -errno;
	if (c->fast.fd < 0 || strlen(path) >= sizeof(sa.sun_path) ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, cb) ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, slow)) {
		snprintf(err, errlen, "pool socket %s: %s", path, strerror(errno));
		goto fail;
	}
	strcpy(sa.sun_path, path);
	if (connect_service(c->fast.fd, &sa)) {
		ret = -errno;
		snprintf(err, errlen, "no pool service on %s: %s", path, strerror(errno));
		goto fail;
	}
	c->cb_fd = cb[0];
	c->slow.fd = slow[0];
	theirs[0] = cb[1];
	theirs[1] = slow[1];
	ret = say_hello(c, name, ram_bytes, kind, theirs, info, err, errlen);
	close(cb[1]);
	close(slow[1]);
	cb[1] = slow[1] = -1;
	/* a file per pageblock we may hold: as many descriptors */
	if (!ret)
		ret = host_raise_nofile(info->quota >> MM_PAGEBLOCK_ORDER, err, errlen);
	if (ret)
		goto fail;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	ret = -pthread_create(&c->cb_thread, NULL, cb_thread, c);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		snprintf(err, errlen, "cannot start the pool client: %s", strerror(-ret));
		goto fail;
	}
	c->cb_running = true;
	*out = c;
	return 0;
fail:
	if (cb[0] >= 0 && c->cb_fd < 0)
		close(cb[0]);
	if (cb[1] >= 0)
		close(cb[1]);
	if (slow[0] >= 0 && c->slow.fd < 0)
		close(slow[0]);
	if (slow[1] >= 0)
		close(slow[1]);
	pool_client_close(c);
	return ret;
}

void pool_client_close(struct pool_client *c)
{
	if (!c)
		return;
	if (c->cb_running) {
		shutdown(c->cb_fd, SHUT_RDWR);
		pthread_join(c->cb_thread, NULL);
	}
	if (c->cb_fd >= 0)
		close(c->cb_fd);
	chan_fini(&c->fast);
	chan_fini(&c->slow);
	pool_files_fini(c->files);
	pthread_mutex_destroy(&c->cache_lock);
	pthread_rwlock_destroy(&c->ops_lock);
	free(c->cache);
	free(c->blocks);
	free(c);
}

int pool_client_frame_file(struct pool_client *c, uint64_t frame, off_t *off)
{
	return pool_files_fd(c->files, frame, off);
}
