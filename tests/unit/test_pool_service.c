// SPDX-License-Identifier: GPL-2.0
/*
 * The pool service and its clients (vmm/pool_service/pool_service.c, pool_client.c),
 * without KVM: clients here are forked processes or raw sockets that hold
 * frames the way a VM process does. What a client holds is read from the
 * pool's own walk (mm_owner_pages), never from the service's or the
 * client's counts, so the two sides are checked against each other.
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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "tests/suite.h"
#include "tests/svg_check.h"
#include "tests/unit/svc_fixture.h"
#include "vmm/control/daemon.h"
#include "vmm/control/report.h"
#include "vmm/memory/pool_backend.h"
#include "vmm/pool_service/pool_client.h"
#include "vmm/pool_service/pool_proto.h"
#include "vmm/pool_service/pool_service.h"

static void test_borrow_and_return(void)
{
	struct svc_fixture f;
	struct pool_client_info info;
	struct pool_client *c;
	uint32_t frames[64];
	uint64_t before;
	long n;

	CU_ASSERT_FATAL(fixture_up(&f, 64, 0));
	before = free_pages(&f);
	c = connect_client(&f, "a", 16 << 20, &info);
	CU_ASSERT_FATAL(c != NULL);
	CU_ASSERT_EQUAL(info.frames, (64 << 20) >> MM_PAGE_SHIFT);
	n = pool_client_alloc(c, 0, 64, POOL_ALLOC_NOWAIT, frames, NULL);
	CU_ASSERT_EQUAL(n, 64);
	/* the pool's walk, not the service's count */
	CU_ASSERT_EQUAL(mm_owner_pages(f.pool->mm, info.owner), 64);
	for (int i = 0; i < 64; i++)
		CU_ASSERT_EQUAL(pool_client_free(c, frames[i], 0), 0);
	CU_ASSERT_EQUAL(pool_client_cached(c), 64);
	/* pages come from the cache first, then in batches */
	for (int i = 0; i < 200; i++)
		CU_ASSERT(pool_client_page(c) >= 0);
	CU_ASSERT_EQUAL(mm_owner_pages(f.pool->mm, info.owner), 200 + pool_client_cached(c));
	n = pool_client_alloc(c, MM_PAGEBLOCK_ORDER, 1, POOL_ALLOC_NOWAIT | POOL_ALLOC_PREPARE,
			      frames, NULL);
	CU_ASSERT_EQUAL(n, 1);
	CU_ASSERT_EQUAL(frames[0] % MM_PAGEBLOCK_PAGES, 0);
	CU_ASSERT_EQUAL(pool_client_free(c, frames[0], MM_PAGEBLOCK_ORDER), 0);
	pool_client_close(c);
	/* its socket closed: what it still held went back */
	CU_ASSERT(wait_clients(&f, 0));
	CU_ASSERT_EQUAL(mm_owner_pages(f.pool->mm, info.owner), 0);
	CU_ASSERT_EQUAL(free_pages(&f), before);
	fixture_down(&f);
}

/*
 * A forked VM-like client: takes @pages frames, writes each its own
 * pattern through its mapping of the pool, answers moves by copying, and
 * on a byte from @cmd checks every pattern (exit 0 when all hold).
 */
struct holder {
	uint8_t *base;
	uint32_t *frames;
	uint64_t n;
};

static int holder_migrate(void *priv, uint64_t old, uint64_t new, unsigned int order)
{
	struct holder *h = priv;

	if (order)
		return -EBUSY;
	for (uint64_t i = 0; i < h->n; i++)
		if (h->frames[i] == old) {
			memcpy(h->base + (new << MM_PAGE_SHIFT), h->base + (old << MM_PAGE_SHIFT),
			       MM_PAGE_SIZE);
			__atomic_store_n(&h->frames[i], (uint32_t)new, __ATOMIC_RELEASE);
			return 0;
		}
	return -ENOENT;
}

static const struct mm_owner_ops holder_ops = { .migrate = holder_migrate };

static bool pattern_ok(const uint8_t *p, uint64_t i)
{
	for (size_t k = 0; k < MM_PAGE_SIZE; k += 512)
		if (p[k] != (uint8_t)(i * 7 + 1))
			return false;
	return true;
}

