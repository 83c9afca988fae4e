// SPDX-License-Identifier: GPL-2.0
/*
 * The messages of the gpmm binary, each from a command line a user coming
 * from QEMU, Cloud Hypervisor or Firecracker types: unknown options named
 * as such, arguments checked before the host, sizes, verbs, help.
 */
#define _GNU_SOURCE
#include <CUnit/CUnit.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/suite.h"

static char out[65536];
static char run_dir[] = "/tmp/gpmm-usage-XXXXXX";

static const char *gpmm(void)
{
	const char *g = getenv("GPMM");

	return g ? g : "build/gpmm";
}

/*
 * Run `gpmm ARGS` (stdout and stderr into @out) in an empty run directory;
 * its exit status, or -1. @no_kvm: as on a host without KVM, also where
 * /dev/kvm exists (a private mount namespace with /dev/null over it).
 */
static int gpmm_run(bool no_kvm, const char *fmt, ...)
{
	char args[4096], cmd[8192];
	size_t n = 0;
	va_list ap;
	FILE *p;
	int st;

	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	if (no_kvm && !access("/dev/kvm", F_OK))
		snprintf(cmd, sizeof(cmd), "GPMM_RUN_DIR=%s unshare -m sh -c 'mount --bind /dev/null "
			 "/dev/kvm && exec \"$0\" \"$@\"' %s %s 2>&1 </dev/null", run_dir, gpmm(), args);
	else
		snprintf(cmd, sizeof(cmd), "GPMM_RUN_DIR=%s %s %s 2>&1 </dev/null", run_dir,
			 gpmm(), args);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

#define SAYS(s) CU_ASSERT_PTR_NOT_NULL(strstr(out, s))
#define NOT_SAYS(s) CU_ASSERT_PTR_NULL(strstr(out, s))

/*
 * Other VMMs' spellings: named as unknown options with gpmm's word for
 * them, in two lines, never read as a config file name.
 */
static void test_unknown_options(void)
{
	static const struct { const char *args, *named, *hint; } cases[] = {
		{ "run --kernel X --memory size=256M --cpus boot=2", "'--memory'", "--ram SIZE" },
		{ "run -m 256 -smp 2", "'-m'", "--ram SIZE" },
		{ "run --kernel X -smp 2", "'-smp'", "--cpus N" },
		{ "run --kernel X --cmdline quiet", "'--cmdline'", "--append CMDLINE" },
		{ "run --kernel X --serial tty", "'--serial'", "--console stdio" },
		{ "run --kernel X --api-sock /tmp/fc.sock", "'--api-sock'", "--qmp PATH" },
		{ "run --kernel X -nographic", "'-nographic'", "gpmm qemu" },
		{ "run -kernel X", "'-kernel'", "two dashes: --kernel" },
		{ "run --kernel X --ramm 64M", "'--ramm'", "did you mean --ram?" },
		{ "daemon --pol 1G", "'--pol'", "--pool" },
		{ "frag --jsn", "'--jsn'", "did you mean --json?" },
		{ "run --kernel X -netdev tap,id=n,ifname=t0", "'-netdev'", "--net tap=NAME" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CU_ASSERT_EQUAL(gpmm_run(false, "%s", cases[i].args), 2);
		SAYS("unknown option ");
		SAYS(cases[i].named);
		SAYS(cases[i].hint);
		SAYS("--help'.");
		NOT_SAYS("cannot open config");
		CU_ASSERT_EQUAL(lines(out), 2);
	}
	CU_ASSERT_EQUAL(gpmm_run(false, "run --kernel"), 2);
	SAYS("gpmm run: option '--kernel' needs a value");
	CU_ASSERT_EQUAL(gpmm_run(false, "run --prefault=yes --kernel X"), 2);
	SAYS("'--prefault' takes no value");
	CU_ASSERT_EQUAL(gpmm_run(false, "run --stats=all --kernel X"), 2);
	SAYS("--stats=all: want --stats or --stats=tables");
	CU_ASSERT_EQUAL(gpmm_run(false, "run --kernel %s --cpus boot=2", gpmm()), 2);
	SAYS("boot=N is N alone");
}

/* A typo is answered as a typo on a host that could not run the VM anyway. */
static void test_arguments_before_the_host(void)
{
	CU_ASSERT_EQUAL(gpmm_run(true, "run --kernel /nonexistent --ram 64M"), 2);
	SAYS("gpmm run: kernel /nonexistent: No such file or directory");
	NOT_SAYS("kvm");
	CU_ASSERT_EQUAL(gpmm_run(true, "run --kernel %s --initrd /nonexistent.cpio", gpmm()), 2);
	SAYS("initrd /nonexistent.cpio");
	CU_ASSERT_EQUAL(gpmm_run(true, "run --kernel %s --ram 3M", gpmm()), 2);
	SAYS("multiple of 2 MiB");
	NOT_SAYS("kvm");
	CU_ASSERT_EQUAL(gpmm_run(true, "run --kernel %s --ram 64M --pool 32M", gpmm()), 2);
	SAYS("larger than the pool (32 MiB)");
	SAYS("--pool 64M");
	CU_ASSERT_EQUAL(gpmm_run(true, "run --kernel %s --ram 2G", gpmm()), 2);
	SAYS("(1024 MiB, the default): give --pool 2048M");
	CU_ASSERT_EQUAL(gpmm_run(true, "run --kernel %s --pool 3M", gpmm()), 2);
	SAYS("multiple of 2 MiB");
	CU_ASSERT_EQUAL(gpmm_run(true, "run --kernel %s --net tap=t0,offload=maybe", gpmm()), 2);
	SAYS("bad part 'offload=maybe'");
	NOT_SAYS("kvm");
	CU_ASSERT_EQUAL(gpmm_run(true, "daemon --pool 3M"), 2);
	SAYS("gpmm daemon: pool 3072 KiB: want a multiple of 2 MiB");
	/* all of it right: then the host, and how to run anyway */
	CU_ASSERT_EQUAL(gpmm_run(true, "run --kernel %s --ram 64", gpmm()), 1);
	SAYS("this host cannot run VMs");
	SAYS("tests/vm/run -- build/gpmm run");
}

/* Values as the help spells them and as QEMU users write them. */
static void test_values(void)
{
	CU_ASSERT_EQUAL(gpmm_run(false, "run --kernel %s --huge maybe", gpmm()), 2);
	SAYS("want on or off");
	/* 1.5G is 1536 MiB, 64 is 64 MiB: the pool rule shows which it read */
	CU_ASSERT_EQUAL(gpmm_run(false, "run --kernel %s --ram 1.5G --pool 1G", gpmm()), 2);
	SAYS("--ram 1536 MiB");
	CU_ASSERT_EQUAL(gpmm_run(false, "run --kernel %s --ram 64 --pool 32", gpmm()), 2);
	SAYS("--ram 64 MiB is larger than the pool (32 MiB)");
	SAYS("or --overcommit RATIO");
	/* overcommit: a ratio of 1 to 16, which lets RAM past the pool, not past the ratio */
	CU_ASSERT_EQUAL(gpmm_run(false, "run --kernel %s --ram 96 --pool 32 --overcommit 2.5",
				 gpmm()), 2);
	SAYS("larger than the pool (32 MiB, times --overcommit)");
	CU_ASSERT_EQUAL(gpmm_run(false, "run --kernel %s --overcommit 0.5", gpmm()), 2);
	SAYS("a ratio from 1 to 16");
	CU_ASSERT_EQUAL(gpmm_run(false, "daemon --overcommit 17"), 2);
	SAYS("a ratio from 1 to 16");
}

/*
 * A config names its files from where it is: run from / it still finds
 * its kernel, and a '#' comment after a value is a comment.
 */
static void test_config_from_elsewhere(void)
{
	char dir[] = "/tmp/gpmm-usage-cfg-XXXXXX", path[256], cmd[512];
	FILE *f;

	CU_ASSERT_FATAL(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/vm.ini", dir);
	f = fopen(path, "w");
	CU_ASSERT_FATAL(f != NULL);
	fprintf(f, "[vm]\nkernel = k.bin   # beside this file\nram = 64M # MiB\npool = 128M\n");
	fclose(f);
	snprintf(cmd, sizeof(cmd), "%s/k.bin", dir);
	f = fopen(cmd, "w");
	CU_ASSERT_FATAL(f != NULL);
	fputs("not a kernel", f);
	fclose(f);
	CU_ASSERT_EQUAL(gpmm_run(true, "run %s", path), 1);
	NOT_SAYS("kernel ");
	SAYS("this host cannot run VMs");
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CU_ASSERT_EQUAL(system(cmd), 0);
}

/* The verbs are named as QMP and virsh name them; no VM is said as such. */
static void test_verbs(void)
{
	char path[256];

	CU_ASSERT_EQUAL(gpmm_run(false, "stop x"), 2);
	SAYS("gpmm pause NAME");
	SAYS("gpmm shutdown NAME");
	SAYS("gpmm destroy NAME");
	CU_ASSERT_EQUAL(gpmm_run(false, "status"), 1);
	SAYS("gpmm status: no VM runs here");
	NOT_SAYS("gpmm.sock");
	CU_ASSERT_EQUAL(gpmm_run(false, "frag"), 1);
	SAYS("gpmm frag: no VM runs here");
	CU_ASSERT_EQUAL(gpmm_run(false, "shutdown nope"), 1);
	SAYS("no VM named 'nope' runs here");
	/* one VM: the verb finds it by itself (a socket file that is none) */
	snprintf(path, sizeof(path), "%s/only.qmp", run_dir);
	CU_ASSERT_EQUAL(close(creat(path, 0600)), 0);
	CU_ASSERT_EQUAL(gpmm_run(false, "status"), 1);
	SAYS("only.qmp");
	snprintf(path, sizeof(path), "%s/other.qmp", run_dir);
	CU_ASSERT_EQUAL(close(creat(path, 0600)), 0);
	CU_ASSERT_EQUAL(gpmm_run(false, "destroy"), 1);
	SAYS("2 VMs run here: name one");
	SAYS("only");
	SAYS("other");
	unlink(path);
	snprintf(path, sizeof(path), "%s/only.qmp", run_dir);
	unlink(path);
}

/* One help text, the defaults in it, every benchmark listed, a version. */
static void test_help(void)
{
	static char help[65536];

	CU_ASSERT_EQUAL(gpmm_run(false, "help"), 0);
	memcpy(help, out, sizeof(help));
	CU_ASSERT_EQUAL(gpmm_run(false, "--help"), 0);
	CU_ASSERT_STRING_EQUAL(out, help);
	SAYS("gpmm bench isolation");
	SAYS("gpmm shutdown");
	SAYS("gpmm destroy");
	NOT_SAYS("gpmm stop");
	CU_ASSERT_EQUAL(gpmm_run(false, ""), 2);
	CU_ASSERT_STRING_EQUAL(out, help);
	CU_ASSERT_EQUAL(gpmm_run(false, "run --help"), 0);
	SAYS("default 128M");
	SAYS("default 1G");
	NOT_SAYS("DESIGN.md");
	CU_ASSERT_EQUAL(gpmm_run(false, "daemon --help"), 0);
	SAYS("--buddy");
	SAYS("without grouping by");
	CU_ASSERT_EQUAL(gpmm_run(false, "--version"), 0);
	CU_ASSERT_EQUAL(strncmp(out, "gpmm ", 5), 0);
	CU_ASSERT(lines(out) == 1 && strlen(out) > 6);
}

static int setup(void)
{
	return mkdtemp(run_dir) ? 0 : -1;
}

static int teardown(void)
{
	return rmdir(run_dir);
}

int register_usage_suite(void)
{
	static const struct suite_test tests[] = {
		{ "unknown options are named, with a hint", test_unknown_options },
		{ "arguments are checked before the host", test_arguments_before_the_host },
		{ "values as the help spells them", test_values },
		{ "a config's files are beside it", test_config_from_elsewhere },
		{ "control verbs", test_verbs },
		{ "help and version", test_help },
	};
	CU_pSuite s = CU_add_suite("usage", setup, teardown);

	if (!s)
		return CU_get_error();
	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
		if (!CU_add_test(s, tests[i].name, tests[i].fn))
			return CU_get_error();
	return CUE_SUCCESS;
}
