// SPDX-License-Identifier: GPL-2.0
/* VM configuration: sizes, keys, INI files and their mistakes. */
#include <CUnit/CUnit.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmm/memory/assembler.h"
#include "vmm/core/config.h"
#include "tests/suite.h"

static void test_sizes(void)
{
	uint64_t v;

	CU_ASSERT_EQUAL(config_parse_size("512M", &v), 0);
	CU_ASSERT_EQUAL(v, 512ULL << 20);
	CU_ASSERT_EQUAL(config_parse_size("2g", &v), 0);
	CU_ASSERT_EQUAL(v, 2ULL << 30);
	CU_ASSERT_EQUAL(config_parse_size("4096", &v), 0);
	CU_ASSERT_EQUAL(v, 4096);
	CU_ASSERT_EQUAL(config_parse_size("64KiB", &v), 0);
	CU_ASSERT_EQUAL(v, 64 << 10);
	CU_ASSERT_EQUAL(config_parse_size("1TB", &v), 0);
	CU_ASSERT_EQUAL(v, 1ULL << 40);
	CU_ASSERT_EQUAL(config_parse_size("", &v), -EINVAL);
	CU_ASSERT_EQUAL(config_parse_size("-1M", &v), -EINVAL);
	CU_ASSERT_EQUAL(config_parse_size("12Q", &v), -EINVAL);
	CU_ASSERT_EQUAL(config_parse_size("1MM", &v), -EINVAL);
	CU_ASSERT_EQUAL(config_parse_size("99999999999999999999", &v), -ERANGE);
	CU_ASSERT_EQUAL(config_parse_size("99999999999T", &v), -ERANGE);
}

