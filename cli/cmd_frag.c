// SPDX-License-Identifier: GPL-2.0
/*
 * `gpmm frag`: the fragmentation report of a running VM (or of every VM
 * of a daemon), fetched over QMP: text, JSON, an SVG picture of the pool,
 * or a live terminal view.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "vmm/control/qmp_client.h"
#include "vmm/control/report.h"

static const char frag_usage[] =
	"usage: gpmm frag [NAME | --qmp PATH | --socket DAEMON_SOCK [--vm NAME]]\n"
	"                 [--json | --prometheus] [--svg FILE] [--watch [--interval MS]]\n"
	"                 [--tables]\n"
	"Per VM: how much of its RAM is on 2 MiB host pages (as the kernel sees it),\n"
	"why not the rest, what assembly, first touches and live moves did; for the\n"
	"host pool: free 2 MiB blocks, host memory, compaction and reclaim\n"
	"(docs/report.md). --tables adds the pool's raw buddyinfo and pagetypeinfo.\n"
	"--svg draws the pool's pageblocks, outlined by owner (every VM process of a\n"
	"pool service too). --prometheus prints the same figures in Prometheus' text\n"
	"format (gpmm daemon --metrics keeps a file).\n";

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
	interrupted = 1;
}

static json_t *fetch(struct qmp_client *q, const char *vm, bool map, char *err,
		     size_t errlen)
{
	json_t *args = json_pack("{s:b}", "map", map);

	if (vm)
		json_object_set_new(args, "vm", json_string(vm));
	return qmpc_execute(q, "query-fragmentation", args, NULL, NULL, err, errlen);
}

static int write_svg(json_t *r, const char *path)
{
	FILE *f = fopen(path, "w");
	int ret;

	if (!f) {
		perror(path);
		return 1;
	}
	ret = report_write_svg(r, f);
	if (fclose(f) || ret) {
		fprintf(stderr, "gpmm frag: cannot write %s\n", path);
		return 1;
	}
	return 0;
}

static int watch(struct qmp_client *q, const char *vm, unsigned int interval_ms, bool tables)
{
	char err[512];

	signal(SIGINT, on_sigint);
	while (!interrupted) {
		json_t *r = fetch(q, vm, false, err, sizeof(err));

		if (!r) {
			fprintf(stderr, "gpmm frag: %s\n", err);
			return 1;
		}
		/* home the cursor and clear: a screen, not a scroll */
		printf("\033[H\033[2J");
		report_print_text(r, stdout);
		if (tables)
			report_print_tables(r, stdout);
		printf("\n(every %u ms; Ctrl-C to leave)\n", interval_ms);
		fflush(stdout);
		json_decref(r);
		usleep(interval_ms * 1000);
	}
	return 0;
}

int cmd_frag(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "qmp", required_argument, NULL, 'q' },
		{ "socket", required_argument, NULL, 's' },
		{ "vm", required_argument, NULL, 'v' },
		{ "json", no_argument, NULL, 'j' },
		{ "prometheus", no_argument, NULL, 'P' },
		{ "svg", required_argument, NULL, 'g' },
		{ "watch", no_argument, NULL, 'w' },
		{ "interval", required_argument, NULL, 'i' },
		{ "tables", no_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *qmp = NULL, *vm = NULL, *svg = NULL;
	unsigned int interval = 1000;
	bool json = false, watching = false, prom = false, tables = false;
	char path[PATH_MAX], err[512];
	struct qmp_client q;
	json_t *r;
	int c, ret = 0;

	if (cli_check_options("gpmm frag", opts, argc, argv))
		return 2;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'q': case 's': qmp = optarg; break;
		case 'v': vm = optarg; break;
		case 'j': json = true; break;
		case 'P': prom = true; break;
		case 'g': svg = optarg; break;
		case 'w': watching = true; break;
		case 'i': interval = (unsigned int)atoi(optarg); break;
		case 't': tables = true; break;
		case 'h': fputs(frag_usage, stdout); return 0;
		default: return 2;	/* cli_check_options said it */
		}
	}
	if (!qmp) {
		/* the VM named, else the daemon's socket, else the one VM running */
		if (cli_find_vm_socket("gpmm frag", optind < argc ? argv[optind] : NULL,
				       path, sizeof(path)))
			return 1;
		qmp = path;
	}
	if (interval < 100)
		interval = 100;
	if (qmpc_connect(&q, qmp, err, sizeof(err))) {
		fprintf(stderr, "gpmm frag: %s\n", err);
		return 1;
	}
	if (watching) {
		ret = watch(&q, vm, interval, tables);
		qmpc_close(&q);
		return ret;
	}
	r = fetch(&q, vm, svg != NULL, err, sizeof(err));
	qmpc_close(&q);
	if (!r) {
		fprintf(stderr, "gpmm frag: %s\n", err);
		return 1;
	}
	if (svg)
		ret = write_svg(r, svg);
	if (json) {
		json_dumpf(r, stdout, JSON_INDENT(2));
		putchar('\n');
	} else if (prom) {
		report_write_prometheus(r, stdout);
	} else if (!svg) {
		report_print_text(r, stdout);
		if (tables)
			report_print_tables(r, stdout);
	}
	json_decref(r);
	return ret;
}
