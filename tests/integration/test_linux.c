// SPDX-License-Identifier: GPL-2.0
/*
 * Linux guests: Debian's stock bzImage with our initramfs (make
 * guest-linux), driven through `gpmm run`'s serial console on pipes, as
 * an operator at a terminal would. What is checked comes from the guest
 * itself (its marker line, /proc, dmesg) or from the host kernel (smaps),
 * compared with gpmm's own bookkeeping.
 *
 * Always in the test VM (tests/vm/run): on the emulated KVM some hosts
 * have, Linux stops early (DESIGN.md).
 */
#include <CUnit/CUnit.h>
#include <dirent.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "tests/integration/child.h"
#include "tests/integration/harness.h"

#define BOOT_TIMEOUT	180	/* s: a Linux boot in the nested VM takes 10-60 */
#define CMD_TIMEOUT	120	/* s: a shell command answers in under 5 */

/*
 * A step the rest of the test stands on. When it fails, the test says
 * which and shows the console, then ends the guest: the steps after it
 * would each wait out their time-out for an answer that cannot come.
 */
#define REQUIRE(c, cond)						\
	do {								\
		if (!(cond)) {						\
			lx_failed((c), #cond, __LINE__);		\
			goto out;					\
		}							\
	} while (0)

static void lx_failed(struct child *c, const char *what, unsigned int line)
{
	CU_assertImplementation(CU_FALSE, line, what, __FILE__, "", CU_FALSE);
	fprintf(stderr, "\nline %u failed: %s%s\nconsole tail:\n%s\n", line, what,
		c->send_timed_out ? " (gpmm stopped taking console input)" : "",
		child_tail(c, 3000));
}

/*
 * vCPUs per test guest: 2, unless GPMM_TEST_LINUX_CPUS says otherwise
 * (a developer chasing an SMP-only failure).
 */
static unsigned int lx_cpus(void)
{
	const char *s = getenv("GPMM_TEST_LINUX_CPUS");
	int n = s ? atoi(s) : 2;

	return n >= 1 && n <= 8 ? (unsigned int)n : 2;
}

/* Our init's marker line for a guest with @cpus: "GPMM-LINUX-INIT cpus=N". */
static const char *init_marker(unsigned int cpus)
{
	static char m[64];

	snprintf(m, sizeof(m), "GPMM-LINUX-INIT cpus=%u", cpus);
	return m;
}

static const char *linux_file(const char *name)
{
	char file[256];

	snprintf(file, sizeof(file), "linux/%s", name);
	return guest_file(file);
}

/*
 * Where and how the next boot's gpmm runs: a network namespace (ip netns
 * exec) or NULL, its initramfs, its own pool and the pool's overcommit
 * ratio (NULL: none given). A test that changes them puts lx_default back.
 */
struct lx_host {
	const char *netns, *initrd, *pool, *overcommit;
};
static const struct lx_host lx_default = { NULL, "initramfs.cpio.gz", "512M", NULL };
static struct lx_host lx = lx_default;

/* `gpmm run` of the Linux guest with @ram_mib and @cpus; extra options after. */
static int spawn_linux(struct child *c, const char *kernel, const char *name,
		       unsigned int ram_mib, unsigned int cpus, const char *append,
		       const char *extra)
{
	char ram[16], ncpu[8], qmp[256];
	char *argv[36];
	int n = 0;

	if (lx.netns) {
		argv[n++] = "/sbin/ip";
		argv[n++] = "netns";
		argv[n++] = "exec";
		argv[n++] = (char *)lx.netns;
	}

	snprintf(ram, sizeof(ram), "%uM", ram_mib);
	snprintf(ncpu, sizeof(ncpu), "%u", cpus);
	snprintf(qmp, sizeof(qmp), "%s/%s.qmp", test_run_dir(), name);
	argv[n++] = (char *)gpmm_bin();
	argv[n++] = "run";
	argv[n++] = "--kernel";
	argv[n++] = (char *)linux_file(kernel);
	argv[n++] = "--initrd";
	argv[n++] = (char *)linux_file(lx.initrd);
	argv[n++] = "--ram";
	argv[n++] = ram;
	argv[n++] = "--cpus";
	argv[n++] = ncpu;
	argv[n++] = "--pool";
	argv[n++] = (char *)lx.pool;
	if (lx.overcommit) {
		argv[n++] = "--overcommit";
		argv[n++] = (char *)lx.overcommit;
	}
	argv[n++] = "--name";
	argv[n++] = (char *)name;
	argv[n++] = "--qmp";
	argv[n++] = qmp;
	argv[n++] = "--append";
	argv[n++] = (char *)append;
	if (extra)
		argv[n++] = (char *)extra;
	argv[n] = NULL;
	return child_spawn(c, argv);
}

/* CPU time (clock ticks) of thread @tid of @pid, and its name into @comm. */
static long long thread_ticks(pid_t pid, const char *tid, char *comm, size_t len)
{
	char path[128], buf[512], *close_paren;
	unsigned long long utime, stime;
	const char *open_paren;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", (int)pid, tid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	open_paren = strchr(buf, '(');
	close_paren = strrchr(buf, ')');
	if (!open_paren || !close_paren ||
	    sscanf(close_paren + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
		   &utime, &stime) != 2)
		return -1;
	snprintf(comm, len, "%.*s", (int)(close_paren - open_paren - 1), open_paren + 1);
	return (long long)(utime + stime);
}

/*
 * What gpmm's threads did over one second, for a boot that stalled: a
 * vCPU thread near 100% with no console output is a guest spinning (the
 * nested-TCG stall in README, Tested kernels); all near 0% is a guest, or a
 * test VM, that went idle for good.
 */
static void show_threads(pid_t pid)
{
	char tids[32][16], comm[32], path[64];
	long long t0[32];
	struct dirent *d;
	int n = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return;
	while ((d = readdir(dir)) && n < 32) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(tids[n], sizeof(tids[n]), "%.15s", d->d_name);
		t0[n] = thread_ticks(pid, tids[n], comm, sizeof(comm));
		n++;
	}
	closedir(dir);
	sleep(1);
	fprintf(stderr, "  gpmm's threads over 1 s (CPU %% of one core):");
	for (int i = 0; i < n; i++) {
		long long t1 = thread_ticks(pid, tids[i], comm, sizeof(comm));

		if (t0[i] >= 0 && t1 >= 0)
			fprintf(stderr, " %s %lld%%", comm,
				(t1 - t0[i]) * 100 / sysconf(_SC_CLK_TCK));
	}
	fprintf(stderr, "\n");
}

