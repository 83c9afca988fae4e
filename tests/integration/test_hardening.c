// SPDX-License-Identifier: GPL-2.0
/*
 * Hardening, end to end: a VM process that breaks the rules (a forbidden
 * system call, a host call that fails at any point of its life, a guest
 * that attacks its VMM) ends alone. Beside it a second VM process on the
 * same host pool service runs memloop throughout; after each case it must
 * still be running, without a lost write, and the service's count of the
 * pool must add up: its free frames and the frames the pool finds owned
 * by the live process make the whole pool, and nothing of the ended one
 * is left.
 */
#define _GNU_SOURCE
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "tests/integration/harness.h"
#include "tests/suite.h"

#define POOL_MIB	256
#define VM_RAM_MIB	10
/*
 * The points walked per site in make test: all of them up to here, then
 * as many again spread over the rest. GPMM_TEST_FAULT_POINTS=N changes
 * it; 0 walks every point (minutes per site under nested KVM).
 */
#define FAULT_POINTS	10

static char out[1 << 16];

struct hd_env {
	char ctl[128], pool[128];
	int daemon_pid, bystander_pid;
};

static json_int_t num(json_t *o, const char *key)
{
	return json_integer_value(json_object_get(o, key));
}

static bool start_env(struct hd_env *e)
{
	char cmd[1024];

	snprintf(e->ctl, sizeof(e->ctl), "%s/hd.sock", test_run_dir());
	snprintf(e->pool, sizeof(e->pool), "%s/hd-pool.sock", test_run_dir());
	/*
	 * A sanitizer build's daemon keeps up to 256 MiB of freed memory in
	 * quarantine, which would read as growth: a small one keeps RSS
	 * meaning what it means in a release build.
	 */
	snprintf(cmd, sizeof(cmd), "env ASAN_OPTIONS=\"${ASAN_OPTIONS:+$ASAN_OPTIONS:}"
		 "quarantine_size_mb=4\" %s daemon --socket %s --pool-socket %s --pool %dM",
		 gpmm_bin(), e->ctl, e->pool, POOL_MIB);
	e->daemon_pid = spawn_bg("hd-daemon", cmd);
	if (e->daemon_pid <= 0 || !log_says("hd-daemon", "lending the pool", 300))
		return false;
	snprintf(cmd, sizeof(cmd), "%s run --host-pool=%s --kernel %s --ram %dM --name bystander "
		 "--console file:%s/bystander.con", gpmm_bin(), e->pool, payload("memloop"),
		 VM_RAM_MIB, test_run_dir());
	e->bystander_pid = spawn_bg("bystander", cmd);
	return e->bystander_pid > 0 &&
	       sh(NULL, 0, "for i in $(seq 900); do grep -q touched %s/bystander.con && exit 0; "
		  "sleep 0.2; done; exit 1", test_run_dir()) == 0;
}

static void stop_env(struct hd_env *e)
{
	if (e->bystander_pid > 0)
		kill(e->bystander_pid, SIGTERM);
	sleep(1);
	if (e->daemon_pid > 0)
		kill(e->daemon_pid, SIGTERM);
	sh(NULL, 0, "sleep 1; pkill -KILL -f 'hd-pool.sock' || true");
}

static bool bystander_running(struct hd_env *e)
{
	return kill(e->bystander_pid, 0) == 0 &&
	       sh(NULL, 0, "grep -q 'lost write' %s/bystander.con", test_run_dir()) != 0;
}

/*
 * The bystander runs, has lost no write, and the service's pool adds up
 * with it as the only client left (the service reaps an ended process on
 * its own time: bounded retries).
 */
static bool bystander_fine(struct hd_env *e, const char *after)
{
	for (int tries = 0; tries < 100; tries++) {
		json_t *r = frag_json(e->ctl), *v;
		json_int_t owned = 0, free_frames;
		unsigned int procs = 0;
		size_t i;

		if (!r) {
			usleep(200000);
			continue;
		}
		free_frames = num(json_object_get(r, "host"), "free_bytes") / 4096;
		json_array_foreach(json_object_get(r, "vms"), i, v) {
			owned += num(json_object_get(v, "process"), "frames_owned");
			procs++;
		}
		json_decref(r);
		if (procs == 1 && free_frames + owned == (POOL_MIB << 20) / 4096 &&
		    bystander_running(e))
			return true;
		usleep(200000);
	}
	fprintf(stderr, "\n  after %s: the bystander or the pool is not right", after);
	return false;
}

