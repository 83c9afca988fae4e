// SPDX-License-Identifier: GPL-2.0
/*
 * libvirt drives gpmm: real libvirtd and virtlogd (Debian 12's libvirt
 * 9.0, started here by tests/libvirt/env in a mount namespace of this
 * process's own, so the host's libvirt is never touched), real virsh, the
 * shipped domain XML of configs/libvirt/ with gpmm as the <emulator>, and
 * the host pool service (`gpmm daemon`) every domain draws from.
 *
 * What is checked comes from two sides each time: libvirt's view (virsh
 * list, domstats, dommemstat, domstate) against the guest's own (its
 * console, its /proc/meminfo line) or the host kernel's (the domain
 * process's smaps) or the pool service's walk of the pool.
 *
 * Always in the test VM (tests/vm/run): Linux guests need it (DESIGN.md).
 */
#define _GNU_SOURCE
#include <CUnit/CUnit.h>
#include <errno.h>
#include <jansson.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <pty.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/integration/harness.h"

#define POOL_MIB	1024
#define BOOT_TRIES	300	/* 1 s each: Linux in the nested VM boots in 10-60 s */
#define WAIT_TRIES	120	/* 1 s each: a state change, a balloon, a power-off */
#define LINUX		"gpmm-linux"
#define MEMLOOP		"gpmm-memloop"
#define VIRT_INSTALL	"gpmm-virt-install"

static char out[1 << 20];
static bool lv_tried, lv_ready;

static int virsh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* `virsh ARGS`: its exit status; what it printed (stdout and stderr) in out. */
static int virsh(const char *fmt, ...)
{
	char args[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	return sh(out, sizeof(out), "virsh -q %s 2>&1", args);
}

static const char *ctl_socket(void)
{
	static char path[256];

	snprintf(path, sizeof(path), "%s/gpmm.sock", test_run_dir());
	return path;
}

/*
 * Once per run: a private mount namespace, libvirt's daemons in it, and
 * the pool service on GPMM_RUN_DIR's default sockets (the domains get
 * that directory through <qemu:env>).
 */
static bool lv_up(void)
{
	char dir[300], cmd[512];
	int pid;

	if (lv_tried)
		return lv_ready;
	lv_tried = true;
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) {
		fprintf(stderr, "\nlibvirt: no private mount namespace: %s\n", strerror(errno));
		return false;
	}
	snprintf(dir, sizeof(dir), "%s/lv", test_run_dir());
	if (sh(out, sizeof(out), "tests/libvirt/env --setup %s 2>&1", dir)) {
		fprintf(stderr, "\nlibvirt: setup failed:\n%s\n", out);
		return false;
	}
	/* libvirt's domains run as libvirt-qemu: the pool is lent to its group */
	snprintf(cmd, sizeof(cmd), "%s daemon --pool %dM --pool-group libvirt-qemu", gpmm_bin(),
		 POOL_MIB);
	pid = spawn_bg("lv-daemon", cmd);
	lv_ready = pid > 0 && log_says("lv-daemon", "lending the pool", 300);
	return lv_ready;
}

static int lv_cleanup(void)
{
	char dir[300];

	if (!lv_tried)
		return 0;
	snprintf(dir, sizeof(dir), "%s/lv", test_run_dir());
	if (sh(NULL, 0, "tests/libvirt/env --teardown %s", dir))
		fprintf(stderr, "libvirt: teardown failed\n");
	return 0;
}

/*
 * configs/libvirt/NAME.xml.in for this build: its gpmm-qemu and guests, this
 * run's directory; @sed: more sed expressions (a variant), or "".
 */
static const char *lv_xml(const char *name, const char *sed)
{
	static char path[512];
	char bin[PATH_MAX], guests[PATH_MAX];

	if (!realpath(gpmm_bin(), bin) || !realpath(guest_file("."), guests))
		return "/nonexistent";
	snprintf(path, sizeof(path), "%s/%s.xml", test_run_dir(), name);
	if (sh(NULL, 0, "sed -e 's#@TOP@/build/gpmm-qemu#%s/gpmm-qemu#' -e 's#@TOP@/build/guests#%s#g' "
	       "-e 's#@RUN_DIR@#%s#g' %s configs/libvirt/%s.xml.in > %s", dirname(bin), guests,
	       test_run_dir(), sed, name, path))
		return "/nonexistent";
	return path;
}

static const char *console_log(const char *dom)
{
	static char path[300];

	snprintf(path, sizeof(path), "%s/%s.console.log", test_run_dir(), dom);
	return path;
}