static void holder_main(const char *path, uint64_t pages, bool scatter, int ready, int cmd)
{
	struct pool_client_info info;
	struct pool_client *c;
	struct holder h = { 0 };
	uint32_t *all = NULL;
	char err[256], b;
	int ok = 1;

	if (pool_client_connect(path, "holder", (pages * 2 * MM_PAGE_SIZE + MM_PAGEBLOCK_SIZE) &
				~(MM_PAGEBLOCK_SIZE - 1), POOL_CLIENT_TENANT, &c, &info, err,
				sizeof(err)))
		_exit(2);
	h.base = info.base;
	h.frames = calloc(pages, sizeof(*h.frames));
	all = calloc(pages * 2, sizeof(*all));
	/* scatter: take twice as many and give every other one back */
	for (uint64_t got = 0; got < (scatter ? pages * 2 : pages);) {
		uint64_t want = (scatter ? pages * 2 : pages) - got;
		long n = pool_client_alloc(c, 0, want < 256 ? (unsigned int)want : 256,
					   POOL_ALLOC_NOWAIT, all + got, NULL);

		if (n <= 0)
			_exit(3);
		got += (uint64_t)n;
	}
	for (uint64_t i = 0; i < pages; i++) {
		h.frames[i] = all[scatter ? 2 * i : i];
		if (scatter && pool_client_free(c, all[2 * i + 1], 0))
			_exit(4);
		memset(h.base + ((uint64_t)h.frames[i] << MM_PAGE_SHIFT), (int)(i * 7 + 1),
		       MM_PAGE_SIZE);
	}
	if (pool_client_drain(c))
		_exit(5);
	h.n = pages;
	pool_client_set_owner(c, &holder_ops, &h);
	if (write(ready, "r", 1) != 1)
		_exit(6);
	if (read(cmd, &b, 1) != 1)
		_exit(7);
	pool_client_set_owner(c, NULL, NULL);
	for (uint64_t i = 0; i < pages; i++)
		ok &= pattern_ok(h.base + ((uint64_t)h.frames[i] << MM_PAGE_SHIFT), i);
	_exit(ok ? 0 : 1);
}

struct holder_proc {
	pid_t pid;
	int ready, cmd;
};

static bool holder_start(struct svc_fixture *f, uint64_t pages, bool scatter,
			 struct holder_proc *hp)
{
	int r[2], c[2];
	char b;

	if (pipe(r) || pipe(c))
		return false;
	hp->pid = fork();
	if (hp->pid == 0) {
		close(r[0]);
		close(c[1]);
		holder_main(f->path, pages, scatter, r[1], c[0]);
	}
	close(r[1]);
	close(c[0]);
	hp->ready = r[0];
	hp->cmd = c[1];
	return hp->pid > 0 && read(hp->ready, &b, 1) == 1;
}

