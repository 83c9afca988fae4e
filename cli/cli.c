// SPDX-License-Identifier: GPL-2.0
/*
 * gpmm's sub-commands, as tables: a name, a handler, one line of help.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "cli/cli.h"
#include "mm/mm.h"

struct cli_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

static int cmd_bench(int argc, char **argv);
static int cmd_help(int argc, char **argv);
static int cmd_version(int argc, char **argv);

static const struct cli_cmd bench_cmds[] = {
	{ "frag", cmd_bench_frag, "fragmentation at rest: buddy vs grouping" },
	{ "alloc", cmd_bench_alloc, "order-0 allocator throughput" },
	{ "trace-gen", cmd_bench_trace_gen, "write a built-in workload as a trace" },
	{ "boot", cmd_bench_boot, "launch to first guest instruction; --linux: to Linux userland vs QEMU" },
	{ "fault", cmd_bench_fault, "demand fault vs prefault cost per page" },
	{ "migrate", cmd_bench_migrate, "live migrations/s and vCPU stalls" },
	{ "hugeback", cmd_bench_hugeback, "huge-backed share over time vs QEMU" },
	{ "isolation", cmd_bench_isolation, "a VM's rate beside hostile neighbours" },
	{ "report", cmd_bench_report, "a VM's report and teardown on the pool service: 1 vs 16 GiB" },
	{ "net", cmd_bench_net, "a Linux guest's TCP throughput and ping through a tap vs QEMU" },
	{ "pool-fds", cmd_bench_pool_fds, "descriptors and mappings of 64 VM processes on a 16 GiB pool service" },
	{ 0 }
};

static const struct cli_cmd top_cmds[] = {
	{ "run", cmd_run, "boot a VM: gpmm run --kernel FILE --ram 512M --cpus 2" },
	{ "daemon", cmd_daemon, "own the host pool and serve many VMs" },
	{ "status", cmd_status, "a running VM's state" },
	{ "pause", cmd_pause, "pause a VM (QMP stop, virsh suspend)" },
	{ "resume", cmd_resume, "resume a paused VM (QMP cont)" },
	{ "shutdown", cmd_shutdown, "press a VM's power button: the guest shuts down (QMP system_powerdown)" },
	{ "destroy", cmd_destroy, "end a VM at once (QMP quit, virsh destroy)" },
	{ "frag", cmd_frag, "fragmentation report of a VM or a daemon" },
	{ "qemu", cmd_qemu, "QEMU's command line, as libvirt writes it or you type it (also as gpmm-qemu)" },
	{ "fragmenting-tenant", cmd_fragmenting_tenant, "take host pool blocks, hold them sparsely (tests)" },
	{ "host-check", cmd_host_check, "what this host's kernel gives gpmm, and what is lost" },
	{ "bench", cmd_bench, "measure: the benchmarks below" },
	{ "help", cmd_help, "this text (also --help); gpmm COMMAND --help for one command" },
	{ "version", cmd_version, "gpmm's version (also --version)" },
	{ 0 }
};

/* Commands left out of the list: running one says what to use instead. */
static const struct cli_cmd hidden_cmds[] = {
	{ "stop", cmd_stop, NULL },
	{ 0 }
};

/* The help column starts after the longest name of the table. */
static void list_cmds(FILE *f, const char *prefix, const struct cli_cmd *cmds)
{
	int width = 0;

	for (const struct cli_cmd *c = cmds; c->name; c++)
		if ((int)strlen(c->name) > width)
			width = (int)strlen(c->name);
	for (const struct cli_cmd *c = cmds; c->name; c++)
		fprintf(f, "  %s %-*s  %s\n", prefix, width, c->name, c->help);
}

/* `gpmm`, `gpmm help` and `gpmm --help` say the same. */
static void print_help(FILE *f)
{
	fprintf(f, "gpmm: a KVM hypervisor whose guest RAM stays on 2 MiB host pages\nusage:\n");
	list_cmds(f, "gpmm", top_cmds);
	fprintf(f, "benchmarks:\n");
	list_cmds(f, "gpmm bench", bench_cmds);
}

static const struct cli_cmd *find_cmd(const struct cli_cmd *cmds, const char *name)
{
	for (const struct cli_cmd *c = cmds; c->name; c++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

static int dispatch(const char *prefix, const struct cli_cmd *cmds, int argc,
		    char **argv)
{
	const struct cli_cmd *c;

	if (argc < 1 || !strcmp(argv[0], "--help") || !strcmp(argv[0], "-h")) {
		FILE *f = argc < 1 ? stderr : stdout;

		if (cmds == top_cmds) {
			print_help(f);
		} else {
			fprintf(f, "usage:\n");
			list_cmds(f, prefix, cmds);
		}
		return argc < 1 ? 2 : 0;
	}
	if (cmds == top_cmds && !strcmp(argv[0], "--version"))
		return cmd_version(argc, argv);
	c = find_cmd(cmds, argv[0]);
	if (!c && cmds == top_cmds)
		c = find_cmd(hidden_cmds, argv[0]);
	if (c)
		return c->fn(argc, argv);
	fprintf(stderr, "%s: unknown command '%s' (%s --help lists them)\n", prefix, argv[0],
		prefix);
	return 2;
}

static int cmd_bench(int argc, char **argv)
{
	return dispatch("gpmm bench", bench_cmds, argc - 1, argv + 1);
}

static int cmd_help(int argc, char **argv)
{
	print_help(stdout);
	return 0;
}

#ifndef GPMM_VERSION
#define GPMM_VERSION "unknown"
#endif

static int cmd_version(int argc, char **argv)
{
	printf("gpmm %s\n", GPMM_VERSION);
	return 0;
}

/*
 * libvirt runs its <emulator> with QEMU's options and no sub-command: a
 * gpmm installed as qemu-system-* or gpmm-qemu* (a link) is `gpmm qemu`.
 */
static bool called_as_qemu(const char *argv0)
{
	const char *base = strrchr(argv0, '/');

	base = base ? base + 1 : argv0;
	return !strncmp(base, "qemu-system-", 12) || !strncmp(base, "gpmm-qemu", 9);
}

/* opened at start: the sandbox would not let the VMM create it at exit */
static FILE *fault_counts;

static void write_fault_counts(void)
{
	mm_fault_print(fault_counts);
	fclose(fault_counts);
}

/*
 * GPMM_FAULT arms fault injection (mm.h) for tests of error paths, and
 * GPMM_FAULT_COUNTS=FILE gets each site's calls at exit: how a test learns
 * which points there are to walk. Both are for tests, not operators.
 */
static int fault_from_env(void)
{
	const char *spec = getenv("GPMM_FAULT"), *counts = getenv("GPMM_FAULT_COUNTS");
	char err[256];

	if (!spec && !counts)
		return 0;
	if (mm_fault_configure(spec ? spec : "", err, sizeof(err))) {
		fprintf(stderr, "gpmm: GPMM_FAULT: %s\n", err);
		return -1;
	}
	if (counts) {
		fault_counts = fopen(counts, "w");
		if (!fault_counts) {
			fprintf(stderr, "gpmm: GPMM_FAULT_COUNTS: %s: %s\n", counts,
				strerror(errno));
			return -1;
		}
		atexit(write_fault_counts);
	}
	return 0;
}

int cli_main(int argc, char **argv)
{
	if (fault_from_env())
		return 2;
	if (argc > 0 && called_as_qemu(argv[0]))
		return cmd_qemu(argc, argv);
	return dispatch("gpmm", top_cmds, argc - 1, argv + 1);
}
