// SPDX-License-Identifier: GPL-2.0
/*
 * The pool service. One thread accepts; two threads per VM process read
 * its requests and answer them in order: one for requests that may
 * compact (a 2 MiB block for an assembly), which call back into VM
 * processes, this one included, and one for everything else, so that a
 * fault, which holds the VM's memory lock, never waits behind a
 * compaction that waits for that lock. The
 * requests the service makes of a VM process (move a block) go out on
 * that process's callback socket from whichever thread compacts, one at a
 * time per process, each waited for at most answer_ms.
 *
 * Lock order (vm.h's list, service side): the mm callback holds owners_lock
 * (read) and takes client.cb_lock; service.lock is a leaf (the client list
 * and the counters), never held across a socket operation or a call into mm.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "vmm/core/vm.h"
#include "vmm/sys/host.h"
#include "vmm/sys/unix_socket.h"
#include "vmm/pool_service/pool_proto.h"
#include "vmm/pool_service/pool_service.h"

struct late_move {
	bool pending;
	uint32_t seq;
	uint64_t old, new;
	unsigned int order;
};

struct svc_client {
	struct pool_service *svc;
	int fd;			/* requests from the VM process */
	int slow_fd;		/* its requests that may compact, on their own thread */
	int cb_fd;		/* our requests to it */
	pthread_t slow_thread;
	bool slow_running;
	pid_t pid;
	uint32_t owner;
	bool registered;
	char name[POOL_NAME_MAX];
	unsigned int kind;	/* POOL_CLIENT_VM or POOL_CLIENT_TENANT */
	uint64_t ram_bytes;
	uint64_t quota;		/* frames */
	uint64_t held;		/* frames granted and not given back, atomic */
	pthread_mutex_t cb_lock;	/* cb_seq, late, one request at a time */
	uint32_t cb_seq;
	struct late_move late;
	bool dead;		/* atomic: no more requests to it */
	uint64_t moves_asked, moves_done, moves_late;
	double walk_budget;	/* pageblocks it may walk now; under svc->lock */
	uint64_t walk_ns;	/* when the budget was last topped up */
	char *report;		/* under svc->lock */
	uint64_t report_ns;
	struct svc_client *next;
};

struct pool_service {
	struct pool *pool;
	int listen_fd;
	int stop_efd;
	char path[108];
	unsigned int answer_ms;
	gid_t group;		/* whose VM processes are let in besides root's and ours */
	pthread_t accept_thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;	/* a client thread ended */
	struct svc_client *clients;
	unsigned int nr_clients;	/* threads alive, registered or not */
	uint64_t reserved_bytes;	/* RAM of the registered clients */
	bool stopping;
	/* counters, under lock */
	uint64_t connections, refused, bad_messages, clients_died;
	uint64_t frames_reclaimed, moves_timed_out, frames_released, walks_refused;
	/*
	 * The pool's statistics, read at most every POOL_SERVICE_STATS_MS
	 * for all clients: each VM's report asks for them every second, and
	 * a read walks the whole pool. A client's release or end makes the
	 * next read fresh. stats_lock is held across mm_stats.
	 */
	pthread_mutex_t stats_lock;
	struct mm_stats stats;
	uint64_t stats_ns;
	int stats_ret;
};

static void count(struct pool_service *s, uint64_t *counter, uint64_t n)
{
	pthread_mutex_lock(&s->lock);
	*counter += n;
	pthread_mutex_unlock(&s->lock);
}

/*
 * A move the client answered after we stopped waiting: it holds both
 * blocks, and its answer says which one it uses; the other goes back.
 */
static void settle_late(struct svc_client *c, const struct pool_msg *r)
{
	struct mm_pool *mm = c->svc->pool->mm;
	uint64_t unused = r->ret == 0 ? c->late.old : c->late.new;

	if (mm_free_owned(mm, unused, c->owner) >= 0)
		__atomic_sub_fetch(&c->held, 1UL << c->late.order, __ATOMIC_RELAXED);
	c->late.pending = false;
}

/* Read the answer to @seq, settling a late one on the way. cb_lock held. */
static int read_answer(struct svc_client *c, uint32_t seq, int ms)
{
	uint64_t end = vm_now_ns() + (uint64_t)ms * 1000000ULL;
	struct pool_msg r;

	for (;;) {
		uint64_t now = vm_now_ns();
		int n = pool_wire_wait(c->cb_fd, now >= end ? 0 : (int)((end - now) / 1000000ULL) + 1);
		ssize_t len;

		if (n <= 0)
			return n ? n : -ETIMEDOUT;
		len = pool_wire_recv(c->cb_fd, &r, sizeof(r), NULL, 0);
		if (len == 0 || len == -ECONNRESET)
			return -ECONNRESET;
		if (len != (ssize_t)sizeof(r) || r.op != POOL_MIGRATE)
			continue;	/* not an answer we asked for: dropped */
		if (c->late.pending && r.seq == c->late.seq)
			settle_late(c, &r);
		else if (r.seq == seq)
			return r.ret ? -EBUSY : 0;
	}
}