/* rc=N at the end of @out, from "...; echo rc=$?" */
static int rc_of(const char *o)
{
	const char *p = strstr(o, "rc=");

	return p ? atoi(p + 3) : -1;
}

static bool sanitizer_said(const char *o)
{
	return strstr(o, "Sanitizer") || strstr(o, "runtime error");
}

/*
 * A vCPU thread's forbidden call (fault injection's "syscall" site: an
 * IPv4 socket) ends its process with SIGSYS and says which call it was;
 * the bystander and the pool do not notice. --no-seccomp lets it through.
 */
static void test_seccomp(void)
{
	struct hd_env e = { 0 };

	CU_ASSERT_FATAL(start_env(&e));
	sh(out, sizeof(out), "GPMM_FAULT=syscall:1 timeout 300 %s run --host-pool=%s --kernel %s "
	   "--ram %dM --name victim --console none 2>&1; echo rc=$?", gpmm_bin(), e.pool,
	   payload("memloop"), VM_RAM_MIB);
	fprintf(stderr, "\n  %s", out);
	CU_ASSERT_EQUAL(rc_of(out), 128 + SIGSYS);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "vCPU thread made forbidden system call 41 (socket)"));
	CU_ASSERT(bystander_fine(&e, "the seccomp kill"));
	/* without the filter the same call goes through and the guest runs to its end */
	sh(out, sizeof(out), "GPMM_FAULT=syscall:1 timeout 300 %s run --no-seccomp "
	   "--host-pool=%s --kernel %s --ram 16M --name unfiltered --console stdio "
	   "</dev/null 2>&1; echo rc=$?", gpmm_bin(), e.pool, payload("hello"));
	CU_ASSERT_EQUAL(rc_of(out), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "running without a syscall filter"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "hello"));
	CU_ASSERT(bystander_fine(&e, "--no-seccomp"));
	stop_env(&e);
}

/*
 * An own pool is the process's: where the VM got as far as ending, --stats
 * printed the pool after the VM gave its frames back, which must be whole.
 */
static bool own_pool_whole(bool own)
{
	const char *p = own ? strstr(out, "after the VM gave its frames back: ") : NULL;
	unsigned long long free_frames, frames;

	if (!p)
		return true;
	p = strchr(p, '(');
	if (!p || sscanf(p, "(%llu of %llu 4 KiB frames)", &free_frames, &frames) != 2)
		return false;
	return free_frames == frames;
}

/*
 * One run of memtest (16 MiB written and checked; 4 KiB first touches, so
 * the assembler migrates pages into 2 MiB blocks while it runs) with
 * GPMM_FAULT=@spec. Good outcomes: the guest's own success, or a clean
 * failure said on stderr (exit 1, 2 or 255). Bad: a signal, a hang, a
 * sanitizer report, a failure without a word, a guest that saw bad memory.
 */
static bool fault_run(struct hd_env *e, const char *spec, const char *counts, bool own)
{
	char pool[256];
	int rc;

	if (own)
		snprintf(pool, sizeof(pool), "--own-pool --pool 64M --stats");
	else
		snprintf(pool, sizeof(pool), "--host-pool=%s", e->pool);
	sh(out, sizeof(out), "GPMM_FAULT=%s %s%s timeout 300 %s run %s --kernel %s "
	   "--ram 16M --name faulty --fault 4k --huge-rate 1000 --console stdio </dev/null "
	   "2>&1; echo rc=$?", spec, counts ? "GPMM_FAULT_COUNTS=" : "", counts ? counts : "",
	   gpmm_bin(), pool, payload("memtest"));
	rc = rc_of(out);
	if (((rc == 0 && strstr(out, " MiB ok on")) ||
	     ((rc == 1 || rc == 2 || rc == 255) && strstr(out, "gpmm") &&
	      !strstr(out, ": mismatch at "))) && own_pool_whole(own))
		return !sanitizer_said(out);
	fprintf(stderr, "\n  GPMM_FAULT=%s: rc %d:\n%.2000s", spec, rc, out);
	return false;
}