/*
 * Boot to our init's marker line. In the TCG test VM a Linux guest now
 * and then stalls for good (QEMU's as well as gpmm's; README, Tested kernels): a first
 * boot that shows no marker is reported, with what gpmm's threads were
 * doing, and booted once more; a second stall fails the test.
 */
static bool boot_kernel(struct child *c, const char *kernel, const char *name,
			unsigned int ram_mib, unsigned int cpus, const char *append,
			const char *extra)
{
	for (int try = 1; try <= 2; try++) {
		if (spawn_linux(c, kernel, name, ram_mib, cpus, append, extra))
			return false;
		if (child_expect(c, init_marker(cpus), BOOT_TIMEOUT))
			return true;
		fprintf(stderr, "\n  %s: boot %d showed no '%s' within %d s; console tail:\n%s\n",
			name, try, init_marker(cpus), BOOT_TIMEOUT, child_tail(c, 1500));
		if (c->status < 0)
			show_threads(c->pid);
		if (try == 1)
			child_end(c);
	}
	return false;
}

static bool boot(struct child *c, const char *name, unsigned int ram_mib, unsigned int cpus,
		 const char *append, const char *extra)
{
	return boot_kernel(c, "bzImage", name, ram_mib, cpus, append, extra);
}

static unsigned long long number_after(const char *text, const char *key)
{
	const char *p = text ? strstr(text, key) : NULL;

	return p ? strtoull(p + strlen(key), NULL, 0) : 0;
}

/* Wait for the shell's answer to @cmd: it prints "@tag<value>". */
static bool ask(struct child *c, const char *cmd, const char *tag)
{
	return child_send(c, cmd) && child_expect(c, tag, CMD_TIMEOUT);
}

/*
 * The whole life of a guest: boot with lx_cpus() CPUs and our command line, the
 * guest's view of memory and CPUs, a command typed on the console, a
 * reboot that boots again, a poweroff that ends `gpmm run` with 0.
 */