/* Wait (bounded by count) until @file holds @needle. */
static bool file_says(const char *file, const char *needle, int tries)
{
	for (int i = 0; i < tries; i++) {
		if (sh(NULL, 0, "grep -qF -- '%s' %s 2>/dev/null", needle, file) == 0)
			return true;
		sleep(1);
	}
	return false;
}

static bool domstate_is(const char *dom, const char *state, int tries)
{
	for (int i = 0; i < tries; i++) {
		if (virsh("domstate %s", dom) == 0 && !strncmp(out, state, strlen(state)))
			return true;
		sleep(1);
	}
	return false;
}

/* "KEY VALUE" (dommemstat) or "  KEY=VALUE" (domstats) in out; -1 if absent. */
static long long field(const char *key)
{
	const char *p = out;
	size_t n = strlen(key);

	while ((p = strstr(p, key))) {
		bool line_start = p == out || p[-1] == '\n' || p[-1] == ' ';

		if (line_start && (p[n] == ' ' || p[n] == '='))
			return atoll(p + n + 1);
		p += n;
	}
	return -1;
}

static json_int_t num(json_t *o, const char *key)
{
	return json_integer_value(json_object_get(o, key));
}

/* The service's count of free pool bytes (its walk of the pool). */
static long long pool_free_bytes(void)
{
	json_t *r = frag_json(ctl_socket());
	long long f = r ? num(json_object_get(r, "host"), "free_bytes") : -1;

	json_decref(r);
	return f;
}

/* Every frame back: the pool service's walk finds the whole pool free. */
static bool pool_whole(int tries)
{
	for (int i = 0; i < tries; i++) {
		if (pool_free_bytes() == (long long)POOL_MIB << 20)
			return true;
		sleep(1);
	}
	return false;
}

/*
 * What @fd delivers in the next 100 ms, appended to @buf (of @size, kept
 * a C string; past half full only its recent quarter stays, @banner
 * moving with it, 1 once it has scrolled out: 0 would mean not seen yet,
 * and the shell's prompt would never be looked for). False once the far side has gone. A loop of these
 * counts tenths of a second however much the guest prints: a poll that
 * returns at each byte of a booting kernel's log would count bytes.
 */
static bool console_tick(int fd, char *buf, size_t size, size_t *len, size_t *banner)
{
	struct timespec now, end;
	long ms;

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_nsec += 100 * 1000000L;
	end.tv_sec += end.tv_nsec / 1000000000L;
	end.tv_nsec %= 1000000000L;
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		clock_gettime(CLOCK_MONOTONIC, &now);
		ms = (end.tv_sec - now.tv_sec) * 1000 + (end.tv_nsec - now.tv_nsec) / 1000000;
		if (ms <= 0)
			return true;
		if (poll(&p, 1, (int)ms) <= 0)
			continue;
		if (*len > size / 2) {
			size_t drop = *len - size / 4;

			memmove(buf, buf + drop, size / 4);
			*banner = *banner > drop ? *banner - drop : !!*banner;
			*len = size / 4;
		}
		n = read(fd, buf + *len, size - 1 - *len);
		if (n <= 0)
			return false;
		*len += (size_t)n;
		buf[*len] = '\0';
	}
}

/*
 * Type @line into `virsh console` (on a pty, as at an operator's
 * terminal) and wait up to @timeout_s seconds for @want; leave with
 * Ctrl-], as an operator does. virsh flushes what was typed before its
 * terminal went raw, so Enter is pressed (every 5 s, a bounded number of
 * times) until the guest's shell shows a prompt after the banner, and
 * only then the line. With @ready, a session attached while the guest
 * boots types nothing before the guest has printed @ready: keys pressed
 * into an early Linux boot are where the TCG test VM's own kernel froze
 * on CI (docs/hosts.md), and a boot the session did not see through
 * fails the test.
 */
