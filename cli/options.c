// SPDX-License-Identifier: GPL-2.0
/*
 * The command line's options checked before any of them is acted on: an
 * option gpmm does not know is named as one (never read as a file name),
 * with a hint when it is another VMM's spelling or a typo of ours.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

struct cli_hint {
	const char *spelling;	/* as typed, up to any '=' */
	const char *hint;
};

#define QEMU_TOO "; gpmm qemu reads QEMU's command line as it is"

/*
 * What users of QEMU, Cloud Hypervisor, Firecracker and kvmtool type first,
 * and gpmm's word for it. A table, so that a new habit is one line.
 */
static const struct cli_hint foreign_options[] = {
	{ "-m", "QEMU's -m is --ram SIZE here (a bare number is MiB, as in QEMU)" QEMU_TOO },
	{ "-smp", "QEMU's -smp is --cpus N here" QEMU_TOO },
	{ "-nographic", "QEMU's -nographic: gpmm run's console is this terminal already"
		" (--console stdio, the default)" QEMU_TOO },
	{ "-serial", "QEMU's -serial is --console stdio|pty|file:PATH|socket:PATH|none here" QEMU_TOO },
	{ "-drive", "QEMU's -drive is --disk FILE here (a raw image)" QEMU_TOO },
	{ "-hda", "QEMU's -hda is --disk FILE here (a raw image)" QEMU_TOO },
	{ "-qmp", "QEMU's -qmp is --qmp PATH here (a UNIX socket gpmm creates)" QEMU_TOO },
	{ "-enable-kvm", "gpmm always runs guests on KVM" QEMU_TOO },
	{ "-accel", "gpmm always runs guests on KVM" QEMU_TOO },
	{ "-machine", "gpmm has one machine type" QEMU_TOO },
	{ "-cpu", "gpmm gives the guest the host's CPU model" QEMU_TOO },
	{ "--memory", "Cloud Hypervisor's --memory size=SIZE is --ram SIZE here" },
	{ "--mem", "kvmtool's --mem is --ram SIZE here" },
	{ "--mem-size", "Firecracker's mem_size_mib is --ram SIZE here" },
	{ "--vcpus", "--cpus N" },
	{ "--smp", "--cpus N" },
	{ "--cmdline", "Cloud Hypervisor's --cmdline is --append CMDLINE here" },
	{ "--params", "kvmtool's --params is --append CMDLINE here" },
	{ "--initramfs", "--initrd FILE" },
	{ "--serial", "Cloud Hypervisor's --serial is --console stdio|pty|file:PATH|socket:PATH|none"
		" here (tty is stdio)" },
	{ "--api-socket", "Cloud Hypervisor's --api-socket: gpmm speaks QMP on --qmp PATH"
		" (default $GPMM_RUN_DIR/NAME.qmp); gpmm status|pause|resume|shutdown|destroy use it" },
	{ "--api-sock", "Firecracker's --api-sock: gpmm speaks QMP on --qmp PATH"
		" (default $GPMM_RUN_DIR/NAME.qmp); gpmm status|pause|resume|shutdown|destroy use it" },
	{ "--config-file", "Firecracker's --config-file: give gpmm a config INI as an argument"
		" (gpmm run configs/memtest.ini)" },
	{ "--netdev", "--net tap=NAME (a host tap; docs/networking.md)" },
	{ "-netdev", "QEMU's -netdev tap,ifname=NAME is --net tap=NAME here" QEMU_TOO },
	{ "-nic", "QEMU's -nic tap,ifname=NAME is --net tap=NAME here" QEMU_TOO },
	{ "--version", "gpmm --version (before the sub-command)" },
};

static const char *foreign_hint(const char *spelling, size_t len)
{
	for (size_t i = 0; i < sizeof(foreign_options) / sizeof(foreign_options[0]); i++)
		if (strlen(foreign_options[i].spelling) == len &&
		    !strncmp(foreign_options[i].spelling, spelling, len))
			return foreign_options[i].hint;
	return NULL;
}