static void test_linux_boot_console_power(void)
{
	char disk[256], opt[300], buf[64] = "", online[32];
	struct child c;
	const char *p;
	FILE *f;

	/* a 1 MiB raw image: a label in sector 0 for the guest to read */
	snprintf(disk, sizeof(disk), "%s/lx1.img", test_run_dir());
	snprintf(opt, sizeof(opt), "--disk=%s", disk);
	CU_ASSERT_EQUAL_FATAL(sh(NULL, 0, "printf gpmm-disk-label > %s && truncate -s 1M %s",
				 disk, disk), 0);
	REQUIRE(&c, boot(&c, "lx1", 256, lx_cpus(), "quiet gpmm.test=hello", opt));
	REQUIRE(&c, (p = child_rest_of_line(&c, 30)) != NULL);
	/* MemTotal is RAM less what the kernel keeps: between 70% and 100% */
	CU_ASSERT(number_after(p, "memtotal_kb=") > 256 * 1024 * 7 / 10);
	CU_ASSERT(number_after(p, "memtotal_kb=") < 256 * 1024);
	CU_ASSERT(strstr(p, "cmdline=console=ttyS0 quiet gpmm.test=hello") != NULL);

	/* the guest's own account of its memory: our e820 map, "Memory:" = --ram */
	REQUIRE(&c, ask(&c, "dmesg | grep -E 'BIOS-e820|Memory:' | sed 's/^/dm: /'",
			"dm: [    0.000000] BIOS-e820: [mem 0x0000000000100000-0x000000000fffffff] usable"));
	REQUIRE(&c, child_expect(&c, "] Memory: ", 30));
	REQUIRE(&c, child_expect(&c, "reserved", 30));
	p = strstr(c.out, "] Memory: ");
	p = p ? strchr(p, '/') : NULL;
	/* total = RAM less the 0x9fc00-0x100000 hole and page 0 */
	CU_ASSERT(p && atoi(p + 1) > 256 * 1024 - 1024 && atoi(p + 1) <= 256 * 1024);
	snprintf(online, sizeof(online), lx_cpus() > 1 ? "online=0-%u." : "online=0.", lx_cpus() - 1);
	REQUIRE(&c, ask(&c, "echo online=$(cat /sys/devices/system/cpu/online).", online));

	/* typed on the serial console, answered by the guest's shell */
	REQUIRE(&c, ask(&c, "echo answer=$((6*7))", "answer=42"));

	/* virtio-blk: the guest reads our label and writes sector 1 */
	REQUIRE(&c, ask(&c, "echo size=$(cat /sys/block/vda/size)", "size=2048"));
	REQUIRE(&c, ask(&c, "echo label=$(head -c 15 /dev/vda)", "label=gpmm-disk-label"));
	REQUIRE(&c, ask(&c, "echo written-by-linux | dd of=/dev/vda bs=512 seek=1 conv=sync,fsync "
			"2>/dev/null; echo dd=$?", "dd=0"));

	REQUIRE(&c, child_send(&c, "reboot"));
	REQUIRE(&c, child_expect(&c, init_marker(lx_cpus()), BOOT_TIMEOUT));
	REQUIRE(&c, ask(&c, "echo again=$((7*6))", "again=42"));
	/* the operator's shutdown: the power button, the guest powers off, status 0 */
	CU_ASSERT_EQUAL(sh(NULL, 0, "%s shutdown lx1 >/dev/null 2>&1", gpmm_bin()), 0);
	REQUIRE(&c, child_wait(&c, CMD_TIMEOUT) == 0);
	f = fopen(disk, "r");
	CU_ASSERT_FATAL(f != NULL);
	CU_ASSERT(fseek(f, 512, SEEK_SET) == 0 && fgets(buf, sizeof(buf), f) &&
		  !strcmp(buf, "written-by-linux\n"));
	fclose(f);
out:
	child_end(&c);
}

/*
 * The same kernel uncompressed, booted by PVH (its ELF entry note): no
 * decompressor, no zero page; the start info carries the command line,
 * the initrd and the memory map. Then a 4 KiB paste, every byte of which
 * must arrive. One vCPU: the other tests cover SMP. (A 100 KiB paste,
 * past the UART's 64 KiB buffer so that gpmm holds input back, passed 8
 * runs, but 4 others froze the TCG test VM's own kernel during this test,
 * which on a 6.12 test VM no run without it has done: README.)
 */
