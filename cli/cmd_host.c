// SPDX-License-Identifier: GPL-2.0
/* gpmm host-check [--json]: what this host's kernel gives gpmm (vmm/sys/host.c). */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>

#include "cli/cli.h"
#include "vmm/sys/host.h"

static const char host_check_usage[] =
	"usage: gpmm host-check [--json]\n"
	"Probes what gpmm relies on in this host's kernel (KVM, userfaultfd and its\n"
	"write-protect on shared memory, MADV_COLLAPSE, THP, vm.max_map_count,\n"
	"SCHED_FIFO) and says what is lost where a piece is missing. Exit status 0\n"
	"when VMs can run here (KVM and userfaultfd work), 1 when they cannot.\n";

int cmd_host_check(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const struct host_report *rep;
	bool json = false;
	int c;

	if (cli_check_options("gpmm host-check", opts, argc, argv))
		return 2;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'j': json = true; break;
		case 'h': fputs(host_check_usage, stdout); return 0;
		default: return 2;	/* cli_check_options said it */
		}
	}
	rep = host_caps();
	if (json) {
		json_t *j = host_caps_json(rep);

		json_dumpf(j, stdout, JSON_INDENT(2));
		putchar('\n');
		json_decref(j);
	} else {
		host_caps_print(stdout, rep);
	}
	return host_has(HOST_KVM) && host_has(HOST_UFFD) ? 0 : 1;
}
