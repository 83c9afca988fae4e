// SPDX-License-Identifier: GPL-2.0
/*
 * Hostile clients of the pool service: each test is a finding of the
 * isolation review (issue 26) played by a raw client on the socket, and
 * checked from the pool's own walk (mm_owner_pages), never from the
 * service's count alone.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "tests/suite.h"
#include "tests/unit/svc_fixture.h"
#include "vmm/core/vm.h"

#define CYCLES		100000	/* connections with HELLO, beyond the 65535 owner slots */

/* The service's own count of what @owner holds (clients_json). */
static json_int_t frames_held(struct svc_fixture *f, uint32_t owner)
{
	json_t *arr = pool_service_clients_json(f->svc), *e;
	json_int_t held = -1;
	size_t i;

	json_array_foreach(arr, i, e)
		if (json_integer_value(json_object_get(e, "owner")) == owner)
			held = json_integer_value(json_object_get(e, "frames_held"));
	json_decref(arr);
	return held;
}

/* Allocate @n order-@order blocks for a raw client; how many came. */
static long raw_alloc(struct raw_client *rc, struct pool_msg *m, unsigned int order, unsigned int n,
		      uint32_t *out)
{
	*m = (struct pool_msg){ .op = POOL_ALLOC, .a = { order, n, POOL_ALLOC_NOWAIT } };
	if (raw_call(rc->fd, m, sizeof(*m)))
		return m->ret < 0 ? m->ret : -EIO;
	memcpy(out, m->data, m->n * sizeof(uint32_t));
	return m->n;
}

static int raw_free(struct raw_client *rc, struct pool_msg *m, const uint32_t *frames, unsigned int n)
{
	*m = (struct pool_msg){ .op = POOL_FREE, .n = n };
	memcpy(m->data, frames, n * sizeof(uint32_t));
	return raw_call(rc->fd, m, sizeof(*m) + n * sizeof(uint32_t)) ?: (int)m->a[0];
}

/* Half of 1024 frames held, one in two: compaction wants to move them. */
static void hold_sparse(struct raw_client *rc, struct pool_msg *m)
{
	static uint32_t frames[1024], odd[512];

	CU_ASSERT_FATAL(raw_alloc(rc, m, 0, 1024, frames) == 1024);
	for (int i = 0; i < 512; i++)
		odd[i] = frames[2 * i + 1];
	CU_ASSERT_FATAL(raw_free(rc, m, odd, 512) == 0);
}

/*
 * Finding 2: a client that answers a move with -EINPROGRESS itself (what
 * only the service's time-out may decide) kept the target block as well,
 * uncounted; each compaction gave it one more.
 */
static void test_einprogress_answer_keeps_nothing(void)
{
	struct pool_msg *m = calloc(1, POOL_MSG_MAX);
	struct answerer ans = { .answer = -EINPROGRESS };
	struct svc_fixture f;
	struct raw_client rc;

	CU_ASSERT_FATAL(m != NULL);
	CU_ASSERT_FATAL(fixture_up(&f, 32, 0));
	CU_ASSERT_FATAL(raw_hello(f.path, 4 << 20, &rc) == 0);
	hold_sparse(&rc, m);
	ans.cb = rc.cb;
	CU_ASSERT_FATAL(pthread_create(&ans.t, NULL, answer_with, &ans) == 0);
	for (int i = 0; i < 3; i++)
		mm_compact_all(f.pool->mm);
	__atomic_store_n(&ans.stop, true, __ATOMIC_RELEASE);
	pthread_join(ans.t, NULL);
	CU_ASSERT(__atomic_load_n(&ans.answered, __ATOMIC_ACQUIRE) >= 1);
	/* the pool's walk and the service's count agree: what it held, no more */
	CU_ASSERT_EQUAL(mm_owner_pages(f.pool->mm, rc.owner), 512);
	CU_ASSERT_EQUAL(frames_held(&f, rc.owner), 512);
	raw_close(&rc);
	CU_ASSERT(wait_clients(&f, 0));
	CU_ASSERT_EQUAL(free_pages(&f), (32 << 20) >> MM_PAGE_SHIFT);
	fixture_down(&f);
	free(m);
}