static void test_linux_pvh(void)
{
	char line[64];
	struct child c;
	const char *p;

	REQUIRE(&c, boot_kernel(&c, "vmlinux", "lx3", 128, 1, "quiet gpmm.test=pvh", NULL));
	REQUIRE(&c, child_expect(&c, "gpmm.test=pvh", 30));
	/* the memory map came through the start info */
	REQUIRE(&c, ask(&c, "dmesg | grep BIOS-e820 | sed 's/^/dm: /'",
			"0x0000000000100000-0x0000000007ffffff] usable"));
	REQUIRE(&c, ask(&c, "echo pvh=$((6*7))", "pvh=42"));

	REQUIRE(&c, ask(&c, "stty -echo; echo ready; cat > /tmp/paste", "ready"));
	memset(line, 'k', sizeof(line) - 1);
	line[sizeof(line) - 1] = '\0';
	for (int i = 0; i < 64; i++)	/* 64 x 64 = 4096 bytes */
		REQUIRE(&c, child_send(&c, line));
	REQUIRE(&c, child_send(&c, "\004"));	/* Ctrl-D: end of cat's input */
	REQUIRE(&c, ask(&c, "stty echo; echo paste=$(wc -c < /tmp/paste) lines=$(grep -c '^k*$' /tmp/paste)", "paste="));
	REQUIRE(&c, (p = child_rest_of_line(&c, 30)) != NULL);
	REQUIRE(&c, atoi(p) == 4096 && number_after(p, "lines=") == 64);
	REQUIRE(&c, child_send(&c, "poweroff"));
	REQUIRE(&c, child_wait(&c, CMD_TIMEOUT) == 0);
out:
	child_end(&c);
}

/*
 * Kernels and settings a loader must refuse, each with its reason and
 * before any vCPU runs: a cut bzImage, an ELF kernel without a PVH note,
 * too little RAM to decompress, a missing initrd, a command line longer
 * than the kernel takes.
 */
static void test_linux_bad_input(void)
{
	char cut[512], elf[512], bz[512];
	const struct {
		const char *kernel, *opts, *says;
	} cases[] = {
		{ cut, "", "is the whole file" },
		{ elf, "", "has no PVH entry note" },
		{ bz, "--ram 16M", "MiB of RAM to decompress" },
		{ bz, "--initrd /nonexistent/initrd", "initrd /nonexistent/initrd: No such file" },
		{ bz, "--append \"$(printf '%02047d' 0)\"", "this kernel takes" },
		{ bz, "--net fd=0", "net fd=0: not an open tap device" },
		{ bz, "--net tap=t0,mac=01:00:5e:00:00:01", "(not multicast)" },
		{ bz, "--net tap=a-name-longer-than-15", "up to 15 characters" },
		{ bz, "--net mac=52:54:00:00:00:01", "give tap=NAME or fd=N" },
	};
	char out[4096];

	snprintf(bz, sizeof(bz), "%s", linux_file("bzImage"));
	snprintf(cut, sizeof(cut), "%s/cut.bzImage", test_run_dir());
	snprintf(elf, sizeof(elf), "%s/hello.elf", test_run_dir());
	CU_ASSERT_EQUAL_FATAL(sh(NULL, 0, "head -c 8192 %s > %s && cp %s %s",
				 bz, cut, guest_file("hello.elf"), elf), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = sh(out, sizeof(out), "%s run --kernel %s --pool 256M %s </dev/null 2>&1",
			    gpmm_bin(), cases[i].kernel, cases[i].opts);

		CU_ASSERT(rc != 0 && rc != 255);
		CU_ASSERT_PTR_NOT_NULL(strstr(out, cases[i].says));
		if (!strstr(out, cases[i].says))
			fprintf(stderr, "\ncase %zu (%s): rc %d, said: %.500s\n", i, cases[i].says,
				rc, out);
	}
}

/* `gpmm frag NAME --json`, parsed; NULL when gpmm could not answer. */
static json_t *frag(const char *name)
{
	static char out[1 << 20];

	if (sh(out, sizeof(out), "%s frag %s --json 2>/dev/null", gpmm_bin(), name))
		return NULL;
	return json_loads(out, 0, NULL);
}