static bool console_answers(const char *dom, const char *ready, const char *line,
			    const char *want, int timeout_s)
{
	static char buf[1 << 16];
	size_t len = 0, banner = 0;
	bool typed = false, found = false, gone = false, booted = !ready;
	int master, status, enters = 0, tick;
	pid_t pid = forkpty(&master, NULL, NULL, NULL);

	if (pid < 0)
		return false;
	if (pid == 0) {
		execlp("virsh", "virsh", "console", dom, "--force", (char *)NULL);
		_exit(127);
	}
	buf[0] = '\0';
	for (tick = 0; tick < 10 * timeout_s && !found && !gone; tick++) {
		const char *b;

		gone = !console_tick(master, buf, sizeof(buf), &len, &banner);
		if (!banner && (b = strstr(buf, "Escape character"))) {
			banner = (size_t)(b - buf) + 16;
			continue;
		}
		if (banner && !booted && (b = strstr(buf + banner, ready))) {
			banner = (size_t)(b - buf) + strlen(ready);
			booted = true;
			fprintf(stderr, "init seen; ");
		}
		if (!booted)
			continue;
		if (banner && !typed && strstr(buf + banner, "# ")) {
			char cmd[512];
			int l = snprintf(cmd, sizeof(cmd), "%s\r", line);

			typed = write(master, cmd, (size_t)l) == l;
			if (ready)
				fprintf(stderr, "typed; ");
		} else if (banner && !typed && tick % 50 == 10 && enters++ < 12) {
			if (write(master, "\r", 1) != 1)
				break;
		}
		found = typed && strstr(buf + banner, want);
	}
	if (write(master, "\x1d", 1) != 1)
		kill(pid, SIGTERM);
	for (int i = 0; i < 100 && waitpid(pid, &status, WNOHANG) == 0; i++)
		usleep(100000);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	close(master);
	if (!found)
		fprintf(stderr, "\nvirsh console %s after %d s%s%s; its last words:\n%s\n",
			gone ? "ended" : "was left", tick / 10, booted ? "" : ", never saw ",
			booted ? "" : ready, len > 2000 ? buf + len - 2000 : buf);
	return found;
}

static int domain_pid(const char *dom)
{
	char path[256];

	snprintf(path, sizeof(path), "/run/libvirt/qemu/%s.pid", dom);
	return read_pid(path);
}

/* A gpmm built with sanitizers reports into the domain's log (virtlogd). */
static bool domain_logs_clean(void)
{
	return sh(out, sizeof(out), "grep -h -A20 Sanitizer /var/log/libvirt/qemu/*.log") != 0;
}

/* A VM whose report by the service names it, with its process. */
static bool service_reports(json_t *r, const char *name)
{
	json_t *v;
	size_t i;

	json_array_foreach(json_object_get(r, "vms"), i, v)
		if (!strcmp(json_string_value(json_object_get(v, "name")) ?: "", name) &&
		    json_is_object(json_object_get(v, "process")))
			return true;
	return false;
}

/* What an earlier test left behind (it failed half-way): gone. */
static void forget_domains(void)
{
	static const char *const doms[] = { LINUX, MEMLOOP, MEMLOOP "2", VIRT_INSTALL };

	for (size_t i = 0; i < sizeof(doms) / sizeof(doms[0]); i++) {
		virsh("destroy %s", doms[i]);
		virsh("undefine %s", doms[i]);
	}
}

/* The VM's populated bytes by its own report, through libvirt's monitor pass-through. */
static long long vm_populated(const char *dom)
{
	json_t *r, *vm;
	long long pop;

	if (virsh("qemu-monitor-command %s '{\"execute\":\"query-fragmentation\"}'", dom))
		return -1;
	r = json_loads(out, 0, NULL);
	vm = json_array_get(json_object_get(json_object_get(r, "return"), "vms"), 0);
	pop = vm ? num(vm, "populated_bytes") : -1;
	json_decref(r);
	return pop;
}

static bool start_linux(const char *sed)
{
	unlink(console_log(LINUX));
	CU_ASSERT_EQUAL_FATAL(virsh("define %s", lv_xml("linux", sed)), 0);
	if (virsh("start %s", LINUX)) {
		fprintf(stderr, "\nvirsh start: %s\n", out);
		return false;
	}
	return file_says(console_log(LINUX), "GPMM-LINUX-INIT", BOOT_TRIES);
}

/*
 * The shipped Linux domain through its whole life: define, start, list,
 * console (log and interactive), the fragmentation report through
 * qemu-monitor-command, domstats, dommemstat, setmem, shutdown, undefine.
 */