/*
 * Finding 2, the silent side: a client at its quota that never answers
 * keeps no more than its quota. Its pageblocks are counted by the pool
 * where it hands them out, and a move it leaves undecided is within
 * pageblocks it holds already, charged to it.
 */
static void test_silent_client_at_quota(void)
{
	struct pool_msg *m = calloc(1, POOL_MSG_MAX);
	struct svc_fixture f;
	struct raw_client rc;
	uint32_t blocks[8];
	uint64_t limit;
	long got;

	CU_ASSERT_FATAL(m != NULL);
	CU_ASSERT_FATAL(fixture_up(&f, 32, 100));
	CU_ASSERT_FATAL(raw_hello(f.path, 4 << 20, &rc) == 0);
	hold_sparse(&rc, m);
	/* whole blocks up to the quota, in pageblocks */
	limit = rc.quota >> MM_PAGEBLOCK_ORDER;
	while ((got = raw_alloc(&rc, m, MM_PAGEBLOCK_ORDER, 1, blocks)) == 1)
		;
	CU_ASSERT_EQUAL(got, -EDQUOT);
	CU_ASSERT_EQUAL_FATAL(mm_owner_pageblocks(f.pool->mm, rc.owner), limit);
	mm_compact_all(f.pool->mm);
	mm_compact_all(f.pool->mm);
	CU_ASSERT(service_counter(&f, "moves_timed_out") <= 1);
	CU_ASSERT_EQUAL(mm_owner_pageblocks(f.pool->mm, rc.owner), limit);
	CU_ASSERT(mm_owner_pages(f.pool->mm, rc.owner) <= rc.quota);
	CU_ASSERT_EQUAL(frames_held(&f, rc.owner),
			(json_int_t)mm_owner_pages(f.pool->mm, rc.owner));
	raw_close(&rc);
	CU_ASSERT(wait_clients(&f, 0));
	CU_ASSERT_EQUAL(free_pages(&f), (32 << 20) >> MM_PAGE_SHIFT);
	fixture_down(&f);
	free(m);
}

/* wait_clients(0) polling finely: 6250 waits of 10 ms would be a minute */
static bool wait_clients_soon(struct svc_fixture *f)
{
	for (int i = 0; i < 100000; i++) {
		if (service_counter(f, "clients") == 0)
			return true;
		usleep(100);
	}
	return false;
}

/*
 * Finding 4: owner ids were never reused, so 65536 connections that said
 * HELLO and closed left the service refusing every VM after them. Live
 * clients stay well under POOL_SERVICE_MAX_CLIENTS: each batch is waited
 * out before the next.
 */
static void test_owner_ids_come_back(void)
{
	struct svc_fixture f;
	struct raw_client rc;
	uint32_t seen_first = 0;
	unsigned int admitted = 0;
	char why[256] = "";

	CU_ASSERT_FATAL(fixture_up(&f, 64, 0));
	for (unsigned int i = 0; i < CYCLES; i++) {
		if (raw_hello_why(f.path, 2 << 20, &rc, why, sizeof(why)) == 0) {
			admitted++;
			if (!seen_first)
				seen_first = rc.owner;
			/* a slot used again names a new owner: never the first id */
			else if (rc.owner == seen_first)
				break;
			raw_close(&rc);
		}
		if (i % 16 == 15 && !wait_clients_soon(&f))
			break;
	}
	if (admitted != CYCLES)
		fprintf(stderr, "admitted %u of %u: %s\n", admitted, CYCLES, why);
	CU_ASSERT_EQUAL(admitted, CYCLES);
	CU_ASSERT(wait_clients(&f, 0));
	CU_ASSERT_EQUAL(raw_hello(f.path, 8 << 20, &rc), 0);
	raw_close(&rc);
	fixture_down(&f);
}

struct racer {
	struct raw_client *rc;
	bool stop;
	unsigned long ops;
};

/*
 * Pins and unpins both pageblocks of the pool in turn, on the client's
 * slow channel, whoever holds them: a pin that passes the owner check and
 * lands after the block changed hands stays (the unpin is refused then).
 */