/*
 * mm's migrate callback for a block owned by a VM process. A process
 * that does not answer in answer_ms is treated as pinned: -EINPROGRESS
 * leaves it both blocks (mm.h), charged to its quota, and no further
 * request goes to it until its answer settles which one it kept. Only
 * our time-out leaves a move undecided: an answer is 0 (moved) or a
 * refusal, whatever it says, so a client cannot keep a second block by
 * answering -EINPROGRESS itself.
 */
static int client_migrate(void *priv, uint64_t old, uint64_t new, unsigned int order)
{
	struct svc_client *c = priv;
	struct pool_msg m = { .op = POOL_MIGRATE, .a = { old, new, order } };
	int ret, file;

	if (__atomic_load_n(&c->dead, __ATOMIC_ACQUIRE))
		return -EBUSY;
	/* a move it might leave undecided would take it past its quota */
	if (__atomic_load_n(&c->held, __ATOMIC_RELAXED) + (1UL << order) > c->quota)
		return -EBUSY;
	/* the new block is in a pageblock of the client's own: its file goes along */
	file = mm_pageblock_file(c->svc->pool->mm, new, c->owner);
	if (file < 0)
		return -EBUSY;
	pthread_mutex_lock(&c->cb_lock);
	if (c->late.pending) {
		/* its answer may be there now; only it can settle the move */
		if (read_answer(c, 0, 0) != -ETIMEDOUT || c->late.pending) {
			pthread_mutex_unlock(&c->cb_lock);
			close(file);
			return -EBUSY;
		}
	}
	m.seq = ++c->cb_seq;
	__atomic_add_fetch(&c->moves_asked, 1, __ATOMIC_RELAXED);
	ret = pool_wire_send(c->cb_fd, &m, sizeof(m), &file, 1);
	close(file);
	if (!ret)
		ret = read_answer(c, m.seq, (int)c->svc->answer_ms);
	if (ret == -ETIMEDOUT) {
		c->late = (struct late_move){ true, m.seq, old, new, order };
		__atomic_add_fetch(&c->held, 1UL << order, __ATOMIC_RELAXED);
		__atomic_add_fetch(&c->moves_late, 1, __ATOMIC_RELAXED);
		count(c->svc, &c->svc->moves_timed_out, 1);
		ret = -EINPROGRESS;
	} else if (ret == -ECONNRESET || ret == -EPIPE) {
		__atomic_store_n(&c->dead, true, __ATOMIC_RELEASE);
		ret = -EBUSY;
	} else if (ret == 0) {
		__atomic_add_fetch(&c->moves_done, 1, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&c->cb_lock);
	return ret;
}

static const struct mm_owner_ops client_ops = { .migrate = client_migrate };

/* The files a reply carries (POOL_ALLOC: of its frames' pageblocks). */
struct reply_files {
	int fd[POOL_MSG_FDS];
	uint32_t pb[POOL_MSG_FDS];
	unsigned int n;
};

/*
 * The file of @frame's pageblock goes with the reply unless it does
 * already; false when the reply has room for no more (or the file is
 * not the client's: then nothing of it may go).
 */
static bool reply_file(struct svc_client *c, struct reply_files *rf, uint64_t frame)
{
	uint32_t pb = (uint32_t)(frame >> MM_PAGEBLOCK_ORDER);
	int fd;

	for (unsigned int i = 0; i < rf->n; i++)
		if (rf->pb[i] == pb)
			return true;
	if (rf->n == POOL_MSG_FDS)
		return false;
	fd = mm_pageblock_file(c->svc->pool->mm, frame, c->owner);
	if (fd < 0)
		return false;
	rf->pb[rf->n] = pb;
	rf->fd[rf->n++] = fd;
	return true;
}

/*
 * Frames for a VM process: @count blocks of @order, movable (guest RAM
 * always is), within its quota. A request that may compact only for a
 * whole pageblock (an assembly); everything else is a nowait allocation.
 * The batch stops where its frames would need more files than a message
 * carries: the client asks again.
 */
static void do_alloc(struct svc_client *c, const struct pool_msg *q, struct pool_msg *r,
		     struct reply_files *rf)
{
	struct mm_pool *mm = c->svc->pool->mm;
	uint64_t order = q->a[0], n = q->a[1], flags = q->a[2];
	uint32_t *frames = (uint32_t *)r->data;
	bool nowait = flags & POOL_ALLOC_NOWAIT;

	if (order > MM_PAGEBLOCK_ORDER || n == 0 || (n << order) > POOL_MAX_ITEMS * 4 ||
	    n > POOL_MAX_ITEMS || (!nowait && order != MM_PAGEBLOCK_ORDER) ||
	    ((flags & POOL_ALLOC_PREPARE) && (order != MM_PAGEBLOCK_ORDER || n != 1))) {
		r->ret = -EINVAL;
		return;
	}
	if (__atomic_load_n(&c->held, __ATOMIC_RELAXED) + (n << order) > c->quota) {
		r->ret = -EDQUOT;
		return;
	}
	/* a huge first touch leaves the last free blocks to others (guest_mem.c) */
	if (q->a[3] && mm_free_pageblocks(mm) <= q->a[3]) {
		r->ret = -ENOMEM;
		return;
	}
	for (r->n = 0; r->n < n; r->n++) {
		long f = nowait ? mm_alloc_nowait(mm, NULL, (unsigned int)order, c->owner) :
			 mm_alloc(mm, NULL, (unsigned int)order, MIGRATE_MOVABLE, c->owner);

		if (f < 0) {
			r->ret = r->n ? 0 : (int)f;
			break;
		}
		if (!reply_file(c, rf, (uint64_t)f)) {
			r->ret = mm_free(mm, NULL, (uint64_t)f) ? -EFAULT : r->n ? 0 : -EBUSY;
			break;
		}
		/* a fresh block may be under compaction's eye already: then no split */
		if ((flags & POOL_ALLOC_SPLIT) && order && mm_split(mm, (uint64_t)f)) {
			r->ret = mm_free(mm, NULL, (uint64_t)f) ? -EFAULT : r->n ? 0 : -EBUSY;
			break;
		}
		frames[r->n] = (uint32_t)f;
		__atomic_add_fetch(&c->held, 1UL << order, __ATOMIC_RELAXED);
	}
	if ((flags & POOL_ALLOC_PREPARE) && r->n == 1) {
		mm_pageblock_prepare(mm, frames[0]);
		r->a[0] = mm_pageblock_take_zeroed(mm, frames[0]);
		r->a[1] = mm_pageblock_host_huge(mm, frames[0]);
	}
	memcpy(&frames[r->n], rf->pb, rf->n * sizeof(uint32_t));
	r->a[2] = rf->n;
}

static void do_free(struct svc_client *c, const struct pool_msg *q, struct pool_msg *r)
{
	const uint32_t *frames = (const uint32_t *)q->data;

	for (uint32_t i = 0; i < q->n; i++) {
		/* the owner check and the free under one lock, the order from the free */
		int order = frames[i] < c->svc->pool->size >> MM_PAGE_SHIFT ?
			    mm_free_owned(c->svc->pool->mm, frames[i], c->owner) : -EINVAL;

		if (order < 0)
			r->a[0]++;
		else
			__atomic_sub_fetch(&c->held, 1UL << order, __ATOMIC_RELAXED);
	}
}

/* The table from the wire's operations to mm's, as data. */
static const enum mm_owned_op owned_op_of[POOL_OPS] = {
	[POOL_SPLIT] = MM_OWNED_SPLIT,
	[POOL_PIN] = MM_OWNED_PIN,
	[POOL_UNPIN] = MM_OWNED_UNPIN,
};

/* The owner check and the operation are one step (mm_owned_op). */
static void do_frame_op(struct svc_client *c, const struct pool_msg *q, struct pool_msg *r)
{
	r->ret = mm_owned_op(c->svc->pool->mm, q->a[0], c->owner, owned_op_of[q->op]);
}

static bool frames_in_pool(struct svc_client *c, const struct pool_msg *q)
{
	const uint32_t *frames = (const uint32_t *)q->data;

	for (uint32_t i = 0; i < q->n; i++)
		if (frames[i] >= c->svc->pool->size >> MM_PAGE_SHIFT)
			return false;
	return true;
}

static void do_info(struct svc_client *c, const struct pool_msg *q, struct pool_msg *r)
{
	const uint32_t *frames = (const uint32_t *)q->data;
	struct pool_wire_info *out = (struct pool_wire_info *)r->data;

	for (uint32_t i = 0; i < q->n; i++) {
		struct mm_frame_info info;

		if (mm_frame_info(c->svc->pool->mm, frames[i], &info)) {
			r->ret = -EINVAL;
			return;
		}
		out[i] = (struct pool_wire_info){ (uint8_t)info.state, (uint8_t)info.order,
			(uint8_t)info.mt, (uint8_t)(info.pins > 255 ? 255 : info.pins), info.owner };
	}
	r->n = q->n;
}

struct walk_slice {
	struct mm_pageblock_info *out;
	uint64_t first, n;
};

static void walk_slice_fn(void *opaque, uint64_t pb, const struct mm_pageblock_info *info)
{
	struct walk_slice *w = opaque;

	if (pb >= w->first && pb < w->first + w->n)
		w->out[pb - w->first] = *info;
}

#define WALK_ITEMS	((POOL_MSG_MAX - sizeof(struct pool_msg)) / sizeof(struct mm_pageblock_info))

/*
 * A walk holds the pool's lock over what it reads, so a client may read
 * the pool POOL_SERVICE_WALKS_PER_S times a second (and as much again at
 * once); past that it is told -EAGAIN, and cannot make the lock every
 * other VM's faults need its own by looping POOL_WALK.
 */
static bool walk_allowed(struct svc_client *c, uint64_t n)
{
	struct pool_service *s = c->svc;
	double cap = (double)(s->pool->size >> MM_PAGEBLOCK_SHIFT) * POOL_SERVICE_WALKS_PER_S;
	uint64_t now = vm_now_ns();
	bool ok;

	pthread_mutex_lock(&s->lock);
	c->walk_budget += (double)(now - c->walk_ns) / 1e9 * cap;
	if (c->walk_budget > cap)
		c->walk_budget = cap;
	c->walk_ns = now;
	ok = c->walk_budget >= (double)n;
	if (ok)
		c->walk_budget -= (double)n;
	else
		s->walks_refused++;
	pthread_mutex_unlock(&s->lock);
	return ok;
}

/* A client's own pageblocks from a[0] on: its report's view, at its own cost. */
struct own_walk {
	struct pool_wire_pb *out;
	uint32_t n;
};

static void own_walk_fn(void *opaque, uint64_t pb, const struct mm_pageblock_info *info)
{
	struct own_walk *w = opaque;

	w->out[w->n++] = (struct pool_wire_pb){ pb, *info };
}

static void do_walk_own(struct svc_client *c, const struct pool_msg *q, struct pool_msg *r)
{
	struct mm_pool *mm = c->svc->pool->mm;
	struct own_walk w = { (struct pool_wire_pb *)r->data, 0 };
	long n;

	if (!walk_allowed(c, mm_owner_pageblocks(mm, c->owner))) {
		r->ret = -EAGAIN;
		return;
	}
	n = mm_owner_pageblock_walk(mm, c->owner, q->a[0], POOL_OWN_ITEMS, own_walk_fn, &w);
	r->ret = n < 0 ? (int)n : 0;
	r->n = n < 0 ? 0 : w.n;
}

/* Memory went back at once: the next read of the statistics is a fresh one. */
static void stats_stale(struct pool_service *s)
{
	pthread_mutex_lock(&s->stats_lock);
	s->stats_ns = 0;
	pthread_mutex_unlock(&s->stats_lock);
}

static void do_stats(struct pool_service *s, struct pool_msg *r)
{
	uint64_t now = vm_now_ns();

	pthread_mutex_lock(&s->stats_lock);
	if (!s->stats_ns || now - s->stats_ns >= POOL_SERVICE_STATS_MS * 1000000ULL) {
		s->stats_ret = mm_stats(s->pool->mm, &s->stats);
		s->stats_ns = now;
	}
	r->ret = s->stats_ret;
	memcpy(r->data, &s->stats, sizeof(s->stats));
	pthread_mutex_unlock(&s->stats_lock);
}

/* A slice of the pool's pageblocks, read at the slice's cost. */
static void do_walk(struct svc_client *c, const struct pool_msg *q, struct pool_msg *r)
{
	uint64_t pbs = c->svc->pool->size >> MM_PAGEBLOCK_SHIFT;
	struct walk_slice w = { (struct mm_pageblock_info *)r->data, q->a[0], 0 };

	if (q->a[0] >= pbs) {
		r->ret = -EINVAL;
		return;
	}
	w.n = pbs - q->a[0] < WALK_ITEMS ? pbs - q->a[0] : WALK_ITEMS;
	if (!walk_allowed(c, w.n)) {
		r->ret = -EAGAIN;
		return;
	}
	r->ret = mm_pageblock_walk_range(c->svc->pool->mm, w.first, w.n, walk_slice_fn, &w);
	r->n = r->ret ? 0 : (uint32_t)w.n;
}

/*
 * A VM process that ends gives everything back in one request: every
 * block the pool says it owns, pins dropped (its devices are gone), in
 * one pass instead of a round trip per frame. A move left undecided is
 * settled with it: both blocks were its own.
 */
static void do_release(struct svc_client *c, struct pool_msg *r)
{
	uint64_t freed;

	pthread_mutex_lock(&c->cb_lock);
	c->late.pending = false;
	freed = mm_free_owner(c->svc->pool->mm, c->owner);
	__atomic_store_n(&c->held, 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&c->cb_lock);
	count(c->svc, &c->svc->frames_released, freed);
	stats_stale(c->svc);
	r->a[0] = freed;
}

static void keep_report(struct svc_client *c, const struct pool_msg *q, size_t len)
{
	size_t n = len - sizeof(*q);
	char *text = malloc(n + 1);

	if (!text)
		return;
	memcpy(text, q->data, n);
	text[n] = '\0';
	pthread_mutex_lock(&c->svc->lock);
	free(c->report);
	c->report = text;
	c->report_ns = vm_now_ns();
	pthread_mutex_unlock(&c->svc->lock);
}

static size_t item_size(uint32_t op)
{
	switch (op) {
	case POOL_FREE:
	case POOL_PINNED:
	case POOL_INFO:
		return sizeof(uint32_t);
	default:
		return 0;
	}
}

/* One request; the reply's length, 0 for none, -1 for a malformed one. */
static ssize_t handle(struct svc_client *c, const struct pool_msg *q, size_t len,
		      struct pool_msg *r, struct reply_files *rf)
{
	size_t isz = item_size(q->op);

	*r = (struct pool_msg){ .op = q->op, .seq = q->seq };
	if (len < sizeof(*q) || (isz && (q->n > POOL_MAX_ITEMS || len != sizeof(*q) + q->n * isz)))
		return -1;
	switch (q->op) {
	case POOL_ALLOC:
		do_alloc(c, q, r, rf);
		return (ssize_t)(sizeof(*r) + (r->n + rf->n) * sizeof(uint32_t));
	case POOL_FREE:
		do_free(c, q, r);
		break;
	case POOL_SPLIT:
	case POOL_PIN:
	case POOL_UNPIN:
		do_frame_op(c, q, r);
		break;
	case POOL_PINNED: {
		size_t unalloc = 0;
		long p = frames_in_pool(c, q) ?
			mm_frames_pinned(c->svc->pool->mm, (const uint32_t *)q->data, q->n, &unalloc) :
			-EINVAL;

		r->ret = (int32_t)p;
		r->a[0] = unalloc;
		break;
	}
	case POOL_INFO:
		do_info(c, q, r);
		return (ssize_t)(sizeof(*r) + r->n * sizeof(struct pool_wire_info));
	case POOL_STATS:
		do_stats(c->svc, r);
		return (ssize_t)(sizeof(*r) + sizeof(struct mm_stats));
	case POOL_WALK_OWN:
		do_walk_own(c, q, r);
		return (ssize_t)(sizeof(*r) + r->n * sizeof(struct pool_wire_pb));
	case POOL_WALK:
		do_walk(c, q, r);
		return (ssize_t)(sizeof(*r) + r->n * sizeof(struct mm_pageblock_info));
	case POOL_VM_REPORT:
		keep_report(c, q, len);
		return 0;
	case POOL_RELEASE:
		do_release(c, r);
		break;
	default:
		return -1;
	}
	return (ssize_t)sizeof(*r);
}

/*
 * Who is at the other end, by the kernel's word: a pid in HELLO would be
 * the client's own claim. 0 if the kernel does not say.
 */
static pid_t peer_pid(int fd)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);

	return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) ? 0 : cr.pid;
}