static void test_linux_domain(void)
{
	long long memtotal_kb, huge, smaps, before, after, pop_before, pop_after;
	json_t *r, *vm;
	int pid;

	CU_ASSERT_FATAL(lv_up());
	forget_domains();
	/*
	 * Free page reporting off in this domain: with it on, the guest would
	 * already have handed back the pages it freed, and setmem's balloon
	 * would find nothing backed left to return.
	 */
	CU_ASSERT_FATAL(start_linux("-e \"s#<memballoon model='virtio'>#"
				    "<memballoon model='virtio' freePageReporting='off'>#\""));
	CU_ASSERT_EQUAL(virsh("list"), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, LINUX));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "running"));
	CU_ASSERT(sh(out, sizeof(out), "sed -n 's/.*memtotal_kb=\\([0-9]*\\).*/\\1/p' %s",
		     console_log(LINUX)) == 0);
	memtotal_kb = atoll(out);
	CU_ASSERT(memtotal_kb > 128 * 1024);

	/* the console answers a typed command: the shell computes 42 */
	CU_ASSERT(console_answers(LINUX, NULL, "echo gpmm-$((6*7))", "gpmm-42", WAIT_TRIES));

	/* gpmm's own report through libvirt's monitor pass-through */
	CU_ASSERT_EQUAL(virsh("qemu-monitor-command %s '{\"execute\":\"query-fragmentation\"}'",
			      LINUX), 0);
	r = json_loads(out, 0, NULL);
	vm = json_array_get(json_object_get(json_object_get(r, "return"), "vms"), 0);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(vm, "name")) ?: "", LINUX);
	CU_ASSERT(num(vm, "populated_bytes") > 0);
	json_decref(r);

	/* domstats --vm: huge-backed bytes, against the kernel's smaps of the process */
	pid = domain_pid(LINUX);
	CU_ASSERT(pid > 0);
	huge = smaps = -1;
	for (int i = 0; i < 30; i++) {
		CU_ASSERT_EQUAL(virsh("domstats %s --vm", LINUX), 0);
		huge = field("vm.huge_backed_bytes.cur");
		smaps = smaps_pmd_kb(pid) * 1024;
		if (huge > 0 && llabs(huge - smaps) <= (huge > smaps ? huge : smaps) / 10)
			break;
		sleep(1);
	}
	CU_ASSERT(huge > 0);
	CU_ASSERT(llabs(huge - smaps) <= (huge > smaps ? huge : smaps) / 10);
	CU_ASSERT(field("vm.populated_bytes.cur") >= huge);

	/* dommemstat: the balloon's statistics are the guest's own MemTotal */
	for (int i = 0; i < WAIT_TRIES; i++) {
		if (virsh("dommemstat %s", LINUX) == 0 && field("available") > 0)
			break;
		sleep(1);
	}
	CU_ASSERT_EQUAL(field("available"), memtotal_kb);
	CU_ASSERT_EQUAL(field("actual"), 256 * 1024);
	CU_ASSERT(field("rss") > 0);

	/*
	 * setmem: the guest frees 48 MiB it wrote, the balloon takes 128 MiB,
	 * and the frames behind what it took go back to the pool: the
	 * service's walk of the pool gains what the VM's own bookkeeping
	 * lost (the balloon also returns pages the guest zeroed to give them,
	 * Debian's init_on_alloc: those come and go within the call).
	 */
	CU_ASSERT(console_answers(LINUX, NULL, "dd if=/dev/zero of=/tmp/x bs=1M count=48 && "
				  "rm /tmp/x && echo gpmm-dd-$((1+1))", "gpmm-dd-2", 3 * WAIT_TRIES));
	sleep(2);	/* the daemon's report of the process is a second old at most */
	before = pool_free_bytes();
	pop_before = vm_populated(LINUX);
	CU_ASSERT_EQUAL(virsh("setmem %s 128M --live", LINUX), 0);
	for (int i = 0; i < WAIT_TRIES; i++) {
		if (virsh("dommemstat %s", LINUX) == 0 && field("actual") == 128 * 1024)
			break;
		sleep(1);
	}
	CU_ASSERT_EQUAL(field("actual"), 128 * 1024);
	sleep(2);
	after = pool_free_bytes();
	pop_after = vm_populated(LINUX);
	fprintf(stderr, "\n  setmem 128M: pool free %+lld MiB, the VM's populated %+lld MiB ",
		(after - before) >> 20, (pop_after - pop_before) >> 20);
	CU_ASSERT(after - before >= 8LL << 20);
	CU_ASSERT(llabs((after - before) - (pop_before - pop_after)) <= 4LL << 20);
	CU_ASSERT_EQUAL(virsh("dominfo %s", LINUX), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "131072 KiB"));	/* BALLOON_CHANGE seen */

	/* shutdown: the ACPI power button, the guest's acpid, its poweroff */
	CU_ASSERT_EQUAL(virsh("shutdown %s", LINUX), 0);
	CU_ASSERT(domstate_is(LINUX, "shut off", WAIT_TRIES));
	CU_ASSERT(file_says(console_log(LINUX), "power button pressed", 5));
	CU_ASSERT(file_says(console_log(LINUX), "system sleep state S5", 5));
	CU_ASSERT(pool_whole(30));
	CU_ASSERT_EQUAL(virsh("undefine %s", LINUX), 0);
	CU_ASSERT_EQUAL(virsh("list --all --name"), 0);
	CU_ASSERT_PTR_NULL(strstr(out, LINUX));
	CU_ASSERT(domain_logs_clean());
}