static void *pin_racer(void *arg)
{
	struct racer *r = arg;
	struct pool_msg m;
	static const uint32_t ops[] = { POOL_PIN, POOL_UNPIN };

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		for (unsigned int o = 0; o < 2; o++) {
			m = (struct pool_msg){ .op = ops[o], .a = { (r->ops & 1) * MM_PAGEBLOCK_PAGES } };
			if (raw_call(r->rc->slow, &m, sizeof(m)) == -EIO)
				return NULL;
		}
		r->ops++;
	}
	return NULL;
}

/*
 * Finding 5: ownership was checked, then the split or pin done in a second
 * step, so a client racing FREE on one channel against SPLIT/PIN on the
 * other could act on a block just given to another VM. A victim takes
 * every block the racer frees; none of them may ever be pinned. (A race:
 * the old code lost it only when the window was hit; the new one cannot.)
 */
static void test_free_split_race(void)
{
	struct pool_msg *m = calloc(1, POOL_MSG_MAX), *v = calloc(1, POOL_MSG_MAX);
	struct svc_fixture f;
	struct raw_client rc, victim;
	struct racer racer = { .rc = &rc };
	unsigned int harmed = 0;
	pthread_t t;
	uint32_t blk;

	CU_ASSERT_FATAL(m && v);
	CU_ASSERT_FATAL(fixture_up(&f, 4, 0));
	CU_ASSERT_FATAL(raw_hello(f.path, 2 << 20, &rc) == 0);
	CU_ASSERT_FATAL(raw_hello(f.path, 2 << 20, &victim) == 0);
	CU_ASSERT_FATAL(pthread_create(&t, NULL, pin_racer, &racer) == 0);
	for (int i = 0; i < 2000 && !harmed; i++) {
		struct mm_frame_info info;
		uint32_t vb;
		int left = 1;

		if (raw_alloc(&rc, m, MM_PAGEBLOCK_ORDER, 1, &blk) != 1)
			continue;
		/* its own pin refuses the free for a moment: try again, bounded */
		for (int k = 0; k < 1000 && left; k++)
			left = raw_free(&rc, m, &blk, 1);
		if (left || raw_alloc(&victim, v, MM_PAGEBLOCK_ORDER, 1, &vb) != 1)
			continue;
		CU_ASSERT_FATAL(mm_frame_info(f.pool->mm, vb, &info) == 0);
		harmed += info.order != MM_PAGEBLOCK_ORDER || info.pins;
		if (raw_free(&victim, v, &vb, 1))
			harmed++;
	}
	__atomic_store_n(&racer.stop, true, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	CU_ASSERT_EQUAL(harmed, 0);
	CU_ASSERT(racer.ops > 0);
	raw_close(&rc);
	raw_close(&victim);
	CU_ASSERT(wait_clients(&f, 0));
	CU_ASSERT_EQUAL(free_pages(&f), (4 << 20) >> MM_PAGE_SHIFT);
	fixture_down(&f);
	free(m);
	free(v);
}

/*
 * Finding 6: POOL_WALK held the pool's lock over the whole pool for each
 * slice, as often as a client cared to ask. Now a client walks at most
 * POOL_SERVICE_WALKS_PER_S pools a second (and a burst as large): over
 * any stretch of time, what it was let read stays within that, however
 * fast or slow this machine runs the loop.
 */
static void test_walks_are_rate_limited(void)
{
	struct pool_msg *m = calloc(1, POOL_MSG_MAX);
	struct svc_fixture f;
	struct raw_client rc;
	uint64_t pbs = (64 << 20) >> MM_PAGEBLOCK_SHIFT, walked = 0, t0, t1;
	unsigned int refused = 0;

	CU_ASSERT_FATAL(m != NULL);
	CU_ASSERT_FATAL(fixture_up(&f, 64, 0));
	CU_ASSERT_FATAL(raw_hello(f.path, 2 << 20, &rc) == 0);
	t0 = vm_now_ns();
	for (int i = 0; i < 200; i++) {
		int ret;

		*m = (struct pool_msg){ .op = POOL_WALK, .a = { 0 } };
		ret = raw_call(rc.fd, m, sizeof(*m));
		if (ret == 0)
			walked += m->n;
		else
			refused += ret == -EAGAIN;
	}
	t1 = vm_now_ns();
	CU_ASSERT(walked + refused * pbs == 200 * pbs);
	CU_ASSERT((double)walked <= (double)pbs * POOL_SERVICE_WALKS_PER_S *
					(1.0 + (double)(t1 - t0) / 1e9) + 1);
	CU_ASSERT_EQUAL(service_counter(&f, "walks_refused"), refused);
	/* its own pageblocks from past the pool's end: none, and no error */
	usleep(300000);
	*m = (struct pool_msg){ .op = POOL_WALK_OWN, .a = { 1ULL << 40 } };
	CU_ASSERT_EQUAL(raw_call(rc.fd, m, sizeof(*m)), 0);
	CU_ASSERT_EQUAL(m->n, 0);
	raw_close(&rc);
	fixture_down(&f);
	free(m);
}

/*
 * Finding 6, teardown: a VM process that ends gives every frame back in
 * one request, however many it holds (a round trip per frame was 49 s
 * for 16 GiB). Prints the time it took, for the record; asserts the count.
 */
static void test_release_in_one_request(void)
{
	struct svc_fixture f;
	struct pool_client_info info;
	struct pool_client *c;
	static uint32_t frames[1024];
	struct mm_stats st;
	uint64_t pages = (1ULL << 30) >> MM_PAGE_SHIFT, got = 0, t0;
	long n;

	/* a 1 GiB VM, less the quota's slack so that it fits */
	CU_ASSERT_FATAL(fixture_up(&f, 1024, 0));
	c = connect_client(&f, "ending", (1ULL << 30) - (8 << 20), &info);
	CU_ASSERT_FATAL(c != NULL);
	while (got < pages - 2048 && (n = pool_client_alloc(c, 0, 1024, POOL_ALLOC_NOWAIT,
							     frames, NULL)) > 0)
		got += (uint64_t)n;
	CU_ASSERT_FATAL(got >= pages - 2048);
	CU_ASSERT_EQUAL(mm_owner_pages(f.pool->mm, info.owner), got);
	/* a read of the statistics now, to be cached */
	CU_ASSERT_EQUAL(pool_client_stats(c, &st), 0);
	CU_ASSERT_EQUAL(st.free_pages, pages - got);
	t0 = vm_now_ns();
	CU_ASSERT_EQUAL(pool_client_release(c), (long)got);
	fprintf(stderr, "    released %llu frames in one request: %.1f ms\n",
		(unsigned long long)got, (double)(vm_now_ns() - t0) / 1e6);
	CU_ASSERT_EQUAL(mm_owner_pages(f.pool->mm, info.owner), 0);
	CU_ASSERT_EQUAL(frames_held(&f, info.owner), 0);
	CU_ASSERT_EQUAL(service_counter(&f, "frames_released"), (json_int_t)got);
	/* what the client reads next says so, however fresh the last read was */
	CU_ASSERT_EQUAL(pool_client_stats(c, &st), 0);
	CU_ASSERT_EQUAL(st.free_pages, pages);
	CU_ASSERT_EQUAL(free_pages(&f), pages);
	/* a second release has nothing to give; nothing is given back twice when it ends */
	CU_ASSERT_EQUAL(pool_client_release(c), 0);
	CU_ASSERT_EQUAL(service_counter(&f, "frames_released"), (json_int_t)got);
	CU_ASSERT_EQUAL(pool_client_drain(c), 0);
	pool_client_close(c);
	CU_ASSERT(wait_clients(&f, 0));
	CU_ASSERT_EQUAL(service_counter(&f, "clients_died_holding_frames"), 0);
	fixture_down(&f);
}

/*
 * Finding 7: the service admitted its VM processes against its own count
 * only, beside the daemon's in-process VMs (vm_create admits through the
 * same pool_admit): the pool could be promised twice.
 */
static void test_one_admission(void)
{
	struct svc_fixture f;
	struct raw_client rc;
	char why[256] = "", err[256];

	CU_ASSERT_FATAL(fixture_up(&f, 64, 0));
	/* an in-process VM of 40 MiB, as gpmm-vm-create makes one */
	CU_ASSERT_EQUAL_FATAL(pool_admit(f.pool, 40 << 20, err, sizeof(err)), 0);
	CU_ASSERT_NOT_EQUAL(raw_hello_why(f.path, 32 << 20, &rc, why, sizeof(why)), 0);
	CU_ASSERT(strstr(why, "do not fit") != NULL);
	CU_ASSERT_EQUAL(raw_hello(f.path, 24 << 20, &rc), 0);
	/* and the other way round: the process's RAM counts for the next VM */
	CU_ASSERT_EQUAL(pool_admit(f.pool, 2 << 20, err, sizeof(err)), -ENOSPC);
	CU_ASSERT(strstr(err, "the pool lends 64 of 64 MiB") != NULL);
	CU_ASSERT_EQUAL(service_counter(&f, "admitted_bytes"), 64 << 20);
	raw_close(&rc);
	CU_ASSERT(wait_clients(&f, 0));
	CU_ASSERT_EQUAL(service_counter(&f, "admitted_bytes"), 40 << 20);
	pool_unadmit(f.pool, 40 << 20);
	fixture_down(&f);
}

/*
 * Finding 3: PIN and SPLIT had no limit. ALLOC order 9, SPLIT, FREE 511,
 * PIN 1 cost one frame of quota per pageblock, and a client with 2 MiB of
 * RAM left a pinned frame in every pageblock of the pool, so no other VM
 * got a 2 MiB block even after compaction. Now the pageblock stays the
 * pinner's and counts against its quota in pageblocks.
 */
static void test_pins_fragment_only_own_blocks(void)
{
	static uint32_t rest[MM_PAGEBLOCK_PAGES - 1];
	struct pool_msg *m = calloc(1, POOL_MSG_MAX);
	struct svc_fixture f;
	struct raw_client attacker, victim;
	unsigned int pinned = 0, got = 0;
	uint32_t b;

	CU_ASSERT_FATAL(m != NULL);
	CU_ASSERT_FATAL(fixture_up(&f, 64, 0));
	CU_ASSERT_FATAL(raw_hello(f.path, 2 << 20, &attacker) == 0);
	for (int i = 0; i < 64; i++) {
		if (raw_alloc(&attacker, m, MM_PAGEBLOCK_ORDER, 1, &b) != 1)
			break;
		*m = (struct pool_msg){ .op = POOL_SPLIT, .a = { b } };
		CU_ASSERT_FATAL(raw_call(attacker.fd, m, sizeof(*m)) == 0);
		for (uint32_t k = 0; k < MM_PAGEBLOCK_PAGES - 1; k++)
			rest[k] = b + 1 + k;
		CU_ASSERT_FATAL(raw_free(&attacker, m, rest, MM_PAGEBLOCK_PAGES - 1) == 0);
		*m = (struct pool_msg){ .op = POOL_PIN, .a = { b } };
		CU_ASSERT_FATAL(raw_call(attacker.fd, m, sizeof(*m)) == 0);
		pinned++;
	}
	CU_ASSERT(pinned <= attacker.quota >> MM_PAGEBLOCK_ORDER);
	CU_ASSERT_EQUAL(mm_owner_pageblocks(f.pool->mm, attacker.owner), pinned);
	/* a VM of 32 MiB gets all of its RAM as 2 MiB blocks */
	mm_compact_all(f.pool->mm);
	CU_ASSERT_FATAL(raw_hello(f.path, 32 << 20, &victim) == 0);
	for (int i = 0; i < 16; i++)
		got += raw_alloc(&victim, m, MM_PAGEBLOCK_ORDER, 1, &b) == 1;
	CU_ASSERT_EQUAL(got, 16);
	raw_close(&attacker);
	raw_close(&victim);
	CU_ASSERT(wait_clients(&f, 0));
	CU_ASSERT_EQUAL(free_pages(&f), (64 << 20) >> MM_PAGE_SHIFT);
	fixture_down(&f);
	free(m);
}

struct own_seen {
	uint32_t owner;
	uint64_t pageblocks, others;
};

static void own_seen_fn(void *opaque, uint64_t pb, const struct mm_pageblock_info *info)
{
	struct own_seen *s = opaque;

	s->pageblocks++;
	s->others += info->owner != s->owner;
}

/*
 * Finding 6, the report: each VM's report read the whole pool under its
 * lock every second. A VM process now reads its own pageblocks only (the
 * pool's list of them), whatever else the pool holds.
 */
#define SECRET		0x5ec7e75ec7e75ec7ULL
#define MAX_FILES	64

/* The inodes of files a process was given, to tell them apart. */
struct inodes {
	ino_t ino[MAX_FILES];
	int fd[MAX_FILES];
	unsigned int n;
};

static bool inodes_have(const struct inodes *s, ino_t ino)
{
	for (unsigned int i = 0; i < s->n; i++)
		if (s->ino[i] == ino)
			return true;
	return false;
}

/* Keep @fd (a copy) if it is a file not seen yet; else close it. */
static void inodes_add(struct inodes *s, int fd)
{
	struct stat st;

	if (fd < 0)
		return;
	if (fstat(fd, &st) || inodes_have(s, st.st_ino) || s->n == MAX_FILES) {
		close(fd);
		return;
	}
	s->ino[s->n] = st.st_ino;
	s->fd[s->n++] = fd;
}

/* Does any file in @s hold the victim's secret? Each read whole. */
static bool files_hold_secret(const struct inodes *s)
{
	for (unsigned int i = 0; i < s->n; i++) {
		struct stat st;
		const uint64_t *p;
		bool found = false;

		if (fstat(s->fd[i], &st) || !st.st_size)
			continue;
		p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, s->fd[i], 0);
		if (p == MAP_FAILED)
			continue;
		for (size_t k = 0; k < (size_t)st.st_size / sizeof(*p) && !found; k++)
			found = (p[k] & ~0xffffffffULL) == (SECRET & ~0xffffffffULL);
		munmap((void *)p, (size_t)st.st_size);
		if (found)
			return true;
	}
	return false;
}