static void test_keys(void)
{
	struct vm_config cfg;
	char err[256];

	config_defaults(&cfg);
	CU_ASSERT_EQUAL(cfg.cpus, 1);
	CU_ASSERT_EQUAL(config_set(&cfg, "cpus", "4", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(cfg.cpus, 4);
	CU_ASSERT_EQUAL(config_set(&cfg, "cpus", "0", err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "'0' for cpus"));
	CU_ASSERT_EQUAL(config_set(&cfg, "cpus", "33", err, sizeof(err)), -EINVAL);
	CU_ASSERT_EQUAL(config_set(&cfg, "name", "bad name", err, sizeof(err)), -EINVAL);
	CU_ASSERT_EQUAL(config_set(&cfg, "prefault", "maybe", err, sizeof(err)), -EINVAL);
	CU_ASSERT_EQUAL(config_set(&cfg, "prefault", "yes", err, sizeof(err)), 0);
	CU_ASSERT(cfg.prefault);
	CU_ASSERT_EQUAL(config_set(&cfg, "colour", "blue", err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "unknown key 'colour'"));
	CU_ASSERT_EQUAL(cfg.cpus, 4);
	/* the pool's host memory and the first-touch policy */
	CU_ASSERT_EQUAL(cfg.fault, VM_FAULT_AUTO);
	CU_ASSERT(cfg.pool_host.huge);
	CU_ASSERT_EQUAL(cfg.pool_host.release_ms, 1000);
	CU_ASSERT_EQUAL(config_set(&cfg, "fault", "huge", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(cfg.fault, VM_FAULT_HUGE);
	CU_ASSERT_EQUAL(config_set(&cfg, "fault", "2m", err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "want huge, 4k or auto"));
	CU_ASSERT_EQUAL(cfg.fault, VM_FAULT_HUGE);	/* a bad value changes nothing */
	CU_ASSERT_EQUAL(config_set(&cfg, "pool_release_ms", "0", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(cfg.pool_host.release_ms, 0);
	CU_ASSERT_EQUAL(config_set(&cfg, "pool_release_ms", "-5", err, sizeof(err)), -EINVAL);
	CU_ASSERT_EQUAL(config_set(&cfg, "pool_huge", "no", err, sizeof(err)), 0);
	CU_ASSERT(!cfg.pool_host.huge);
	CU_ASSERT_EQUAL(config_set(&cfg, "pool_populate", "perhaps", err, sizeof(err)), -EINVAL);
	/* overcommit in %, two decimals at most; swap off, auto or a directory */
	CU_ASSERT_EQUAL(cfg.pool_host.overcommit_pct, 100);
	CU_ASSERT_EQUAL(config_set(&cfg, "overcommit", "2.5", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(cfg.pool_host.overcommit_pct, 250);
	CU_ASSERT_EQUAL(config_set(&cfg, "overcommit", "1.25", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(cfg.pool_host.overcommit_pct, 125);
	CU_ASSERT_EQUAL(config_set(&cfg, "overcommit", "16", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(cfg.pool_host.overcommit_pct, 1600);
	{
		static const char *const bad[] = { "0.99", "16.01", "2.", "1.234", "x", "", "-2", "99" };

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
			CU_ASSERT_EQUAL(config_set(&cfg, "overcommit", bad[i], err, sizeof(err)),
					-EINVAL);
		CU_ASSERT_EQUAL(cfg.pool_host.overcommit_pct, 1600);
	}
	CU_ASSERT_STRING_EQUAL(cfg.swap_dir, "auto");
	CU_ASSERT_EQUAL(cfg.swap_fd, -1);
	CU_ASSERT_EQUAL(config_set(&cfg, "swap", "off", err, sizeof(err)), 0);
	CU_ASSERT_STRING_EQUAL(cfg.swap_dir, "");
	CU_ASSERT_EQUAL(config_set(&cfg, "swap", "/srv/swap", err, sizeof(err)), 0);
	CU_ASSERT_STRING_EQUAL(cfg.swap_dir, "/srv/swap");
	CU_ASSERT_EQUAL(config_set(&cfg, "kernel", "/boot/payload.bin", err, sizeof(err)), 0);
	config_finish(&cfg);
	CU_ASSERT_STRING_EQUAL(cfg.name, "payload");
}

static int write_ini(char *path, const char *text)
{
	int fd = mkstemp(path);

	if (fd < 0)
		return -1;
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		close(fd);
		return -1;
	}
	return close(fd);
}

static void test_ini(void)
{
	char path[] = "/tmp/gpmm-ini-XXXXXX";
	struct vm_config cfg;
	char err[512];

	CU_ASSERT_FATAL(write_ini(path, "; vm\n[vm]\nram = 256M\ncpus = 2\nkernel = k.bin\n") == 0);
	config_defaults(&cfg);
	CU_ASSERT_EQUAL(config_load(path, &cfg, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(cfg.ram_bytes, 256ULL << 20);
	CU_ASSERT_EQUAL(cfg.cpus, 2);
	CU_ASSERT_STRING_EQUAL(cfg.kernel, "/tmp/k.bin");	/* beside the config */
	unlink(path);

	strcpy(path, "/tmp/gpmm-ini-XXXXXX");
	CU_ASSERT_FATAL(write_ini(path, "[vm]\nram = 256M\nram = lots\n") == 0);
	CU_ASSERT_EQUAL(config_load(path, &cfg, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, ":3: bad value 'lots' for ram"));
	unlink(path);

	strcpy(path, "/tmp/gpmm-ini-XXXXXX");
	CU_ASSERT_FATAL(write_ini(path, "[disk]\nsize = 1G\n") == 0);
	CU_ASSERT_EQUAL(config_load(path, &cfg, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "unknown section [disk]"));
	unlink(path);

	strcpy(path, "/tmp/gpmm-ini-XXXXXX");
	CU_ASSERT_FATAL(write_ini(path, "[vm\nram\n") == 0);
	CU_ASSERT_EQUAL(config_load(path, &cfg, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, ":1:"));
	unlink(path);

	CU_ASSERT_EQUAL(config_load("/nonexistent.ini", &cfg, err, sizeof(err)), -ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "/nonexistent.ini"));
}

/*
 * inih reads on after a refused line and reports the first: the words
 * must be that line's, not a later one's, nor "syntax error" for a key
 * refused before a line that was fine (found by the config fuzz target).
 */
static void test_ini_first_refusal(void)
{
	static const struct {
		const char *text, *says;
	} cases[] = {
		{ "[vm]\ncolour = blue\ncpus = 2\n", ":2: unknown key 'colour'" },
		{ "[vm]\ncpus = 0\nram = lots\n", ":2: bad value '0' for cpus" },
		{ "[vm]\nnot a line\ncpus = 0\n", ":2: syntax error" },
		{ "[disk]\nsize = 1G\n[vm]\ncpus = 2\n", ":2: unknown section [disk]" },
	};
	struct vm_config cfg;
	char err[512];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char path[] = "/tmp/gpmm-ini-XXXXXX";

		CU_ASSERT_FATAL(write_ini(path, cases[i].text) == 0);
		config_defaults(&cfg);
		CU_ASSERT_EQUAL(config_load(path, &cfg, err, sizeof(err)), -EINVAL);
		if (!strstr(err, cases[i].says)) {
			fprintf(stderr, "\n  case %zu said: %s", i, err);
			CU_FAIL("the refusal is the first refused line's");
		}
		unlink(path);
	}
}

/*
 * huge_rate: after a long idle time a VM still gets at most huge_rate
 * ranges in a second, not the backlog of every tick it did not use.
 */
static void test_huge_rate_bucket(void)
{
	uint64_t bucket = 0, tokens = 0, spent = 0;

	for (int tick = 0; tick < 600; tick++)	/* a minute idle, 100 ms ticks */
		tokens = assembler_refill(&bucket, 2, 100);
	CU_ASSERT(tokens <= 2);
	/* then busy for 10 s: about 2 a second, each spent */
	for (int tick = 0; tick < 100; tick++) {
		tokens = assembler_refill(&bucket, 2, 100);
		spent += tokens;
		bucket -= tokens * (1000000000ULL / 2);
	}
	CU_ASSERT(spent >= 20 && spent <= 22);
	CU_ASSERT_EQUAL(assembler_refill(&bucket, 0, 100), UINT64_MAX);
}

/* Memory sizes as QEMU users write them: a bare number is MiB, decimals work. */
static void test_mem_sizes(void)
{
	struct vm_config cfg;
	char err[256];
	uint64_t v;

	config_defaults(&cfg);
	CU_ASSERT_EQUAL(config_set(&cfg, "ram", "64", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(cfg.ram_bytes, 64ULL << 20);
	CU_ASSERT_EQUAL(config_set(&cfg, "ram", "1.5G", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(cfg.ram_bytes, 1536ULL << 20);
	CU_ASSERT_EQUAL(config_set(&cfg, "pool", "2048", err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(cfg.pool_bytes, 2048ULL << 20);
	CU_ASSERT_EQUAL(config_parse_mem_size("0.5", &v), 0);
	CU_ASSERT_EQUAL(v, 512ULL << 10);
	/* 1.3 MiB is not a whole number of bytes; "1." is no number */
	CU_ASSERT_EQUAL(config_parse_mem_size("1.3M", &v), -EINVAL);
	CU_ASSERT_EQUAL(config_parse_mem_size("1.", &v), -EINVAL);
	CU_ASSERT_EQUAL(config_parse_size("1.5K", &v), 0);
	CU_ASSERT_EQUAL(v, 1536);
	/* B says bytes where a bare number is MiB (the daemon's wire sizes) */
	CU_ASSERT_EQUAL(config_parse_mem_size("16777216B", &v), 0);
	CU_ASSERT_EQUAL(v, 16ULL << 20);
	/* bytes stay bytes where QEMU means bytes (-object ...,size=N) */
	CU_ASSERT_EQUAL(config_parse_size("4096", &v), 0);
	CU_ASSERT_EQUAL(v, 4096);
	/* the words a refusal offers are the words the help uses */
	CU_ASSERT_NOT_EQUAL(config_set(&cfg, "huge", "maybe", err, sizeof(err)), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "want on or off"));
	CU_ASSERT_NOT_EQUAL(config_set(&cfg, "cpus", "boot=2", err, sizeof(err)), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "boot=N is N alone"));
	CU_ASSERT_NOT_EQUAL(config_set(&cfg, "ram", "size=256M", err, sizeof(err)), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "SIZE alone"));
}

/*
 * A config's file names start from the config's directory, so that a
 * config works from any working directory; '#' after a space starts a
 * comment as ';' does.
 */
static void test_ini_paths_and_comments(void)
{
	char dir[] = "/tmp/gpmm-cfgdir-XXXXXX", path[256];
	struct vm_config cfg;
	char err[512];
	FILE *f;

	CU_ASSERT_FATAL(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/vm.ini", dir);
	f = fopen(path, "w");
	CU_ASSERT_FATAL(f != NULL);
	fprintf(f, "[vm]\nkernel = guests/k.bin   # the payload\ninitrd = /abs/initrd ; abs\n"
		   "ram = 64M # MiB\nappend = console=ttyS0 a#b\n");
	fclose(f);
	config_defaults(&cfg);
	CU_ASSERT_EQUAL(config_load(path, &cfg, err, sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/guests/k.bin", dir);
	CU_ASSERT_STRING_EQUAL(cfg.kernel, path);
	CU_ASSERT_STRING_EQUAL(cfg.initrd, "/abs/initrd");
	CU_ASSERT_EQUAL(cfg.ram_bytes, 64ULL << 20);
	/* a '#' inside a word is the value's own */
	CU_ASSERT_STRING_EQUAL(cfg.append, "console=ttyS0 a#b");
	/* the checks before a VM name the missing file */
	CU_ASSERT_EQUAL(config_check(&cfg, err, sizeof(err)), -ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, path));
	snprintf(path, sizeof(path), "%s/vm.ini", dir);
	unlink(path);
	rmdir(dir);
}

int register_config_suite(void)
{
	static const struct suite_test tests[] = {
		{ "sizes", test_sizes },
		{ "keys", test_keys },
		{ "ini files", test_ini },
		{ "an ini refusal names its own line", test_ini_first_refusal },
		{ "huge_rate is a bounded bucket", test_huge_rate_bucket },
		{ "memory sizes as QEMU reads them", test_mem_sizes },
		{ "config paths are the config's, # comments", test_ini_paths_and_comments },
	};

	return SUITE("config", tests);
}
