// SPDX-License-Identifier: GPL-2.0
/*
 * The control verbs of a running VM, named as operators know them (virsh,
 * ch-remote): status, pause, resume, shutdown (the power button), destroy
 * (end it now); and how a verb or `gpmm frag` finds the VM it means.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "vmm/control/qmp_client.h"

/*
 * The socket of VM @name, else the daemon's, else the one VM socket in the
 * run directory. Nothing there, or several: said on stderr, -1.
 */
int cli_find_vm_socket(const char *who, const char *name, char *path, size_t len)
{
	const char *dir = gpmm_run_dir();
	char pattern[PATH_MAX];
	glob_t g = { 0 };
	int ret = -1;

	if (name) {
		snprintf(path, len, "%s/%s.qmp", dir, name);
		if (!access(path, F_OK))
			return 0;
		fprintf(stderr, "%s: no VM named '%s' runs here (no %s)\n", who, name, path);
		return -1;
	}
	snprintf(path, len, "%s/gpmm.sock", dir);
	if (!access(path, F_OK))
		return 0;
	snprintf(pattern, sizeof(pattern), "%s/*.qmp", dir);
	if (glob(pattern, 0, NULL, &g) == 0 && g.gl_pathc == 1) {
		snprintf(path, len, "%s", g.gl_pathv[0]);
		ret = 0;
	} else if (g.gl_pathc > 1) {
		fprintf(stderr, "%s: %zu VMs run here: name one (", who, g.gl_pathc);
		for (size_t i = 0; i < g.gl_pathc; i++) {
			const char *base = strrchr(g.gl_pathv[i], '/') + 1;

			fprintf(stderr, "%s%.*s", i ? ", " : "", (int)(strlen(base) - 4), base);
		}
		fprintf(stderr, ")\n");
	} else {
		fprintf(stderr, "%s: no VM runs here: no gpmm daemon and no VM socket in %s "
			"(start one with gpmm run, or say where: --qmp PATH)\n", who, dir);
	}
	globfree(&g);
	return ret;
}

struct ctl_verb {
	const char *name;
	const char *qmp;	/* the command sent */
	const char *done;	/* said on success; NULL: the answer printed */
};

static const struct ctl_verb ctl_verbs[] = {
	{ "status", "query-status", NULL },
	{ "pause", "stop", "paused" },
	{ "resume", "cont", "resumed" },
	{ "shutdown", "system_powerdown",
	  "power button pressed: the guest shuts down if it listens to ACPI (a Linux guest"
	  " does, a flat payload does not); gpmm destroy ends it at once" },
	{ "destroy", "quit", "ended" },
	{ 0 }
};

static int print_status(struct qmp_client *q, json_t *ret)
{
	char err[512];
	json_t *mem = qmpc_execute(q, "query-memory-size-summary", NULL, NULL, NULL,
				   err, sizeof(err));

	printf("status: %s\n", json_string_value(json_object_get(ret, "status")));
	if (mem)
		printf("ram: %lld MiB\n",
		       (long long)json_integer_value(json_object_get(mem, "base-memory")) >> 20);
	json_decref(mem);
	return 0;
}

/* gpmm VERB [NAME | --qmp PATH] */
static int ctl(int argc, char **argv, const struct ctl_verb *v)
{
	static const struct option opts[] = {
		{ "qmp", required_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	char who[64], path[PATH_MAX], err[512];
	const char *qmp = NULL;
	struct qmp_client q;
	json_t *ret;
	int c;

	snprintf(who, sizeof(who), "gpmm %s", v->name);
	if (cli_check_options(who, opts, argc, argv))
		return 2;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'q': qmp = optarg; break;
		case 'h':
			printf("usage: %s [NAME | --qmp PATH]\nNAME may be left out when one VM"
			       " (or one gpmm daemon) runs here.\n", who);
			return 0;
		default: return 2;
		}
	}
	if (optind + (qmp ? 0 : 1) < argc) {
		fprintf(stderr, "%s: one VM at a time\n", who);
		return 2;
	}
	if (!qmp) {
		if (cli_find_vm_socket(who, optind < argc ? argv[optind] : NULL, path,
				       sizeof(path)))
			return 1;
		qmp = path;
	}
	if (qmpc_connect(&q, qmp, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", who, err);
		return 1;
	}
	ret = qmpc_execute(&q, v->qmp, NULL, NULL, NULL, err, sizeof(err));
	if (ret && !v->done)
		print_status(&q, ret);
	else if (ret)
		printf("%s: %s\n", who, v->done);
	qmpc_close(&q);
	if (!ret) {
		fprintf(stderr, "%s: %s\n", who, err);
		return 1;
	}
	json_decref(ret);
	return 0;
}

static int run_verb(const char *name, int argc, char **argv)
{
	for (const struct ctl_verb *v = ctl_verbs; v->name; v++)
		if (!strcmp(v->name, name))
			return ctl(argc, argv, v);
	return 2;
}

int cmd_status(int argc, char **argv) { return run_verb("status", argc, argv); }
int cmd_pause(int argc, char **argv) { return run_verb("pause", argc, argv); }
int cmd_resume(int argc, char **argv) { return run_verb("resume", argc, argv); }
int cmd_shutdown(int argc, char **argv) { return run_verb("shutdown", argc, argv); }
int cmd_destroy(int argc, char **argv) { return run_verb("destroy", argc, argv); }

/*
 * `gpmm stop` ended a VM (QMP quit) while QMP's own `stop` pauses one: a
 * word that means the opposite in the protocol next door is refused with
 * the three verbs it could have meant.
 */
int cmd_stop(int argc, char **argv)
{
	fprintf(stderr, "gpmm stop: not a verb of gpmm: QMP's stop pauses a VM, virsh's destroy"
		" ends one; say which you mean:\n"
		"  gpmm pause NAME      pause the guest (QMP stop)\n"
		"  gpmm shutdown NAME   press its power button: the guest shuts down (QMP system_powerdown)\n"
		"  gpmm destroy NAME    end it at once (QMP quit)\n");
	return 2;
}