static uint64_t files_bytes(const struct inodes *s)
{
	uint64_t bytes = 0;
	struct stat st;

	for (unsigned int i = 0; i < s->n; i++)
		if (!fstat(s->fd[i], &st))
			bytes += (uint64_t)st.st_size;
	return bytes;
}

static void inodes_close(struct inodes *s)
{
	for (unsigned int i = 0; i < s->n; i++)
		close(s->fd[i]);
	s->n = 0;
}

/* A raw client takes @rounds of 256 frames; the files that came with them. */
static void raw_take_files(struct raw_client *rc, struct pool_msg *m, int rounds,
			   struct inodes *got)
{
	for (int r = 0; r < rounds; r++) {
		int fds[POOL_MSG_FDS];

		*m = (struct pool_msg){ .op = POOL_ALLOC, .a = { 0, 256, POOL_ALLOC_NOWAIT } };
		if (raw_call_fds(rc->fd, m, sizeof(*m), fds, POOL_MSG_FDS))
			break;
		for (int i = 0; i < POOL_MSG_FDS; i++)
			inodes_add(got, fds[i]);
	}
}

/*
 * Finding 1: HELLO handed every VM process the whole pool's memfd; a raw
 * client read a victim's page and overwrote it. Now a client is given
 * the files of its own pageblocks and nothing else: HELLO carries no
 * descriptor, no file a client gets holds a byte the victim wrote, what
 * it gets adds up to its quota at most, and the files the victim kept of
 * pageblocks it gave back are empty (truncated) before anyone else gets
 * those pageblocks.
 */