static long long vm_num(json_t *r, const char *key)
{
	return json_integer_value(json_object_get(json_array_get(json_object_get(r, "vms"), 0), key));
}

static long long report_free_bytes(json_t *r)
{
	return json_integer_value(json_object_get(json_object_get(r, "host"), "free_bytes"));
}

static long long returned(json_t *r)
{
	json_t *v = json_array_get(json_object_get(r, "vms"), 0);

	return json_integer_value(json_object_get(json_object_get(v, "balloon"), "returned_bytes"));
}

/*
 * The point of the project, with a real guest: while a workload holds
 * its memory, the host kernel maps >= 90% of what the guest touched with
 * 2 MiB pages (smaps, against gpmm's count of populated pages); when the
 * guest frees it, free page reporting brings >= 80% of it back to the
 * pool (the pool's own free count, against what the guest freed), the
 * workload's checksums hold throughout, and the pool is whole at the end.
 */
static void test_linux_memwork_huge_and_reporting(void)
{
	const long long mib = 96;
	long long pop = 0, huge = 0, kb = -1, free0, free1 = 0, back = 0;
	unsigned long long free_f = 0, all = 0;
	struct child c;
	const char *p;
	json_t *r;

	REQUIRE(&c, boot(&c, "lx2", 256, lx_cpus(), "quiet", "--stats"));
	REQUIRE(&c, ask(&c, "memwork --mib 96 --free all --hold", "memwork: holding 96 MiB"));
	/* until the assembler has caught up: two reads agree, or 5 minutes */
	for (int i = 0; i < 300; i++) {
		long long prev = huge;

		r = frag("lx2");
		REQUIRE(&c, r != NULL);
		pop = vm_num(r, "populated_bytes");
		huge = vm_num(r, "huge_backed_bytes_bookkeeping");
		json_decref(r);
		if (huge >= pop * 9 / 10 && huge == prev)
			break;
		sleep(1);
	}
	kb = smaps_pmd_kb(c.pid);
	fprintf(stderr, "\n  guest touched %lld MiB, huge-backed %lld MiB by the kernel's smaps "
		"(%.1f%%), %lld MiB by gpmm's bookkeeping\n", pop >> 20, kb >> 10,
		pop ? 100.0 * (double)kb * 1024 / (double)pop : 0.0, huge >> 20);
	CU_ASSERT(pop >= mib << 20);
	CU_ASSERT(kb * 1024 >= pop * 9 / 10);

	r = frag("lx2");
	REQUIRE(&c, r != NULL);
	free0 = report_free_bytes(r);
	json_decref(r);
	REQUIRE(&c, child_send(&c, ""));
	REQUIRE(&c, child_expect(&c, "memwork: done errors=0", CMD_TIMEOUT));
	/* the guest reports its free 2 MiB blocks a few seconds after freeing */
	for (int i = 0; i < 300 && (free1 - free0) < (mib << 20) * 8 / 10; i++) {
		sleep(1);
		r = frag("lx2");
		REQUIRE(&c, r != NULL);
		free1 = report_free_bytes(r);
		back = returned(r);
		json_decref(r);
	}
	fprintf(stderr, "  guest freed %lld MiB; pool free grew by %lld MiB; "
		"balloon says %lld MiB returned\n", mib, (free1 - free0) >> 20, back >> 20);
	CU_ASSERT(free1 - free0 >= (mib << 20) * 8 / 10);
	CU_ASSERT(back >= free1 - free0);

	REQUIRE(&c, child_send(&c, "poweroff"));
	REQUIRE(&c, child_wait(&c, CMD_TIMEOUT) == 0);
	CU_ASSERT_PTR_NULL(strstr(c.out, "CHECKSUM"));
	p = strstr(c.out, "pool after the VM gave its frames back: ");
	p = p ? strchr(p, '(') : NULL;
	CU_ASSERT(p && sscanf(p, "(%llu of %llu 4 KiB frames)", &free_f, &all) == 2 &&
		  all && free_f == all);
out:
	child_end(&c);
}