/* The sites, and which pool kind's walk covers each (the other has few or none). */
static const struct { const char *name; bool host, own; } sites[] = {
	{ "memfd", false, true },
	{ "mmap", true, false },
	{ "madvise", true, true },
	{ "kvm", true, false },
	{ "frame", false, true },
};

static unsigned long calls_at(const char *counts, const char *site)
{
	char line[128], name[32];
	unsigned long calls = 0, n, inj;
	FILE *f = fopen(counts, "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%31s %lu %lu", name, &n, &inj) == 3 && !strcmp(name, site))
			calls = n;
	fclose(f);
	return calls;
}

/* One pool kind's walk: every site's points, the first @points all, then spread. */
static unsigned int walk_points(struct hd_env *e, bool own, unsigned long points,
				unsigned int *walked)
{
	char counts[256], spec[64];
	unsigned int bad = 0;

	snprintf(counts, sizeof(counts), "%s/fault.counts", test_run_dir());
	if (!fault_run(e, "", counts, own) || rc_of(out) != 0)
		return 1;
	for (size_t s = 0; s < sizeof(sites) / sizeof(sites[0]); s++) {
		unsigned long calls = calls_at(counts, sites[s].name), step = 1;

		if (own ? !sites[s].own : !sites[s].host)
			continue;
		fprintf(stderr, "\n  %s pool, %s: %lu calls in a clean run", own ? "own" : "host",
			sites[s].name, calls);
		for (unsigned long n = 1; n <= calls; n += step) {
			if (points && n > points)
				step = (calls - points) / points + 1;
			snprintf(spec, sizeof(spec), "%s:%lu", sites[s].name, n);
			if (!fault_run(e, spec, NULL, own) || !bystander_fine(e, spec))
				bad++;
			(*walked)++;
		}
	}
	return bad;
}

/*
 * Every failure point of a VM's life (start, faults, migration, 2 MiB
 * assembly, the end), site by site: a first clean run counts each site's
 * calls, then each call in turn fails in a run of its own. On the host
 * pool service the VM process allocates no frames itself (the service
 * does): that walk covers mmap, madvise and KVM; a second one, with a
 * pool of the process's own, covers frames, memfd and madvise.
 */
static void test_fault_points(void)
{
	const char *env = getenv("GPMM_TEST_FAULT_POINTS");
	unsigned long points = env ? strtoul(env, NULL, 10) : FAULT_POINTS;
	struct hd_env e = { 0 };
	unsigned int walked = 0, bad;

	CU_ASSERT_FATAL(start_env(&e));
	bad = walk_points(&e, false, points, &walked);
	bad += walk_points(&e, true, points, &walked);
	fprintf(stderr, "\n  %u failure points walked, %u went wrong", walked, bad);
	CU_ASSERT(walked > 40);
	CU_ASSERT_EQUAL(bad, 0);
	stop_env(&e);
}

/*
 * Hostile guests, one after the other, beside the bystander: one that
 * storms exits, touches every port and every virtio register, then triple
 * faults; one that stores to unclaimed MMIO. Each ends its own VM (exit
 * 255, the reason said), nothing else.
 */
static void test_escape(void)
{
	static const struct { const char *payload, *says; } hostile[] = {
		{ "escape", "triple fault" },
		{ "mmio", "unmapped MMIO address" },
	};
	struct hd_env e = { 0 };

	CU_ASSERT_FATAL(start_env(&e));
	for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
		sh(out, sizeof(out), "timeout 600 %s run --host-pool=%s --kernel %s --ram 16M "
		   "--name hostile --console stdio </dev/null 2>&1; echo rc=$?", gpmm_bin(),
		   e.pool, payload(hostile[i].payload));
		fprintf(stderr, "\n  %s: %.600s", hostile[i].payload, out);
		CU_ASSERT_EQUAL(rc_of(out), 255);
		CU_ASSERT_PTR_NOT_NULL(strstr(out, hostile[i].says));
		CU_ASSERT_PTR_NULL(strstr(out, "still alive"));
		CU_ASSERT(!sanitizer_said(out));
		CU_ASSERT(bystander_fine(&e, hostile[i].payload));
	}
	stop_env(&e);
}