static bool start_memloop(const char *name)
{
	char sed[256];

	unlink(console_log(name));
	snprintf(sed, sizeof(sed), "-e 's#" MEMLOOP "#%s#g'", name);
	if (virsh("define %s", lv_xml("payload", sed)) || virsh("start %s", name)) {
		fprintf(stderr, "\n%s\n", out);
		return false;
	}
	return file_says(console_log(name), "MiB touched", WAIT_TRIES);
}

/*
 * Two domains started by libvirt are two VM processes of one host pool:
 * the service reports both; destroy (SIGTERM) ends a running one, and
 * every frame comes back. Two memloops (they write their RAM and check
 * every word): no Linux boot needed here.
 */
static void test_two_domains_share_pool(void)
{
	json_t *r;

	CU_ASSERT_FATAL(lv_up());
	forget_domains();
	CU_ASSERT(start_memloop(MEMLOOP));
	CU_ASSERT(start_memloop(MEMLOOP "2"));
	sleep(2);	/* each process's report reaches the service within a second */
	r = frag_json(ctl_socket());
	CU_ASSERT(service_reports(r, MEMLOOP));
	CU_ASSERT(service_reports(r, MEMLOOP "2"));
	json_decref(r);
	CU_ASSERT(pool_free_bytes() < (long long)POOL_MIB << 20);

	CU_ASSERT_EQUAL(virsh("destroy %s", MEMLOOP), 0);
	CU_ASSERT(domstate_is(MEMLOOP, "shut off", WAIT_TRIES));
	CU_ASSERT(domstate_is(MEMLOOP "2", "running", 1));
	CU_ASSERT_EQUAL(virsh("destroy %s", MEMLOOP "2"), 0);
	CU_ASSERT(domstate_is(MEMLOOP "2", "shut off", WAIT_TRIES));
	CU_ASSERT(pool_whole(30));
	CU_ASSERT_EQUAL(virsh("undefine %s", MEMLOOP), 0);
	CU_ASSERT_EQUAL(virsh("undefine %s", MEMLOOP "2"), 0);
	CU_ASSERT(sh(NULL, 0, "grep -q 'lost write' %s %s", console_log(MEMLOOP),
		     console_log(MEMLOOP "2")) != 0);
	CU_ASSERT(domain_logs_clean());
}

/*
 * The shipped Linux domain's interface on libvirt's network 'default'
 * (tests/libvirt/env makes it isolated: a bridge, no address, no
 * forwarding, no DHCP), and one more of type 'ethernet' on a tap the test
 * made (managed='no') in the same bridge. libvirt opens both taps and
 * hands gpmm their descriptors. The host side is a veth into a network
 * namespace of the test's own, where the addresses live (10.99.2.1 and
 * 10.99.3.1, one subnet per interface) and a busybox httpd serves a 1 MB
 * file: both interfaces answer ping from there and fetch the file with
 * its sha256 intact. (The veth goes with the namespace.)
 */