/*
 * A Linux guest as a VM process of the host pool service: its RAM comes
 * from the daemon's pool, its frees (free page reporting) go back through
 * the client's cache, and when it powers off the daemon's pool is whole
 * with nothing left for the service to take back: the process returned
 * every frame itself.
 */
static void test_linux_on_pool_service(void)
{
	static char text[1 << 16];
	char ctl[256], pool[256], extra[300];
	long long free_b = -1, reclaimed = -1;
	int daemon_pid = 0;
	struct child c;
	json_t *r;

	snprintf(ctl, sizeof(ctl), "%s/lxd.sock", test_run_dir());
	snprintf(pool, sizeof(pool), "%s/lxd-pool.sock", test_run_dir());
	CU_ASSERT_FATAL(sh(text, sizeof(text), "%s daemon --socket %s --pool-socket %s --pool 512M "
			   ">%s/lxd.log 2>&1 & echo $!", gpmm_bin(), ctl, pool, test_run_dir()) == 0);
	daemon_pid = atoi(text);
	if (sh(NULL, 0, "for i in $(seq 300); do [ -S %s ] && exit 0; sleep 0.2; done; exit 1",
	       pool)) {
		if (!sh(text, sizeof(text), "cat %s/lxd.log", test_run_dir()))
			fprintf(stderr, "\n  the daemon's log:\n%.2000s", text);
		CU_FAIL_FATAL("the daemon lends its pool");
	}
	snprintf(extra, sizeof(extra), "--host-pool=%s", pool);
	REQUIRE(&c, boot(&c, "lx3", 256, lx_cpus(), "quiet", extra));
	CU_ASSERT_PTR_NOT_NULL(strstr(c.out, "guest RAM from the host pool service"));
	REQUIRE(&c, ask(&c, "memwork --mib 64 --free all", "memwork: done errors=0"));
	REQUIRE(&c, child_send(&c, "poweroff"));
	REQUIRE(&c, child_wait(&c, CMD_TIMEOUT) == 0);
	for (int i = 0; i < 100 && free_b != 512LL << 20; i++) {
		if (sh(text, sizeof(text), "%s frag --qmp %s --json", gpmm_bin(), ctl) == 0 &&
		    (r = json_loads(text, 0, NULL))) {
			free_b = report_free_bytes(r);
			reclaimed = json_integer_value(json_object_get(json_object_get(r,
					"pool_service"), "frames_reclaimed"));
			json_decref(r);
		}
		usleep(200000);
	}
	CU_ASSERT_EQUAL(free_b, 512LL << 20);
	CU_ASSERT_EQUAL(reclaimed, 0);
out:
	child_end(&c);
	if (daemon_pid > 0)
		kill(daemon_pid, SIGTERM);
}

/*
 * virtio-net, with traffic that stays in a network namespace of the
 * test's own: two taps there (10.99.0.1 and 10.99.1.1, a busybox httpd on
 * both, a busybox udhcpd on the first), a guest with an interface on each
 * from a config file's two `net` keys, the second with offloads off; the
 * first takes its address by DHCP (the image's udhcpc script applies it). The host pings the guest on both;
 * the guest fetches a 1 MB file through each and its sha256 must be the
 * host's; the guest's own view of the negotiated features says which
 * interface has offloads. Interfaces are told apart by their MACs.
 */