/*
 * HELLO: who the client is and how much RAM it will ask for. The pool
 * lends no more than it has: the RAM of every client together stays
 * within the pool (gpmm run's rule for one VM, host-wide), so one client
 * asking for every frame stops at its own quota.
 */
static int hello(struct svc_client *c, struct pool_msg *m, char *why, size_t whylen)
{
	struct pool_service *s = c->svc;
	int fds[2] = { -1, -1 };
	ssize_t len;
	int ret;

	ret = pool_wire_wait(c->fd, POOL_SERVICE_HELLO_MS);
	if (ret <= 0) {
		snprintf(why, whylen, "no HELLO in time");
		return -ETIMEDOUT;
	}
	len = pool_wire_recv(c->fd, m, POOL_MSG_MAX, fds, 2);
	c->cb_fd = fds[0];
	c->slow_fd = fds[1];
	if (len < (ssize_t)sizeof(*m) || m->op != POOL_HELLO || m->a[0] != POOL_PROTO_VERSION ||
	    c->slow_fd < 0 || m->n >= POOL_NAME_MAX || len != (ssize_t)(sizeof(*m) + m->n)) {
		snprintf(why, whylen, "a malformed HELLO");
		return -EPROTO;
	}
	c->ram_bytes = m->a[1];
	c->pid = peer_pid(c->fd);
	c->kind = m->a[3] == POOL_CLIENT_TENANT ? POOL_CLIENT_TENANT : POOL_CLIENT_VM;
	memcpy(c->name, m->data, m->n);
	c->name[m->n] = '\0';
	for (char *p = c->name; *p; p++)
		if (*p < 0x20 || *p > 0x7e)
			*p = '?';
	if (!c->ram_bytes || c->ram_bytes % MM_PAGEBLOCK_SIZE) {
		snprintf(why, whylen, "RAM must be a multiple of 2 MiB");
		return -EINVAL;
	}
	ret = pool_admit(s->pool, c->ram_bytes, why, whylen);
	if (ret < 0)
		return ret;
	pthread_mutex_lock(&s->lock);
	s->reserved_bytes += c->ram_bytes;
	pthread_mutex_unlock(&s->lock);
	ret = mm_owner_register(s->pool->mm, &client_ops, c, &c->owner);
	if (ret) {
		pthread_mutex_lock(&s->lock);
		s->reserved_bytes -= c->ram_bytes;
		pthread_mutex_unlock(&s->lock);
		pool_unadmit(s->pool, c->ram_bytes);
		snprintf(why, whylen, "no owner id left: %s", strerror(-ret));
		return ret;
	}
	c->registered = true;
	c->quota = (c->ram_bytes >> MM_PAGE_SHIFT) + POOL_SERVICE_SLACK_FRAMES;
	/*
	 * The quota in pageblocks, kept by the pool where it hands them out:
	 * a pin or a split leaves a pageblock the client's, so a frame count
	 * alone would let it hold one frame in every pageblock of the pool.
	 */
	ret = mm_owner_set_limit(s->pool->mm, c->owner, c->quota >> MM_PAGEBLOCK_ORDER);
	if (ret) {
		snprintf(why, whylen, "cannot limit the client: %s", strerror(-ret));
		return ret;
	}
	c->walk_budget = (double)(s->pool->size >> MM_PAGEBLOCK_SHIFT) * POOL_SERVICE_WALKS_PER_S;
	c->walk_ns = vm_now_ns();
	*m = (struct pool_msg){ .op = POOL_HELLO, .seq = m->seq,
		.a = { s->pool->size >> MM_PAGE_SHIFT, c->owner,
		       (s->pool->host.huge ? POOL_HOST_HUGE : 0) | s->pool->host.release_ms |
		       (uint64_t)(s->pool->host.overcommit_pct & 0xffff) << POOL_HOST_OVERCOMMIT_SHIFT,
		       c->quota } };
	return pool_wire_send(c->fd, m, sizeof(*m), NULL, 0);
}