static void test_linux_domain_network(void)
{
	char ns[32], dir[300], sum[80] = "", line[300], want[100];
	const char *sed = "-e \"s#</devices>#<interface type='ethernet'><target dev='gtapE' "
		"managed='no'/><mac address='52:54:00:00:02:03'/><model type='virtio'/>"
		"</interface></devices>#\"";
	int setup;

	CU_ASSERT_FATAL(lv_up());
	forget_domains();
	snprintf(ns, sizeof(ns), "gpmmlv%d", (int)getpid());
	snprintf(dir, sizeof(dir), "%s/lvwww", test_run_dir());
	setup = sh(out, sizeof(out), "virsh -q net-info default | grep -q 'Active: *yes' && "
		"ip netns add %s && ip -n %s link set lo up && "
		"ip link add gvh type veth peer name gvn && ip link set gvn netns %s && "
		"ip -n %s addr add 10.99.2.1/24 dev gvn && ip -n %s addr add 10.99.3.1/24 dev gvn && "
		"ip -n %s link set gvn up && ip link set gvh master gpmmbr0 && ip link set gvh up && "
		"ip tuntap add gtapE mode tap && ip link set gtapE master gpmmbr0 && "
		"ip link set gtapE up && mkdir -p %s && head -c 1000000 /dev/urandom > %s/blob && "
		"ip netns exec %s busybox httpd -p 8080 -h %s && sha256sum %s/blob 2>&1",
		ns, ns, ns, ns, ns, ns, dir, dir, ns, dir, dir);
	if (setup)
		fprintf(stderr, "\n  network set-up failed: %.2000s\n", out);
	CU_ASSERT_EQUAL_FATAL(setup, 0);
	sscanf(out, "%64s", sum);
	CU_ASSERT_FATAL(start_linux(sed));
	CU_ASSERT(console_answers(LINUX, NULL, "for i in eth0 eth1; do case $(cat /sys/class/net/$i/"
		"address) in *:00:02:03) a=10.99.3.3;; *) a=10.99.2.2;; esac; ip addr add $a/24 dev "
		"$i && ip link set $i up || break; done; echo net-$((40+2))", "net-42", WAIT_TRIES));
	CU_ASSERT_EQUAL(sh(out, sizeof(out), "ip netns exec %s busybox ping -c 3 -W 20 10.99.2.2 "
			   "&& ip netns exec %s busybox ping -c 3 -W 20 10.99.3.3", ns, ns), 0);
	for (int k = 2; k <= 3; k++) {
		snprintf(line, sizeof(line), "wget -q -O - http://10.99.%d.1:8080/blob | sha256sum | "
			 "sed 's/^/sum%d=/'", k, k);
		snprintf(want, sizeof(want), "sum%d=%s", k, sum);
		CU_ASSERT(strlen(sum) == 64 && console_answers(LINUX, NULL, line, want, WAIT_TRIES));
	}
	CU_ASSERT_EQUAL(virsh("destroy %s", LINUX), 0);
	CU_ASSERT(domstate_is(LINUX, "shut off", WAIT_TRIES));
	CU_ASSERT(pool_whole(30));
	CU_ASSERT_EQUAL(virsh("undefine %s", LINUX), 0);
	CU_ASSERT(domain_logs_clean());
	if (sh(NULL, 0, "ip netns pids %s | xargs -r kill; ip netns del %s; ip link del gtapE",
	       ns, ns))
		fprintf(stderr, "\n  could not remove the test's network namespace and tap\n");
}

/*
 * What gpmm refuses reaches virsh's output as gpmm's own sentence, and a
 * malformed monitor command gets QEMU's error while the domain runs on.
 */
static void test_bad_input(void)
{
	CU_ASSERT_FATAL(lv_up());
	forget_domains();

	/* a device gpmm lacks */
	CU_ASSERT_EQUAL(virsh("define %s", lv_xml("payload",
		"-e \"s#<memballoon model='none'/>#<memballoon model='none'/><sound model='ich6'/>#\"")), 0);
	CU_ASSERT_NOT_EQUAL(virsh("start %s", MEMLOOP), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "gpmm: -device"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "gpmm has no such device"));
	fprintf(stderr, "\n  %.300s", out);
	CU_ASSERT_EQUAL(virsh("undefine %s", MEMLOOP), 0);

	/* too little memory for a VM */
	CU_ASSERT_EQUAL(virsh("define %s", lv_xml("payload",
		"-e \"s#<memory unit='MiB'>16</memory>#<memory unit='KiB'>1024</memory>#\"")), 0);
	CU_ASSERT_NOT_EQUAL(virsh("start %s", MEMLOOP), 0);
	CU_ASSERT_PTR_NOT_NULL(strcasestr(out, "RAM must be a multiple of 2 MiB"));
	fprintf(stderr, "\n  %.300s", out);
	CU_ASSERT_EQUAL(virsh("undefine %s", MEMLOOP), 0);

	/* malformed monitor commands to a running domain */
	unlink(console_log(MEMLOOP));
	CU_ASSERT_EQUAL(virsh("define %s", lv_xml("payload", "")), 0);
	if (virsh("start %s", MEMLOOP)) {
		fprintf(stderr, "\n%s\n", out);
		CU_FAIL_FATAL("virsh start " MEMLOOP);
	}
	CU_ASSERT_EQUAL(virsh("qemu-monitor-command %s '{bad json'", MEMLOOP), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "CommandNotFound"));
	CU_ASSERT_EQUAL(virsh("qemu-monitor-command %s "
			      "'{\"execute\":\"balloon\",\"arguments\":{\"value\":\"lots\"}}'",
			      MEMLOOP), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "Invalid parameter type for 'value'"));
	CU_ASSERT_EQUAL(virsh("qemu-monitor-command %s "
			      "'{\"execute\":\"qom-get\",\"arguments\":{\"path\":[1]}}'", MEMLOOP), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "GenericError"));
	CU_ASSERT_EQUAL(virsh("qemu-monitor-command %s --hmp 'info nonsense'", MEMLOOP), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "unknown command"));
	CU_ASSERT_EQUAL(virsh("qemu-monitor-command %s '{\"execute\":\"query-status\"}'", MEMLOOP), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"running\""));
	CU_ASSERT(domstate_is(MEMLOOP, "running", 1));
	CU_ASSERT(file_says(console_log(MEMLOOP), "MiB touched", WAIT_TRIES));
	CU_ASSERT_EQUAL(virsh("destroy %s", MEMLOOP), 0);
	CU_ASSERT_EQUAL(virsh("undefine %s", MEMLOOP), 0);
	CU_ASSERT(pool_whole(30));
	CU_ASSERT(domain_logs_clean());
}