static void test_linux_net(void)
{
	char ns[32], dir[256], ini[256], want[128], sum[80] = "", cmd[512], out[1024];
	long long guest_rx = -1, gpmm_rx = -1;
	struct child c;
	json_t *r, *d;
	size_t i;

	snprintf(ns, sizeof(ns), "gpmmnet%d", (int)getpid());
	snprintf(dir, sizeof(dir), "%s/www", test_run_dir());
	snprintf(ini, sizeof(ini), "%s/net.ini", test_run_dir());
	CU_ASSERT_EQUAL_FATAL(sh(out, sizeof(out), "ip netns add %s && ip -n %s link set lo up && "
		"for i in 0 1; do ip -n %s tuntap add gtap$i mode tap && "
		"ip -n %s addr add 10.99.$i.1/24 dev gtap$i && ip -n %s link set gtap$i up || exit 1; "
		"done && mkdir -p %s && head -c 1000000 /dev/urandom > %s/blob && "
		"ip netns exec %s busybox httpd -p 8080 -h %s && "
		"printf 'start 10.99.0.50\nend 10.99.0.50\ninterface gtap0\noption subnet "
		"255.255.255.0\nlease_file %s/leases\npidfile %s/udhcpd.pid\n' > %s/udhcpd.conf && "
		"touch %s/leases && ip netns exec %s busybox udhcpd %s/udhcpd.conf && "
		"printf 'net = tap=gtap0,mac=52:54:00:00:00:10\nnet = tap=gtap1,mac=52:54:00:00:00:11,"
		"offload=off\n' > %s && sha256sum %s/blob",
		ns, ns, ns, ns, ns, dir, dir, ns, dir, dir, dir, dir, dir, ns, dir, ini, dir), 0);
	sscanf(out, "%64s", sum);
	lx.netns = ns;
	REQUIRE(&c, boot(&c, "lxnet", 256, lx_cpus(), "quiet", ini));
	lx = lx_default;
	/* the first by DHCP (the host's udhcpd leases it 10.99.0.50), the second by hand */
	REQUIRE(&c, ask(&c, "ok=1; for i in eth0 eth1; do case $(cat /sys/class/net/$i/address) in "
			"*:10) ip link set $i up && udhcpc -i $i -n -q -t 20 -T 3 >/dev/null || ok=0;; "
			"*:11) ip addr add 10.99.1.2/24 dev $i && ip link set $i up || ok=0;; esac; done; "
			"echo up=$ok.", "up=1."));
	REQUIRE(&c, ask(&c, "for i in eth0 eth1; do echo \"feat $(cat /sys/class/net/$i/address) "
			"$(cut -c1 /sys/class/net/$i/device/features)\"; done; echo feat-$((40+2))",
			"feat-42"));
	CU_ASSERT_PTR_NOT_NULL(strstr(c.out, "feat 52:54:00:00:00:10 1"));
	CU_ASSERT_PTR_NOT_NULL(strstr(c.out, "feat 52:54:00:00:00:11 0"));
	if (!strstr(c.out, "feat 52:54:00:00:00:10 1") || !strstr(c.out, "feat 52:54:00:00:00:11 0"))
		fprintf(stderr, "\n  the guest's features:\n%s\n", child_tail(&c, 600));
	for (int k = 0; k < 2; k++) {
		snprintf(cmd, sizeof(cmd), "ip netns exec %s busybox ping -c 3 -W 20 10.99.%d.%d", ns, k,
			 k ? 2 : 50);
		CU_ASSERT_EQUAL(sh(out, sizeof(out), "%s", cmd), 0);
		snprintf(cmd, sizeof(cmd), "wget -q -O - http://10.99.%d.1:8080/blob | sha256sum | "
			 "sed 's/^/sum%d=/'", k, k);
		snprintf(want, sizeof(want), "sum%d=%s", k, sum);
		CU_ASSERT(strlen(sum) == 64 && ask(&c, cmd, want));
	}
	REQUIRE(&c, ask(&c, "ping -c 2 -W 20 10.99.1.1 >/dev/null; echo gping=$?", "gping=0"));
	/* the guest's count of bytes received on the offload-less one, and gpmm's */
	REQUIRE(&c, ask(&c, "for i in eth0 eth1; do grep -q ':11$' /sys/class/net/$i/address && "
			"echo \"r\"xb=$(cat /sys/class/net/$i/statistics/rx_bytes).; done", "rxb="));
	guest_rx = strtoll(child_rest_of_line(&c, 30) ?: "-1", NULL, 10);
	r = frag("lxnet");
	json_array_foreach(json_object_get(json_array_get(json_object_get(r, "vms"), 0), "net"), i, d)
		if (!strcmp(json_string_value(json_object_get(d, "mac")) ?: "", "52:54:00:00:00:11"))
			gpmm_rx = json_integer_value(json_object_get(d, "rx_bytes"));
	json_decref(r);
	/* >= the file; apart by at most what a few stray packets (neighbour discovery) carry */
	CU_ASSERT(guest_rx >= 1000000 && gpmm_rx >= guest_rx && gpmm_rx - guest_rx <= 4096);
	if (!(guest_rx >= 1000000 && gpmm_rx >= guest_rx && gpmm_rx - guest_rx <= 4096))
		fprintf(stderr, "\n  bytes received on eth :11: the guest counts %lld, gpmm %lld\n",
			guest_rx, gpmm_rx);
	REQUIRE(&c, child_send(&c, "poweroff"));
	CU_ASSERT(child_wait(&c, CMD_TIMEOUT) == 0);
out:
	lx = lx_default;
	child_end(&c);
	if (sh(NULL, 0, "ip netns pids %s | xargs -r kill; ip netns del %s", ns, ns))
		fprintf(stderr, "\n  could not remove network namespace %s\n", ns);
}