#define HOSTILE_CONNS	1000

static int connect_to(const char *path, int type)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	for (int tries = 0; fd >= 0 && tries < 500; tries++) {
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
			fcntl(fd, F_SETFL, O_NONBLOCK);
			return fd;
		}
		if (errno != EAGAIN)
			break;
		usleep(10000);
	}
	if (fd >= 0)
		close(fd);
	return -1;
}

/* Write @len bytes of @fill (or noise when @fill is 0) until done or refused. */
static size_t pour(int fd, size_t len, char fill, const char *pattern)
{
	char buf[65536];
	size_t done = 0, plen = pattern ? strlen(pattern) : 0;
	uint64_t x = 99;

	for (size_t i = 0; i < sizeof(buf); i++) {
		x = x * 6364136223846793005ULL + 1;
		buf[i] = pattern ? pattern[i % plen] : fill ? fill : (char)(x >> 56);
	}
	for (int stalls = 0; done < len && stalls < 200;) {
		ssize_t n = send(fd, buf, sizeof(buf) - (pattern ? sizeof(buf) % plen : 0),
				 MSG_NOSIGNAL);

		if (n > 0) {
			done += (size_t)n;
			stalls = 0;
		} else if (n < 0 && errno == EAGAIN) {
			stalls++;
			usleep(10000);
		} else {
			break;
		}
	}
	return done;
}

static long rss_kb(int pid)
{
	char o[64];

	if (sh(o, sizeof(o), "awk '/VmRSS/ {print $2}' /proc/%d/status", pid))
		return -1;
	return atol(o);
}

static json_int_t control_num(struct hd_env *e, const char *key)
{
	json_t *r = frag_json(e->ctl);
	json_int_t v = num(json_object_get(r, "control"), key);

	json_decref(r);
	return v;
}

/*
 * Clients of the daemon's control socket and of the pool service that
 * misbehave every way a client can: a thousand connections, noise, a line
 * that never ends, a reader that never reads, garbage packets, a user who
 * is not the daemon's. The VMs run on, the daemon answers the next honest
 * client, and its memory does not grow with the abuse.
 */