/* The uid of process @pid, all four of /proc/PID/status's Uid line alike; -1 if not. */
static long proc_uid(int pid)
{
	long r, e, s, f;

	if (sh(out, sizeof(out), "grep '^Uid:' /proc/%d/status", pid) ||
	    sscanf(out, "Uid: %ld %ld %ld %ld", &r, &e, &s, &f) != 4 || r != e || e != s || s != f)
		return -1;
	return r;
}

/*
 * Under libvirt's defaults (Debian's qemu.conf plus configs/libvirt's
 * lines): the domain's gpmm process runs as libvirt-qemu, in a mount
 * namespace of its own, and still draws its RAM from the host pool
 * service (through the socket the service opened to that user's group).
 */
static void test_domain_runs_as_libvirt_qemu(void)
{
	struct passwd *pw = getpwnam("libvirt-qemu");
	char ns_dom[64] = "", ns_self[64] = "", path[64];
	json_t *r;
	int pid;

	CU_ASSERT_FATAL(lv_up());
	CU_ASSERT_PTR_NOT_NULL_FATAL(pw);
	forget_domains();
	CU_ASSERT_FATAL(start_memloop(MEMLOOP));
	pid = domain_pid(MEMLOOP);
	CU_ASSERT_FATAL(pid > 0);
	fprintf(stderr, "\n  domain process %d: uid %ld (libvirt-qemu is %u) ", pid, proc_uid(pid),
		(unsigned int)pw->pw_uid);
	CU_ASSERT_EQUAL(proc_uid(pid), (long)pw->pw_uid);
	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", pid);
	CU_ASSERT(readlink(path, ns_dom, sizeof(ns_dom) - 1) > 0);
	CU_ASSERT(readlink("/proc/self/ns/mnt", ns_self, sizeof(ns_self) - 1) > 0);
	CU_ASSERT_STRING_NOT_EQUAL(ns_dom, ns_self);
	sleep(2);	/* its report reaches the service within a second */
	r = frag_json(ctl_socket());
	CU_ASSERT(service_reports(r, MEMLOOP));
	json_decref(r);
	CU_ASSERT_EQUAL(virsh("destroy %s", MEMLOOP), 0);
	CU_ASSERT_EQUAL(virsh("undefine %s", MEMLOOP), 0);
	CU_ASSERT(pool_whole(30));
	CU_ASSERT(domain_logs_clean());
}

/*
 * The domain a user gets from virt-install (Debian's virtinst), direct
 * kernel boot, no graphics, no disk, a virtio NIC on libvirt's network,
 * an OS it does not know: its XML as `virt-install --print-xml` writes
 * it, the emulator gpmm's. libvirt adds its memballoon; virt-install four
 * USB controllers and a pty console. It starts; a `virsh console` session
 * attached while it boots sees the boot reach init, then the guest's
 * shell answers it; and the domain's log says once that the USB controllers have nothing
 * behind them. Without <qemu:env GPMM_RUN_DIR> it still finds the host
 * pool service on the system's socket (it took a pool of its own before).
 */
