// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the QEMU command line libvirt writes (vmm/qemu/qemu_args.c).
 * The input is argv, one argument per NUL-terminated piece (the way
 * /proc/PID/cmdline spells it, so a real libvirt start is a seed).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/qemu/qemu_args.h"

#define MAX_ARGS	256

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct qemu_cmdline q;
	char *argv[MAX_ARGS + 1], *buf = malloc(size + 1), err[512];
	int argc = 1;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	argv[0] = "gpmm-qemu";
	for (size_t i = 0; i < size && argc < MAX_ARGS; ) {
		argv[argc++] = buf + i;
		i += strlen(buf + i) + 1;
	}
	argv[argc] = NULL;
	qemu_args_is_probe(argc, argv);
	if (qemu_args_parse(argc, argv, &q, err, sizeof(err)) && !memchr(err, '\0', sizeof(err)))
		abort();	/* an error must come with a terminated sentence */
	free(buf);
	return 0;
}