static void test_hostile_clients(void)
{
	static int fds[HOSTILE_CONNS];
	struct rlimit old, rl;
	struct hd_env e = { 0 };
	long rss0, rss1;
	int held = 0, fd, status;
	pid_t child;
	json_t *r;

	CU_ASSERT_FATAL(start_env(&e));
	/*
	 * Room for the flood, put back after: a lower limit left behind would
	 * be inherited by the next tests' daemons (a descriptor per pageblock).
	 */
	CU_ASSERT_EQUAL_FATAL(getrlimit(RLIMIT_NOFILE, &old), 0);
	rl = old;
	if (rl.rlim_cur < HOSTILE_CONNS + 200)
		rl.rlim_cur = HOSTILE_CONNS + 200;
	if (rl.rlim_max < rl.rlim_cur)
		rl.rlim_max = rl.rlim_cur;
	CU_ASSERT_EQUAL(setrlimit(RLIMIT_NOFILE, &rl), 0);
	rss0 = rss_kb(e.daemon_pid);
	for (int i = 0; i < HOSTILE_CONNS; i++) {
		fds[i] = connect_to(e.ctl, SOCK_STREAM);
		held += fds[i] >= 0;
	}
	/* the control socket is full (that is the cap); the VMs run on */
	rss1 = rss_kb(e.daemon_pid);
	sleep(2);
	CU_ASSERT(bystander_running(&e));
	for (int i = 0; i < HOSTILE_CONNS; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	/* the count outlives the flood; the daemon answers again once it is gone */
	fprintf(stderr, "\n  %d of %d connections made; the daemon refused %lld, RSS %ld kB "
		"(%ld before)", held, HOSTILE_CONNS,
		(long long)control_num(&e, "connections_refused"), rss1, rss0);
	CU_ASSERT(control_num(&e, "connections_refused") >= HOSTILE_CONNS - 64 - 16);
	CU_ASSERT(bystander_fine(&e, "a thousand connections"));
	/* noise, a line without end, a reader that never reads */
	fd = connect_to(e.ctl, SOCK_STREAM);
	CU_ASSERT(fd >= 0);
	fprintf(stderr, "\n  noise: %zu bytes taken", pour(fd, 16 << 20, 0, NULL));
	close(fd);
	fd = connect_to(e.ctl, SOCK_STREAM);
	CU_ASSERT(fd >= 0);
	fprintf(stderr, "\n  endless line: %zu bytes taken", pour(fd, 16 << 20, 'a', NULL));
	close(fd);
	fd = connect_to(e.ctl, SOCK_STREAM);
	CU_ASSERT(fd >= 0);
	fprintf(stderr, "\n  never reads: %zu bytes of commands taken",
		pour(fd, 64 << 20, 0, "{\"execute\":\"query-pool\"}\n"));
	close(fd);
	/* the pool service: garbage packets */
	fd = connect_to(e.pool, SOCK_SEQPACKET);
	CU_ASSERT(fd >= 0);
	fprintf(stderr, "\n  pool service noise: %zu bytes taken", pour(fd, 4 << 20, 0, NULL));
	close(fd);
	/* another user, through a socket file someone made world-writable */
	sh(NULL, 0, "chmod o+x %s; chmod 666 %s", test_run_dir(), e.ctl);
	child = fork();
	if (child == 0) {
		char buf[256];
		ssize_t n;

		if (setgid(65534) || setuid(65534))
			_exit(2);
		fd = connect_to(e.ctl, SOCK_STREAM);
		if (fd < 0)
			_exit(3);
		fcntl(fd, F_SETFL, 0);
		n = read(fd, buf, sizeof(buf));	/* a greeting would be a failure */
		_exit(n > 0 ? 1 : 0);
	}
	CU_ASSERT(child > 0 && waitpid(child, &status, 0) == child);
	CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	sh(NULL, 0, "chmod 600 %s", e.ctl);
	/* all is as it was: the VMs, the pool, the daemon's answers and memory */
	CU_ASSERT(bystander_fine(&e, "hostile clients"));
	r = frag_json(e.ctl);
	CU_ASSERT_PTR_NOT_NULL(r);
	CU_ASSERT(num(json_object_get(r, "pool_service"), "bad_messages") +
		  num(json_object_get(r, "pool_service"), "refused") > 0);
	json_decref(r);
	rss1 = rss_kb(e.daemon_pid);
	fprintf(stderr, "\n  daemon RSS %ld kB before, %ld kB after", rss0, rss1);
	CU_ASSERT(rss0 > 0 && rss1 > 0 && rss1 - rss0 < 64 * 1024);
	stop_env(&e);
	CU_ASSERT_EQUAL(setrlimit(RLIMIT_NOFILE, &old), 0);
}

/*
 * A kernel without Landlock (the probe made to answer ENOSYS, as one built
 * without it does: GPMM_FAULT=landlock:1): the VM runs under seccomp alone
 * and says what that leaves open; with Landlock, no such warning.
 */
static void test_no_landlock(void)
{
	const char *cmd = "%s%s timeout 300 %s run --own-pool --pool 64M --kernel %s --ram 16M "
			  "--console stdio </dev/null 2>&1; echo rc=$?";

	sh(out, sizeof(out), cmd, "GPMM_FAULT=landlock:1", "", gpmm_bin(), payload("hello"));
	fprintf(stderr, "\n  %s", out);
	CU_ASSERT_EQUAL(rc_of(out), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "this kernel has no Landlock"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "the file system is not restricted"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "seccomp still applies"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "hello"));
	sh(out, sizeof(out), cmd, "", "", gpmm_bin(), payload("hello"));
	CU_ASSERT_EQUAL(rc_of(out), 0);
	CU_ASSERT_PTR_NULL(strstr(out, "not restricted"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "hello"));
}