static void test_virt_install_domain(void)
{
	char bin[PATH_MAX], guests[PATH_MAX], xml[300];
	int usb_lines;

	CU_ASSERT_FATAL(lv_up());
	forget_domains();
	CU_ASSERT_FATAL(realpath(gpmm_bin(), bin) && realpath(guest_file("."), guests));
	snprintf(xml, sizeof(xml), "%s/%s.xml", test_run_dir(), VIRT_INSTALL);
	if (sh(out, sizeof(out), "virt-install --print-xml --name %s --memory 256 --vcpus 1 "
	       "--import --disk none --boot kernel=%s/linux/bzImage,initrd=%s/linux/initramfs.cpio.gz,"
	       "kernel_args=console=ttyS0 --graphics none --network network=default,model=virtio "
	       "--osinfo detect=on,require=off 2>&1 > %s", VIRT_INSTALL, guests, guests, xml)) {
		fprintf(stderr, "\nvirt-install: %s\n", out);
		CU_FAIL_FATAL("virt-install --print-xml");
	}
	CU_ASSERT_EQUAL(sh(NULL, 0, "sed -i 's#<emulator>.*</emulator>#<emulator>%s/gpmm-qemu"
			   "</emulator>#' %s", dirname(bin), xml), 0);
	CU_ASSERT_EQUAL(sh(out, sizeof(out), "grep -c \"<controller type=.usb.\" %s", xml), 0);
	fprintf(stderr, "\n  virt-install's domain: %d USB controllers ", atoi(out));
	/* the system's socket, in this run's private mount namespace */
	CU_ASSERT_EQUAL_FATAL(sh(out, sizeof(out), "mkdir -p /run/gpmm && mount -t tmpfs -o mode=0755 "
				 "tmpfs /run/gpmm && ln -s %s/pool.sock /run/gpmm/pool.sock 2>&1",
				 test_run_dir()), 0);
	CU_ASSERT_EQUAL_FATAL(virsh("define %s", xml), 0);
	if (virsh("start %s", VIRT_INSTALL)) {
		fprintf(stderr, "\nvirsh start: %s\n", out);
		CU_FAIL_FATAL("virsh start of virt-install's domain");
	}
	/* each step on the console: where the test VM froze, when it does */
	fprintf(stderr, "started; ");
	CU_ASSERT(domstate_is(VIRT_INSTALL, "running", WAIT_TRIES));
	/* one session, attached while the guest boots, sees the boot through to the shell */
	CU_ASSERT(console_answers(VIRT_INSTALL, "GPMM-LINUX-INIT", "echo gpmm-$((6*7))", "gpmm-42", BOOT_TRIES));
	CU_ASSERT_EQUAL(sh(out, sizeof(out), "grep -c 'USB controllers (ich9-usb-ehci1, ...) accepted "
			   "with nothing behind them' /var/log/libvirt/qemu/%s.log", VIRT_INSTALL), 0);
	usb_lines = atoi(out);
	CU_ASSERT_EQUAL(usb_lines, 1);
	CU_ASSERT_EQUAL(sh(out, sizeof(out), "grep -c 'guest RAM from the host pool service on "
			   "/run/gpmm/pool.sock' /var/log/libvirt/qemu/%s.log", VIRT_INSTALL), 0);
	CU_ASSERT_EQUAL(atoi(out), 1);
	CU_ASSERT_EQUAL(virsh("destroy %s", VIRT_INSTALL), 0);
	CU_ASSERT_EQUAL(sh(NULL, 0, "umount -l /run/gpmm"), 0);
	CU_ASSERT(domstate_is(VIRT_INSTALL, "shut off", WAIT_TRIES));
	CU_ASSERT_EQUAL(virsh("undefine %s", VIRT_INSTALL), 0);
	CU_ASSERT(pool_whole(30));
	CU_ASSERT(domain_logs_clean());
}

int register_libvirt_suite(void)
{
	CU_pSuite s = CU_add_suite("libvirt", NULL, lv_cleanup);

	if (!s ||
	    !CU_add_test(s, "Linux domain: define, start, console, report, stats, setmem, shutdown",
			 test_linux_domain) ||
	    !CU_add_test(s, "two domains share the host pool; destroy", test_two_domains_share_pool) ||
	    !CU_add_test(s, "bad input through libvirt", test_bad_input) ||
	    !CU_add_test(s, "a domain runs as libvirt-qemu, in its own namespace",
			 test_domain_runs_as_libvirt_qemu) ||
	    !CU_add_test(s, "the domain virt-install writes", test_virt_install_domain) ||
	    !CU_add_test(s, "Linux domain on a libvirt network and a tap: ping, a fetched file",
			 test_linux_domain_network))
		return CU_get_error();
	return CUE_SUCCESS;
}