/* A refusal says why, in the reply's data, before the connection closes. */
static void refuse(struct svc_client *c, struct pool_msg *m, int err, const char *why)
{
	size_t n = strlen(why);

	*m = (struct pool_msg){ .op = POOL_HELLO, .ret = err, .n = (uint32_t)n };
	memcpy(m->data, why, n);
	if (pool_wire_send(c->fd, m, sizeof(*m) + n, NULL, 0))
		return;		/* the client is gone already */
}

/*
 * The VM process is gone (its socket closed with it) or we cut it off:
 * no request reaches it any more, a callback in flight ends (its socket is
 * shut), and every frame the pool says it owns goes back.
 */
static void client_gone(struct svc_client *c)
{
	struct pool_service *s = c->svc;
	uint64_t freed = 0;

	__atomic_store_n(&c->dead, true, __ATOMIC_RELEASE);
	if (c->cb_fd >= 0)
		shutdown(c->cb_fd, SHUT_RDWR);
	if (c->registered) {
		mm_owner_unregister(s->pool->mm, c->owner);
		freed = mm_free_owner(s->pool->mm, c->owner);
		stats_stale(s);
	}
	pthread_mutex_lock(&s->lock);
	for (struct svc_client **pp = &s->clients; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	if (c->registered) {
		pool_unadmit(s->pool, c->ram_bytes);
		s->reserved_bytes -= c->ram_bytes;
		s->frames_reclaimed += freed;
		s->clients_died += freed > 0;
	}
	s->nr_clients--;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	if (c->cb_fd >= 0)
		close(c->cb_fd);
	if (c->slow_fd >= 0)
		close(c->slow_fd);
	close(c->fd);
	pthread_mutex_destroy(&c->cb_lock);
	free(c->report);
	free(c);
}

/* Answer requests on @fd in order until the client goes. */
static void serve(struct svc_client *c, int fd, struct pool_msg *q, struct pool_msg *r)
{
	for (;;) {
		ssize_t len = pool_wire_recv(fd, q, POOL_MSG_MAX, NULL, 0), out;
		struct reply_files rf = { .n = 0 };
		int sent;

		if (len <= 0 && len != -EMSGSIZE && len != -EINTR)
			break;
		out = len > 0 ? handle(c, q, (size_t)len, r, &rf) : -1;
		if (out < 0) {
			/* garbage or a half message: refused, the client stays */
			count(c->svc, &c->svc->bad_messages, 1);
			*r = (struct pool_msg){ .op = len > 0 ? q->op : 0,
						.seq = len > 0 ? q->seq : 0, .ret = -EPROTO };
			out = sizeof(*r);
		}
		sent = out ? pool_wire_send(fd, r, (size_t)out, rf.fd, rf.n) : 0;
		for (unsigned int i = 0; i < rf.n; i++)
			close(rf.fd[i]);
		if (sent)
			break;
	}
}

static void *slow_thread(void *arg)
{
	struct svc_client *c = arg;
	struct pool_msg *q = malloc(POOL_MSG_MAX), *r = malloc(POOL_MSG_MAX);

	if (q && r)
		serve(c, c->slow_fd, q, r);
	free(q);
	free(r);
	/* either channel ending ends the client */
	shutdown(c->fd, SHUT_RDWR);
	return NULL;
}

static void *client_thread(void *arg)
{
	struct svc_client *c = arg;
	struct pool_msg *q = malloc(POOL_MSG_MAX), *r = malloc(POOL_MSG_MAX);
	char why[160];
	int ret;

	ret = q && r ? hello(c, q, why, sizeof(why)) : -ENOMEM;
	if (ret) {
		if (q && r && ret != -EPIPE)
			refuse(c, q, ret, why);
		count(c->svc, &c->svc->refused, 1);
	} else {
		c->slow_running = !pthread_create(&c->slow_thread, NULL, slow_thread, c);
		if (c->slow_running)
			serve(c, c->fd, q, r);
	}
	if (c->slow_running) {
		shutdown(c->slow_fd, SHUT_RDWR);
		pthread_join(c->slow_thread, NULL);
	}
	free(q);
	free(r);
	client_gone(c);
	return NULL;
}

static void accept_one(struct pool_service *s)
{
	int fd = unix_accept(s->listen_fd, s->group);
	struct svc_client *c;
	pthread_attr_t attr;
	pthread_t t;

	if (fd < 0) {
		pthread_mutex_lock(&s->lock);
		s->refused += fd == -EACCES;
		pthread_mutex_unlock(&s->lock);
		return;
	}
	pthread_mutex_lock(&s->lock);
	s->connections++;
	if (s->stopping || s->nr_clients >= POOL_SERVICE_MAX_CLIENTS) {
		s->refused++;
		pthread_mutex_unlock(&s->lock);
		close(fd);
		return;
	}
	pthread_mutex_unlock(&s->lock);
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return;
	}
	c->svc = s;
	c->fd = fd;
	c->cb_fd = c->slow_fd = -1;
	pthread_mutex_init(&c->cb_lock, NULL);
	pthread_mutex_lock(&s->lock);
	c->next = s->clients;
	s->clients = c;
	s->nr_clients++;
	pthread_mutex_unlock(&s->lock);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 << 10);
	if (pthread_create(&t, &attr, client_thread, c))
		client_gone(c);
	pthread_attr_destroy(&attr);
}