/*
 * gpmm daemon opens files only where it was told: a VM it runs may read
 * its kernel and write its console file in an --allow directory, and
 * neither in another one outside its run directory (refused, said to the
 * client with the way out, nothing written); the daemon lives on to run
 * the next VM. A sanitizer build's daemon may read everywhere (its
 * runtime reads the binary and libraries and runs a symbolizer).
 */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define DAEMON_READS_ALL	true
#else
#define DAEMON_READS_ALL	false
#endif

static void test_daemon_allow(void)
{
	char sock[256], ok[64], no[64];
	const char *run = "timeout 300 %s run --daemon %s --kernel %s/hello.bin --ram 8M "
			  "--console file:%s/c.log 2>&1; echo rc=$?";

	snprintf(sock, sizeof(sock), "%s/allow.sock", test_run_dir());
	snprintf(ok, sizeof(ok), "/tmp/gpmm-allow-ok-%d", (int)getpid());
	snprintf(no, sizeof(no), "/tmp/gpmm-allow-no-%d", (int)getpid());
	CU_ASSERT_EQUAL_FATAL(sh(NULL, 0, "rm -rf %1$s %2$s && mkdir %1$s %2$s && "
				 "cp %3$s %1$s/ && cp %3$s %2$s/", ok, no, payload("hello")), 0);
	CU_ASSERT_EQUAL_FATAL(sh(NULL, 0, "%1$s daemon --socket %2$s --pool 64M --allow %3$s "
				 ">%4$s/allow-daemon.log 2>&1 & for i in $(seq 300); do "
				 "[ -S %2$s ] && exit 0; sleep 0.1; done; exit 1",
				 gpmm_bin(), sock, ok, test_run_dir()), 0);
	/* a kernel outside: not read */
	sh(out, sizeof(out), run, gpmm_bin(), sock, no, ok);
	fprintf(stderr, "\n  kernel outside --allow: %s", out);
	if (DAEMON_READS_ALL) {
		CU_ASSERT_EQUAL(rc_of(out), 0);
	} else {
		CU_ASSERT_NOT_EQUAL(rc_of(out), 0);
		CU_ASSERT_PTR_NOT_NULL(strstr(out, "Permission denied"));
		CU_ASSERT_PTR_NOT_NULL(strstr(out, "--allow DIR"));
	}
	/* a console file outside: not written */
	sh(out, sizeof(out), run, gpmm_bin(), sock, ok, no);
	fprintf(stderr, "  console outside --allow: %s", out);
	CU_ASSERT_NOT_EQUAL(rc_of(out), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "Permission denied"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "--allow DIR"));
	CU_ASSERT_NOT_EQUAL(sh(NULL, 0, "test -e %s/c.log", no), 0);
	/* both inside: the VM runs */
	sh(NULL, 0, "rm -f %s/c.log", ok);
	sh(out, sizeof(out), run, gpmm_bin(), sock, ok, ok);
	CU_ASSERT_EQUAL(rc_of(out), 0);
	CU_ASSERT_EQUAL(sh(out, sizeof(out), "cat %s/c.log", ok), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "hello"));
	sh(NULL, 0, "pkill -TERM -f 'gpmm daemon --socket %s'; rm -rf %s %s", sock, ok, no);
}

static const struct suite_test tests[] = {
	{ "seccomp ends only its process", test_seccomp },
	{ "without Landlock: seccomp alone, said", test_no_landlock },
	{ "daemon opens files only where --allow says", test_daemon_allow },
	{ "every failure point leaves the pool whole", test_fault_points },
	{ "a hostile guest ends only its VM", test_escape },
	{ "hostile clients stop nothing", test_hostile_clients },
};

int register_hardening_suite(void)
{
	return SUITE("hardening", tests);
}