/* Optimal string alignment distance, for "did you mean": short words only. */
static unsigned int edit_distance(const char *a, size_t la, const char *b)
{
	unsigned int d[40][40];
	size_t lb = strlen(b);

	if (la >= 40 || lb >= 40)
		return 99;
	for (size_t i = 0; i <= la; i++)
		d[i][0] = (unsigned int)i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = (unsigned int)j;
	for (size_t i = 1; i <= la; i++) {
		for (size_t j = 1; j <= lb; j++) {
			unsigned int best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);

			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	}
	return d[la][lb];
}

/*
 * The long option @name (@len bytes) stands for: itself, else the one
 * option it abbreviates (getopt_long's rule). NULL: none, or ambiguous
 * (*@ambiguous set).
 */
static const struct option *find_option(const struct option *opts, const char *name,
					size_t len, bool *ambiguous)
{
	const struct option *found = NULL;

	*ambiguous = false;
	for (const struct option *o = opts; o->name; o++)
		if (strlen(o->name) == len && !strncmp(o->name, name, len))
			return o;
	for (const struct option *o = opts; o->name; o++) {
		if (strncmp(o->name, name, len))
			continue;
		if (found) {
			*ambiguous = true;
			return NULL;
		}
		found = o;
	}
	return found;
}

static void say_unknown(const char *who, const struct option *opts, const char *arg,
			size_t len)
{
	const char *name = arg + (arg[1] == '-' ? 2 : 1);
	size_t nlen = len - (size_t)(name - arg);
	const char *hint = foreign_hint(arg, len);
	const struct option *close = NULL;
	bool ambiguous;

	fprintf(stderr, "%s: unknown option '%.*s'", who, (int)len, arg);
	if (hint) {
		fprintf(stderr, ": %s", hint);
	} else if (arg[1] != '-' && nlen > 1 &&
		   (close = find_option(opts, name, nlen, &ambiguous)) &&
		   strlen(close->name) == nlen) {
		fprintf(stderr, ": gpmm's options take two dashes: --%s", close->name);
	} else {
		unsigned int best = 3;

		for (const struct option *o = opts; o->name; o++) {
			unsigned int d = edit_distance(name, nlen, o->name);

			if (d < best) {
				best = d;
				close = o;
			}
		}
		if (close)
			fprintf(stderr, ": did you mean --%s?", close->name);
	}
	fprintf(stderr, "\nTry '%s --help'.\n", who);
}

/*
 * Walk argv as getopt_long will, before it does: every option known (or
 * the one option it abbreviates), every option that takes an argument
 * given one. Anything else is said here, once, with a hint, instead of
 * getopt's terse line or a non-option argument read as a file name.
 * Short options: -h alone.
 */
int cli_check_options(const char *who, const struct option *opts, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i], *name, *eq;
		const struct option *o;
		bool ambiguous;
		size_t len;

		if (!strcmp(arg, "--"))
			return 0;
		if (arg[0] != '-' || !arg[1] || !strcmp(arg, "-h"))
			continue;
		eq = strchr(arg, '=');
		len = eq ? (size_t)(eq - arg) : strlen(arg);
		name = arg + (arg[1] == '-' ? 2 : 1);
		o = arg[1] == '-' ? find_option(opts, name, len - 2, &ambiguous) : NULL;
		if (!o && arg[1] == '-' && ambiguous) {
			fprintf(stderr, "%s: option '%.*s' is ambiguous: say it whole\n"
				"Try '%s --help'.\n", who, (int)len, arg, who);
			return -1;
		}
		if (!o) {
			say_unknown(who, opts, arg, len);
			return -1;
		}
		if (eq && o->has_arg == no_argument) {
			fprintf(stderr, "%s: option '--%s' takes no value\nTry '%s --help'.\n",
				who, o->name, who);
			return -1;
		}
		if (!eq && o->has_arg == required_argument) {
			if (i + 1 >= argc) {
				fprintf(stderr, "%s: option '--%s' needs a value\nTry '%s --help'.\n",
					who, o->name, who);
				return -1;
			}
			i++;
		}
	}
	return 0;
}