static void *accept_thread(void *arg)
{
	struct pool_service *s = arg;
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	for (;;) {
		struct pollfd p[2] = { { .fd = s->listen_fd, .events = POLLIN },
				       { .fd = s->stop_efd, .events = POLLIN } };

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[1].revents)
			break;
		if (p[0].revents)
			accept_one(s);
	}
	return NULL;
}

int pool_service_start(struct pool *pool, const char *path, unsigned int answer_ms,
		       gid_t group, struct pool_service **out, char *err, size_t errlen)
{
	struct pool_service *s;
	sigset_t all, old;
	int ret;

	if (!pool->mm) {
		snprintf(err, errlen, "only a process that owns its pool can serve it");
		return -EINVAL;
	}
	/*
	 * VM processes of different owners never share a pageblock, and each
	 * is given the files of its own pageblocks only, never the pool's.
	 */
	ret = host_raise_nofile(pool->size >> MM_PAGEBLOCK_SHIFT, err, errlen);
	if (ret)
		return ret;
	ret = mm_set_owned_blocks(pool->mm);
	if (!ret)
		ret = mm_set_pageblock_files(pool->mm);
	if (ret) {
		snprintf(err, errlen, "the pool must be served before it is used: %s",
			 strerror(-ret));
		return ret;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->pool = pool;
	s->answer_ms = answer_ms ? answer_ms : POOL_SERVICE_ANSWER_MS;
	s->group = group;
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_init(&s->stats_lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	s->stop_efd = eventfd(0, EFD_CLOEXEC);
	s->listen_fd = unix_listen(path, SOCK_SEQPACKET, err, errlen);
	if (s->listen_fd < 0 || s->stop_efd < 0) {
		ret = s->listen_fd < 0 ? s->listen_fd : -errno;
		goto fail;
	}
	snprintf(s->path, sizeof(s->path), "%s", path);
	if (group != UNIX_NO_GROUP) {
		ret = unix_share_with_group(path, group, err, errlen);
		if (ret) {
			unlink(path);
			goto fail;
		}
	}
	/* client threads inherit a mask with every signal blocked */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	ret = -pthread_create(&s->accept_thread, NULL, accept_thread, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		snprintf(err, errlen, "cannot start the pool service: %s", strerror(-ret));
		unlink(path);
		goto fail;
	}
	*out = s;
	return 0;
fail:
	if (s->listen_fd >= 0)
		close(s->listen_fd);
	if (s->stop_efd >= 0)
		close(s->stop_efd);
	free(s);
	return ret;
}

void pool_service_stop(struct pool_service *s)
{
	if (!s)
		return;
	if (eventfd_write(s->stop_efd, 1) == 0)
		pthread_join(s->accept_thread, NULL);
	pthread_mutex_lock(&s->lock);
	s->stopping = true;
	for (struct svc_client *c = s->clients; c; c = c->next)
		shutdown(c->fd, SHUT_RDWR);
	while (s->nr_clients)
		pthread_cond_wait(&s->cond, &s->lock);
	pthread_mutex_unlock(&s->lock);
	close(s->listen_fd);
	close(s->stop_efd);
	unlink(s->path);
	pthread_mutex_destroy(&s->lock);
	pthread_mutex_destroy(&s->stats_lock);
	pthread_cond_destroy(&s->cond);
	free(s);
}

/*
 * How old a client's last report is, in ms; svc->lock held. Both times
 * come from the one monotonic clock and are read under the lock the
 * report is kept under, so the age is never negative.
 */
static json_int_t __report_age_ms(const struct svc_client *c, uint64_t now)
{
	return now > c->report_ns ? (json_int_t)((now - c->report_ns) / 1000000ULL) : 0;
}

json_t *pool_service_clients_json(struct pool_service *s)
{
	json_t *arr = json_array(), *e;
	size_t i;

	if (!s)
		return arr;
	pthread_mutex_lock(&s->lock);
	for (struct svc_client *c = s->clients; c; c = c->next) {
		json_t *j;

		if (!c->registered)
			continue;
		j = json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
			"name", c->name, "kind", c->kind == POOL_CLIENT_TENANT ? "tenant" : "vm",
			"pid", (json_int_t)c->pid, "owner", (json_int_t)c->owner,
			"ram_bytes", (json_int_t)c->ram_bytes,
			"frames_held", (json_int_t)__atomic_load_n(&c->held, __ATOMIC_RELAXED),
			"quota_frames", (json_int_t)c->quota,
			"moves_asked", (json_int_t)__atomic_load_n(&c->moves_asked, __ATOMIC_RELAXED),
			"moves_late", (json_int_t)__atomic_load_n(&c->moves_late, __ATOMIC_RELAXED));
		/* no report yet: no age, rather than a made-up one */
		if (c->report)
			json_object_set_new(j, "report_age_ms",
					    json_integer(__report_age_ms(c, vm_now_ns())));
		json_object_set_new(j, "vm", c->report ? json_loads(c->report, 0, NULL) : json_null());
		json_array_append_new(arr, j);
	}
	pthread_mutex_unlock(&s->lock);
	/*
	 * The pool's walk, not our count: a second source for the same frames.
	 * Outside service.lock, which is never held across a call into mm.
	 */
	json_array_foreach(arr, i, e)
		json_object_set_new(e, "frames_owned", json_integer((json_int_t)mm_owner_pages(
			s->pool->mm, (uint32_t)json_integer_value(json_object_get(e, "owner")))));
	return arr;
}

json_t *pool_service_json(struct pool_service *s)
{
	json_t *j;

	if (!s)
		return json_null();
	pthread_mutex_lock(&s->lock);
	j = json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
		"socket", s->path, "clients", (json_int_t)s->nr_clients,
		"lent_bytes", (json_int_t)s->reserved_bytes,
		"lendable_bytes", (json_int_t)pool_lendable(s->pool),
		"admitted_bytes", (json_int_t)__atomic_load_n(&s->pool->admitted, __ATOMIC_RELAXED),
		"frames_released", (json_int_t)s->frames_released,
		"walks_refused", (json_int_t)s->walks_refused,
		"connections", (json_int_t)s->connections,
		"refused", (json_int_t)s->refused,
		"bad_messages", (json_int_t)s->bad_messages,
		"clients_died_holding_frames", (json_int_t)s->clients_died,
		"frames_reclaimed", (json_int_t)s->frames_reclaimed,
		"moves_timed_out", (json_int_t)s->moves_timed_out,
		"answer_ms", (json_int_t)s->answer_ms);
	pthread_mutex_unlock(&s->lock);
	return j;
}

unsigned int pool_service_owners(struct pool_service *s, uint32_t *ids,
				 char (*names)[64], unsigned int max)
{
	unsigned int n = 0;

	if (!s)
		return 0;
	pthread_mutex_lock(&s->lock);
	for (struct svc_client *c = s->clients; c && n < max; c = c->next) {
		if (!c->registered)
			continue;
		ids[n] = c->owner;
		snprintf(names[n], 64, "%s", c->name);
		n++;
	}
	pthread_mutex_unlock(&s->lock);
	return n;
}