/*
 * A guest's memory survives swap-out and swap-in: Debian's stress-ng
 * (make guest-linux-stress) keeps 128 MiB mapped and verifies what it
 * wrote, in a guest of 256 MiB on a pool of 128 MiB lent twice over, so
 * the guest's own kernel and stress-ng's pages go out and come back.
 * Its work is bounded by count (4 bogo operations), not by time. It
 * passes by stress-ng's verdict; the VM's report says pages went out
 * and came back, and the pool is whole once the VM has ended.
 */
static void test_linux_stress_ng_swap(void)
{
	struct child c;
	json_t *r, *sw;
	long long out_pages = -1, in_pages = -1;
	const char *p;
	int rc;

	lx.initrd = "initramfs-stress.cpio.gz";
	lx.pool = "128M";
	lx.overcommit = "2";
	REQUIRE(&c, boot(&c, "lxsng", 256, 1, "quiet", "--stats"));
	lx = lx_default;
	/* the tag is computed, so the console's echo of the command does not match it */
	REQUIRE(&c, child_send(&c, "stress-ng --vm 1 --vm-bytes 128M --vm-keep --vm-ops 4 --verify "
			       "--timeout 0 > /tmp/sng.log 2>&1; echo sng$((6*7))=$?."));
	REQUIRE(&c, child_expect(&c, "sng42=", 900));
	REQUIRE(&c, (p = child_rest_of_line(&c, 30)) != NULL);
	rc = atoi(p);
	CU_ASSERT_EQUAL(rc, 0);
	if (rc && ask(&c, "tail -n 8 /tmp/sng.log; echo end$((6*7))", "end42"))
		fprintf(stderr, "\n  stress-ng exited %d:\n%s\n", rc, child_tail(&c, 1500));
	REQUIRE(&c, ask(&c, "grep -c 'successful run completed' /tmp/sng.log | sed 's/^/ok=/'",
			"ok=1"));
	r = frag("lxsng");
	sw = json_object_get(json_object_get(json_array_get(json_object_get(r, "vms"), 0),
					     "memory"), "swap");
	if (sw) {
		out_pages = json_integer_value(json_object_get(sw, "out_pages"));
		in_pages = json_integer_value(json_object_get(sw, "in_pages"));
	}
	json_decref(r);
	fprintf(stderr, "\n  stress-ng verified; %lld pages out, %lld back ", out_pages, in_pages);
	CU_ASSERT(out_pages > 0 && in_pages > 0);
	REQUIRE(&c, child_send(&c, "poweroff"));
	CU_ASSERT(child_wait(&c, CMD_TIMEOUT) == 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(c.out, "pool after the VM gave its frames back: 128.0 of 128 MiB free"));
out:
	lx = lx_default;
	child_end(&c);
}

int register_linux_suite(void)
{
	CU_pSuite s = CU_add_suite("linux", NULL, NULL);

	if (!s || !CU_add_test(s, "boot, console, reboot, poweroff", test_linux_boot_console_power) ||
	    !CU_add_test(s, "vmlinux by PVH", test_linux_pvh) ||
	    !CU_add_test(s, "bad kernels and settings", test_linux_bad_input) ||
	    !CU_add_test(s, "memwork: huge-backed, free page reporting",
			 test_linux_memwork_huge_and_reporting) ||
	    !CU_add_test(s, "on the host pool service", test_linux_on_pool_service) ||
	    !CU_add_test(s, "virtio-net on two taps: ping, a fetched file's checksum",
			 test_linux_net) ||
	    !CU_add_test(s, "stress-ng --verify on a pool half the guest's RAM",
			 test_linux_stress_ng_swap))
		return CU_get_error();
	return CUE_SUCCESS;
}