static int holder_reap(struct holder_proc *hp)
{
	int status = -1;

	waitpid(hp->pid, &status, 0);
	close(hp->ready);
	close(hp->cmd);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int holder_finish(struct holder_proc *hp)
{
	if (write(hp->cmd, "c", 1) != 1)
		kill(hp->pid, SIGKILL);
	return holder_reap(hp);
}

static void test_compaction_moves_other_processes_pages(void)
{
	struct svc_fixture f;
	struct holder_proc hp;
	struct mm_stats st;
	uint64_t moved;

	CU_ASSERT_FATAL(fixture_up(&f, 64, 0));
	/* 8 MiB scattered over 16 MiB of pageblocks: every other page */
	CU_ASSERT_FATAL(holder_start(&f, 2048, true, &hp));
	mm_compact_all(f.pool->mm);
	CU_ASSERT_FATAL(mm_stats(f.pool->mm, &st) == 0);
	moved = st.counters.pgmigrate_success;
	CU_ASSERT(moved >= 512);
	/* every page kept its contents through the moves, checked by its owner */
	CU_ASSERT_EQUAL(holder_finish(&hp), 0);
	CU_ASSERT(wait_clients(&f, 0));
	CU_ASSERT_EQUAL(free_pages(&f), (64 << 20) >> MM_PAGE_SHIFT);
	fixture_down(&f);
}

static void test_killed_client_gives_everything_back(void)
{
	struct svc_fixture f;
	struct holder_proc hp;
	uint64_t before;

	CU_ASSERT_FATAL(fixture_up(&f, 64, 0));
	before = free_pages(&f);
	CU_ASSERT_FATAL(holder_start(&f, 3000, true, &hp));
	CU_ASSERT(free_pages(&f) < before - 2900);
	/*
	 * Reaped, not told to finish: a write to the pipe of a holder that is
	 * already gone would be SIGPIPE for this whole test process (it was,
	 * once, in CI: the suite ended there without a word).
	 */
	kill(hp.pid, SIGKILL);
	holder_reap(&hp);
	CU_ASSERT(wait_clients(&f, 0));
	CU_ASSERT_EQUAL(free_pages(&f), before);
	CU_ASSERT(service_counter(&f, "frames_reclaimed") >= 3000);
	fixture_down(&f);
}

static void test_quota_and_admission(void)
{
	struct svc_fixture f;
	struct pool_client_info ia, ib;
	struct pool_client *a, *b, *c;
	uint32_t frames[1024], a_frame;
	uint64_t got = 0;
	char err[256];
	long n;

	CU_ASSERT_FATAL(fixture_up(&f, 64, 0));
	a = connect_client(&f, "greedy", 8 << 20, &ia);
	CU_ASSERT_FATAL(a != NULL);
	/* asks for every frame: stops at its RAM and the slack */
	while ((n = pool_client_alloc(a, 0, 1024, POOL_ALLOC_NOWAIT, frames, NULL)) > 0)
		got += (uint64_t)n;
	CU_ASSERT_EQUAL(n, -EDQUOT);
	CU_ASSERT(got <= ia.quota);
	CU_ASSERT_EQUAL(mm_owner_pages(f.pool->mm, ia.owner), got);
	CU_ASSERT_FATAL(got > 0);
	a_frame = frames[0];	/* a refused request leaves frames[] as it was */
	/* another VM still gets its frames */
	b = connect_client(&f, "other", 16 << 20, &ib);
	CU_ASSERT_FATAL(b != NULL);
	CU_ASSERT_EQUAL(pool_client_alloc(b, 0, 1024, POOL_ALLOC_NOWAIT, frames, NULL), 1024);
	/*
	 * and may not give back a frame of another VM's: the service refuses
	 * it, the client says so and counts it, the frame stays its owner's
	 */
	CU_ASSERT_EQUAL(pool_client_free(b, a_frame, MM_PAGEBLOCK_ORDER), -EINVAL);
	CU_ASSERT_EQUAL(pool_client_refused(b), 1);
	CU_ASSERT_EQUAL(mm_owner_pages(f.pool->mm, ia.owner), got);
	/* more RAM than the pool has left to lend: refused, with the reason */
	CU_ASSERT(pool_client_connect(f.path, "big", 48 << 20, POOL_CLIENT_VM, &c, &ib, err, sizeof(err)) < 0);
	CU_ASSERT(strstr(err, "do not fit") != NULL);
	pool_client_close(a);
	pool_client_close(b);
	CU_ASSERT(wait_clients(&f, 0));
	CU_ASSERT_EQUAL(free_pages(&f), (64 << 20) >> MM_PAGE_SHIFT);
	fixture_down(&f);
}

static void test_hostile_clients(void)
{
	static int fds[1000];
	struct pool_msg *m = calloc(1, POOL_MSG_MAX);
	struct svc_fixture f;
	struct pool_client_info info;
	struct pool_client *good;
	struct raw_client rc;
	uint32_t frames[64];
	int fd, open_fds = 0;

	CU_ASSERT_FATAL(m != NULL);
	CU_ASSERT_FATAL(fixture_up(&f, 64, 0));
	good = connect_client(&f, "good", 8 << 20, &info);
	CU_ASSERT_FATAL(good != NULL);
	/* garbage instead of HELLO, and a HELLO without its sockets */
	fd = raw_connect(f.path);
	CU_ASSERT(write(fd, "GET / HTTP/1.0\r\n\r\n", 18) == 18);
	CU_ASSERT(pool_wire_wait(fd, 10000) == 1);
	close(fd);
	fd = raw_connect(f.path);
	*m = (struct pool_msg){ .op = POOL_HELLO, .a = { POOL_PROTO_VERSION, 2 << 20 } };
	CU_ASSERT(raw_call(fd, m, sizeof(*m)) < 0);
	close(fd);
	/* a thousand connections that say nothing: the service caps them */
	for (int i = 0; i < 1000; i++) {
		fds[i] = raw_connect(f.path);
		open_fds += fds[i] >= 0;
	}
	/* the VM already served keeps being served meanwhile */
	CU_ASSERT_EQUAL(pool_client_alloc(good, 0, 64, POOL_ALLOC_NOWAIT, frames, NULL), 64);
	for (int i = 0; i < 1000; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	CU_ASSERT(service_counter(&f, "refused") >= 1000 - POOL_SERVICE_MAX_CLIENTS);
	/* a client that said HELLO, then half messages, garbage, others' frames */
	CU_ASSERT_FATAL(raw_hello(f.path, 4 << 20, &rc) == 0);
	fd = rc.fd;
	CU_ASSERT(wait_clients(&f, 2));
	CU_ASSERT_EQUAL(raw_call(fd, m, 7), -EPROTO);
	memset(m, 0xff, sizeof(*m) + 64);
	CU_ASSERT_EQUAL(raw_call(fd, m, sizeof(*m) + 64), -EPROTO);
	*m = (struct pool_msg){ .op = POOL_FREE, .n = 2 };
	memcpy(m->data, frames, 2 * sizeof(uint32_t));
	CU_ASSERT_EQUAL(raw_call(fd, m, sizeof(*m) + 2 * sizeof(uint32_t)), 0);
	CU_ASSERT_EQUAL(m->a[0], 2);	/* both refused: "good"'s */
	*m = (struct pool_msg){ .op = POOL_FREE, .n = 5000 };
	CU_ASSERT_EQUAL(raw_call(fd, m, sizeof(*m)), -EPROTO);
	*m = (struct pool_msg){ .op = POOL_ALLOC, .a = { 10, 1, POOL_ALLOC_NOWAIT } };
	CU_ASSERT_EQUAL(raw_call(fd, m, sizeof(*m)), -EINVAL);
	*m = (struct pool_msg){ .op = POOL_SPLIT, .a = { frames[0] } };
	CU_ASSERT_EQUAL(raw_call(fd, m, sizeof(*m)), -EPERM);
	*m = (struct pool_msg){ .op = POOL_WALK, .a = { 1ULL << 40 } };
	CU_ASSERT_EQUAL(raw_call(fd, m, sizeof(*m)), -EINVAL);
	CU_ASSERT_EQUAL(mm_owner_pages(f.pool->mm, info.owner), 64);
	CU_ASSERT(service_counter(&f, "bad_messages") >= 3);
	raw_close(&rc);
	/* still whole: the good client's frames and nothing else */
	CU_ASSERT(wait_clients(&f, 1));
	CU_ASSERT_EQUAL(free_pages(&f), ((64 << 20) >> MM_PAGE_SHIFT) - 64);
	pool_client_close(good);
	CU_ASSERT(wait_clients(&f, 0));
	CU_ASSERT_EQUAL(free_pages(&f), (64 << 20) >> MM_PAGE_SHIFT);
	fixture_down(&f);
	free(m);
}

/*
 * A client that does not answer a move is treated as pinned: compaction
 * goes on without it, and the block it may have moved to stays its own
 * until its answer says which one it kept.
 */
static void test_silent_client_is_pinned(void)
{
	struct pool_msg *m = calloc(1, POOL_MSG_MAX);
	struct answerer ans = { .cb = -1, .answer = -EBUSY };
	struct svc_fixture f;
	struct raw_client rc;
	uint32_t owner, frames[512], spare;
	int fd, cb;

	CU_ASSERT_FATAL(m != NULL);
	CU_ASSERT_FATAL(fixture_up(&f, 32, 100));
	CU_ASSERT_FATAL(raw_hello(f.path, 4 << 20, &rc) == 0);
	fd = rc.fd;
	cb = rc.cb;
	owner = rc.owner;
	/* every other page of 4 MiB: compaction wants to move half */
	*m = (struct pool_msg){ .op = POOL_ALLOC, .a = { 0, 1024, POOL_ALLOC_NOWAIT } };
	CU_ASSERT_FATAL(raw_call(fd, m, sizeof(*m)) == 0 && m->n == 1024);
	for (int i = 0; i < 512; i++)
		frames[i] = ((uint32_t *)m->data)[2 * i + 1];
	spare = ((uint32_t *)m->data)[0];
	*m = (struct pool_msg){ .op = POOL_FREE, .n = 512 };
	memcpy(m->data, frames, sizeof(frames));
	CU_ASSERT_FATAL(raw_call(fd, m, sizeof(*m) + sizeof(frames)) == 0);
	mm_compact_all(f.pool->mm);
	/* one move asked, not answered: both blocks are the client's */
	CU_ASSERT_EQUAL(service_counter(&f, "moves_timed_out"), 1);
	CU_ASSERT_EQUAL(mm_owner_pages(f.pool->mm, owner), 513);
	/* it answers at last (it kept the old one); the next move settles it */
	ans.cb = cb;
	CU_ASSERT_FATAL(pthread_create(&ans.t, NULL, answer_with, &ans) == 0);
	for (int i = 0; i < 1000 && !__atomic_load_n(&ans.answered, __ATOMIC_ACQUIRE); i++)
		usleep(10000);
	/*
	 * With both blocks its own, the room in its pageblocks is one page
	 * short of emptying one, and compaction would not ask it anything:
	 * one page more freed makes the next sweep ask (and settle).
	 */
	*m = (struct pool_msg){ .op = POOL_FREE, .n = 1 };
	memcpy(m->data, &spare, sizeof(spare));
	CU_ASSERT_FATAL(raw_call(fd, m, sizeof(*m) + sizeof(spare)) == 0 && m->a[0] == 0);
	mm_compact_all(f.pool->mm);
	__atomic_store_n(&ans.stop, true, __ATOMIC_RELEASE);
	pthread_join(ans.t, NULL);
	CU_ASSERT_EQUAL(service_counter(&f, "moves_timed_out"), 1);
	CU_ASSERT_EQUAL(mm_owner_pages(f.pool->mm, owner), 511);
	raw_close(&rc);
	CU_ASSERT(wait_clients(&f, 0));
	CU_ASSERT_EQUAL(free_pages(&f), (32 << 20) >> MM_PAGE_SHIFT);
	fixture_down(&f);
	free(m);
}

static void test_service_gone(void)
{
	struct svc_fixture f;
	struct pool_client_info info;
	struct pool_client *c;
	long frame, again;
	uint32_t block, got;

	CU_ASSERT_FATAL(fixture_up(&f, 32, 0));
	c = connect_client(&f, "orphan", 4 << 20, &info);
	CU_ASSERT_FATAL(c != NULL);
	frame = pool_client_page(c);
	CU_ASSERT_FATAL(frame >= 0);
	CU_ASSERT_EQUAL_FATAL(pool_client_alloc(c, MM_PAGEBLOCK_ORDER, 1, POOL_ALLOC_NOWAIT,
						&block, NULL), 1);
	pool_service_stop(f.svc);
	f.svc = NULL;
	/* drain what the batch left, then it cannot grow: a full pool's answer */
	while (pool_client_cached(c))
		CU_ASSERT(pool_client_page(c) >= 0);
	CU_ASSERT_EQUAL(pool_client_page(c), -ENOMEM);
	CU_ASSERT(pool_client_gone(c));
	/* what it frees it keeps, and uses again */
	CU_ASSERT_EQUAL(pool_client_free(c, (uint64_t)frame, 0), 0);
	again = pool_client_page(c);
	CU_ASSERT_EQUAL(again, frame);
	/* a pageblock freed whole stays whole: a block again (swap's ranges come back whole) */
	CU_ASSERT_EQUAL(pool_client_free(c, block, MM_PAGEBLOCK_ORDER), 0);
	CU_ASSERT_EQUAL(pool_client_cached(c), MM_PAGEBLOCK_PAGES);
	CU_ASSERT_EQUAL(pool_client_alloc(c, MM_PAGEBLOCK_ORDER, 1, POOL_ALLOC_NOWAIT, &got, NULL), 1);
	CU_ASSERT_EQUAL(got, block);
	CU_ASSERT_EQUAL(pool_client_alloc(c, MM_PAGEBLOCK_ORDER, 1, POOL_ALLOC_NOWAIT, &got, NULL),
			-ENOMEM);
	/* and a page, once no page is cached, is carved out of one, the rest cached */
	CU_ASSERT_EQUAL(pool_client_free(c, block, MM_PAGEBLOCK_ORDER), 0);
	again = pool_client_page(c);
	CU_ASSERT(again >= (long)block && again < (long)(block + MM_PAGEBLOCK_PAGES));
	CU_ASSERT_EQUAL(pool_client_cached(c), MM_PAGEBLOCK_PAGES - 1);
	pool_client_close(c);
	pool_close(f.pool);
}


/*
 * The daemon's report of a shared pool (gpmm frag --socket DAEMON): a
 * tenant that is no VM is listed as a tenant with what it holds, a VM
 * process that has not reported yet says so; no "(null)", no made-up
 * age, no disagreement between sources where nothing was compared, and
 * the picture's text within the picture.
 */
static void test_daemon_report_of_a_tenant(void)
{
	struct svc_fixture f;
	struct pool_client_info it, iv;
	struct pool_client *tenant, *vmproc = NULL;
	struct daemon d = { 0 };
	uint32_t frames[64];
	char *text = NULL, *svg = NULL;
	size_t tlen = 0, slen = 0;
	FILE *out;
	json_t *r, *t;
	char err[256];

	CU_ASSERT_FATAL(fixture_up(&f, 64, 0));
	CU_ASSERT_FATAL(pool_client_connect(f.path, "fragment", 2 << 20, POOL_CLIENT_TENANT,
					    &tenant, &it, err, sizeof(err)) == 0);
	CU_ASSERT_EQUAL(pool_client_alloc(tenant, 0, 64, POOL_ALLOC_NOWAIT, frames, NULL), 64);
	vmproc = connect_client(&f, "vm1", 4 << 20, &iv);
	CU_ASSERT_FATAL(vmproc != NULL);
	d.pool = f.pool;
	d.svc = f.svc;
	r = daemon_report(&d, NULL, 0, true, true);
	CU_ASSERT_FATAL(r != NULL);
	out = open_memstream(&text, &tlen);
	report_print_text(r, out);
	fclose(out);
	out = open_memstream(&svg, &slen);
	CU_ASSERT_EQUAL(report_write_svg(r, out), 0);
	fclose(out);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "pool tenant fragment (not a VM"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "holds 64 pages"));
	CU_ASSERT_PTR_NULL(strstr(text, "VM fragment"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "VM vm1 (starting): no report from its process yet"));
	CU_ASSERT_PTR_NULL(strstr(text, "(null)"));
	CU_ASSERT_PTR_NULL(strstr(text, "-1 ms"));
	CU_ASSERT_PTR_NULL(strstr(text, "DISAGREE"));
	CU_ASSERT_PTR_NULL(strstr(text, "--fault"));
	CU_ASSERT_PTR_NULL(strstr(svg, "(null)"));
	CU_ASSERT_PTR_NULL(strstr(svg, "VM fragment"));
	CU_ASSERT_PTR_NOT_NULL(strstr(svg, "tenant fragment"));
	CU_ASSERT(svg_text_fits(svg));
	/* in the JSON: the tenant apart, with what it holds; the VM process a VM */
	CU_ASSERT_EQUAL(json_array_size(json_object_get(r, "vms")), 1);
	CU_ASSERT_EQUAL(json_array_size(json_object_get(r, "tenants")), 1);
	t = json_array_get(json_object_get(r, "tenants"), 0);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(t, "name")) ?: "", "fragment");
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(json_object_get(t, "process"),
							   "frames_owned")), 64);
	json_decref(r);
	free(text);
	free(svg);
	pool_client_close(tenant);
	pool_client_close(vmproc);
	CU_ASSERT(wait_clients(&f, 0));
	fixture_down(&f);
}

static const struct suite_test tests[] = {
	{ "a client borrows and returns frames", test_borrow_and_return },
	{ "compaction moves another process's pages", test_compaction_moves_other_processes_pages },
	{ "a killed client gives everything back", test_killed_client_gives_everything_back },
	{ "quota and admission", test_quota_and_admission },
	{ "hostile clients", test_hostile_clients },
	{ "a silent client is treated as pinned", test_silent_client_is_pinned },
	{ "the service gone: a VM keeps what it has", test_service_gone },
	{ "the daemon's report: a tenant is no VM", test_daemon_report_of_a_tenant },
};

int register_pool_service_suite(void)
{
	return SUITE("pool_service", tests);
}
