// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the VM config file (vmm/config.c over inih). The
 * input is the file. config_load takes a path, so the input goes to a
 * memfd read back through /proc/self/fd/N: the same fopen and line reads
 * as a file on disk, without touching the disk.
 *
 * Checked besides the sanitizers: a refusal comes with a terminated,
 * non-empty sentence; an accepted config holds only what config_set
 * admits for each key (there is no separate validation function: these
 * checks are the keys' documented ranges), and config_finish leaves it so.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vmm/config.h"

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	struct vm_config cfg;
	char err[512];

	if (fd < 0) {
		fd = memfd_create("fuzz-config", MFD_CLOEXEC);
		if (fd < 0)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	config_defaults(&cfg);
	memset(err, 0xa5, sizeof(err));
	if (config_load(path, &cfg, err, sizeof(err))) {
		if (!terminated(err, sizeof(err)) || !err[0])
			abort();	/* a refusal must say why, in a C string */
		return 0;
	}
	check_config(&cfg);
	config_finish(&cfg);
	check_config(&cfg);
	if (cfg.kernel[0] && !cfg.name[0])
		abort();	/* config_finish names a VM after its kernel */
	return 0;
}
