// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the VM config file (vmm/core/config.c over inih). The
 * input is the file. config_load takes a path, so the input goes to a
 * memfd read back through /proc/self/fd/N: the same fopen and line reads
 * as a file on disk, without touching the disk.
 *
 * Checked besides the sanitizers: a refusal comes with a terminated,
 * non-empty sentence, and it is the refusal of the line it names: the
 * file cut after that line is refused with the same words. An accepted
 * config holds only what config_set admits for each key, and
 * config_finish leaves it so (vm.c's check_config, the one validation
 * function, is vm_create's and wants a pool: the parser accepts what it
 * refuses, such as a RAM size that is no multiple of 2 MiB, by design).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vmm/core/config.h"

static bool terminated(const char *s, size_t size)
{
	return memchr(s, '\0', size) != NULL;
}

static bool good_name(const char *name)
{
	for (const char *p = name; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("-_.", *p))
			return false;
	return true;
}

static bool good_console(const char *c)
{
	return !strcmp(c, "stdio") || !strcmp(c, "pty") || !strcmp(c, "none") ||
	       (!strncmp(c, "socket:", 7) && c[7]) || (!strncmp(c, "file:", 5) && c[5]);
}

/* What every consumer of a vm_config may take for granted. */
static void check_config(const struct vm_config *cfg)
{
	if (!terminated(cfg->name, sizeof(cfg->name)) ||
	    !terminated(cfg->kernel, sizeof(cfg->kernel)) ||
	    !terminated(cfg->initrd, sizeof(cfg->initrd)) ||
	    !terminated(cfg->append, sizeof(cfg->append)) ||
	    !terminated(cfg->console, sizeof(cfg->console)) ||
	    !terminated(cfg->disk, sizeof(cfg->disk)) ||
	    !terminated(cfg->qmp_path, sizeof(cfg->qmp_path)))
		abort();
	if (!good_name(cfg->name) || !good_console(cfg->console))
		abort();
	if (cfg->cpus < 1 || cfg->cpus > VM_MAX_CPUS || cfg->huge_target > 100 ||
	    cfg->huge_rate > 1000000 || cfg->pool_host.release_ms > 3600000 ||
	    (unsigned int)cfg->fault > VM_FAULT_4K)
		abort();
}

static int fd = -1;
static char path[64];

static int load(const uint8_t *data, size_t size, struct vm_config *cfg, char *err,
		size_t errlen)
{
	if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	config_defaults(cfg);
	memset(err, 0xa5, errlen);
	return config_load(path, cfg, err, errlen);
}

/*
 * The bytes up to the end of line @line as inih counts lines (one per
 * read of at most INI_MAX_LINE - 1 bytes); 0 when a line is longer than
 * that, as the count then differs from the lines cut here.
 */
static size_t through_line(const uint8_t *data, size_t size, unsigned long line)
{
	size_t off = 0;

	for (unsigned long n = 0; n < line && off < size; n++) {
		const uint8_t *nl = memchr(data + off, '\n', size - off);
		size_t len = nl ? (size_t)(nl - (data + off)) + 1 : size - off;

		if (len > 199)
			return 0;
		off += len;
	}
	return off;
}

/* "PATH:LINE: why" names LINE: without what follows it, the same words. */
static void check_refusal(const uint8_t *data, size_t size, const char *err)
{
	struct vm_config cfg;
	char again[512];
	unsigned long line;
	size_t cut;
	char *end;

	if (strncmp(err, path, strlen(path)) || err[strlen(path)] != ':')
		return;		/* not about a line: cannot open, out of memory */
	line = strtoul(err + strlen(path) + 1, &end, 10);
	if (*end != ':')
		abort();
	cut = through_line(data, size, line);
	if (!cut || cut == size)
		return;
	if (!load(data, cut, &cfg, again, sizeof(again)) || strcmp(err, again)) {
		fprintf(stderr, "whole file: %s\nthrough line %lu: %s\n", err, line, again);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vm_config cfg;
	char err[512];

	if (fd < 0) {
		fd = memfd_create("fuzz-config", MFD_CLOEXEC);
		if (fd < 0)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (load(data, size, &cfg, err, sizeof(err))) {
		if (!terminated(err, sizeof(err)) || !err[0])
			abort();	/* a refusal must say why, in a C string */
		check_refusal(data, size, err);
		return 0;
	}
	check_config(&cfg);
	config_finish(&cfg);
	check_config(&cfg);
	if (cfg.kernel[0] && !cfg.name[0])
		abort();	/* config_finish names a VM after its kernel */
	return 0;
}