static void test_no_byte_of_another_vm(void)
{
	struct pool_msg *m = calloc(1, POOL_MSG_MAX);
	struct inodes victim = { .n = 0 }, mine = { .n = 0 };
	struct pool_client_info vinfo;
	struct svc_fixture f;
	struct pool_client *v;
	struct raw_client rc;
	uint32_t frames[1024];
	long got = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(m);
	CU_ASSERT_FATAL(fixture_up(&f, 64, 0));
	v = connect_client(&f, "victim", 8 << 20, &vinfo);
	CU_ASSERT_PTR_NOT_NULL_FATAL(v);
	while (got < 1024) {
		long n = pool_client_alloc(v, 0, 256, POOL_ALLOC_NOWAIT, frames + got, NULL);

		CU_ASSERT_FATAL(n > 0);
		got += n;
	}
	for (int i = 0; i < 1024; i++) {
		off_t off;
		int fd = pool_client_frame_file(v, frames[i], &off);

		CU_ASSERT_FATAL(fd >= 0);
		*(uint64_t *)(vinfo.base + ((uint64_t)frames[i] << MM_PAGE_SHIFT)) = SECRET + (uint64_t)i;
		inodes_add(&victim, dup(fd));	/* what a hostile victim could keep */
	}
	CU_ASSERT(victim.n >= 2);

	CU_ASSERT_EQUAL_FATAL(raw_hello(f.path, 8 << 20, &rc), 0);
	CU_ASSERT_EQUAL(rc.hello_fds, 0);
	raw_take_files(&rc, m, 8, &mine);
	CU_ASSERT(mine.n >= 1);
	for (unsigned int i = 0; i < mine.n; i++)
		CU_ASSERT(!inodes_have(&victim, mine.ino[i]));
	CU_ASSERT(!files_hold_secret(&mine));
	CU_ASSERT(files_bytes(&mine) <= (rc.quota >> MM_PAGEBLOCK_ORDER) << MM_PAGEBLOCK_SHIFT);

	/* the victim gives everything back: what it kept is empty, before anyone reuses it */
	CU_ASSERT(files_hold_secret(&victim));
	CU_ASSERT_EQUAL(pool_client_release(v), 1024);
	CU_ASSERT_EQUAL(files_bytes(&victim), 0);
	raw_take_files(&rc, m, 8, &mine);
	CU_ASSERT(!files_hold_secret(&mine));
	for (unsigned int i = 0; i < mine.n; i++)
		CU_ASSERT(!inodes_have(&victim, mine.ino[i]));
	CU_ASSERT_EQUAL(files_bytes(&victim), 0);

	inodes_close(&mine);
	inodes_close(&victim);
	raw_close(&rc);
	pool_client_close(v);
	fixture_down(&f);
	free(m);
}

static void test_reads_own_pageblocks_only(void)
{
	struct svc_fixture f;
	struct pool_client_info ia, ib;
	struct pool_client *a, *b;
	static uint32_t frames[1024];
	struct own_seen seen;

	CU_ASSERT_FATAL(fixture_up(&f, 64, 0));
	a = connect_client(&f, "a", 16 << 20, &ia);
	b = connect_client(&f, "b", 16 << 20, &ib);
	CU_ASSERT_FATAL(a && b);
	CU_ASSERT_EQUAL(pool_client_alloc(a, 0, 1024, POOL_ALLOC_NOWAIT, frames, NULL), 1024);
	CU_ASSERT_EQUAL(pool_client_alloc(b, MM_PAGEBLOCK_ORDER, 3, POOL_ALLOC_NOWAIT, frames,
					  NULL), 3);
	seen = (struct own_seen){ .owner = ia.owner };
	CU_ASSERT_EQUAL(pool_client_walk_own(a, own_seen_fn, &seen), 0);
	CU_ASSERT_EQUAL(seen.pageblocks, 2);
	CU_ASSERT_EQUAL(seen.pageblocks, mm_owner_pageblocks(f.pool->mm, ia.owner));
	CU_ASSERT_EQUAL(seen.others, 0);
	seen = (struct own_seen){ .owner = ib.owner };
	CU_ASSERT_EQUAL(pool_client_walk_own(b, own_seen_fn, &seen), 0);
	CU_ASSERT_EQUAL(seen.pageblocks, 3);
	CU_ASSERT_EQUAL(seen.others, 0);
	pool_client_close(a);
	pool_client_close(b);
	CU_ASSERT(wait_clients(&f, 0));
	fixture_down(&f);
}

static const struct suite_test tests[] = {
	{ "no byte of another VM's RAM", test_no_byte_of_another_vm },
	{ "an -EINPROGRESS answer keeps nothing", test_einprogress_answer_keeps_nothing },
	{ "a silent client at its quota is asked no move", test_silent_client_at_quota },
	{ "owner ids come back", test_owner_ids_come_back },
	{ "pins and splits fragment only the client's own pageblocks",
	  test_pins_fragment_only_own_blocks },
	{ "a FREE racing SPLIT and PIN harms no other VM", test_free_split_race },
	{ "walks are rate-limited", test_walks_are_rate_limited },
	{ "a client reads its own pageblocks only", test_reads_own_pageblocks_only },
	{ "a VM's frames go back in one request", test_release_in_one_request },
	{ "one admission for the daemon's VMs and the service's", test_one_admission },
};

int register_pool_hostile_suite(void)
{
	return SUITE("pool_hostile", tests);
}
