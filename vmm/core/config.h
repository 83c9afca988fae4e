/* SPDX-License-Identifier: GPL-2.0 */
/*
 * VM configuration from the command line and from INI files (inih); both
 * speak the same keys: name, ram, cpus, kernel, pool, prefault, qmp, and
 * the 2 MiB assembly policy: huge, huge_fill, huge_rate, huge_target.
 */
#ifndef GPMM_CONFIG_H
#define GPMM_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/core/vm.h"

#define CONFIG_DEFAULT_RAM	(128ULL << 20)
#define CONFIG_DEFAULT_POOL	(1ULL << 30)

void config_defaults(struct vm_config *cfg);
/* "512M", "1.5G", "2048K", "4096" (bytes): binary suffixes K M G T. */
__must_check int config_parse_size(const char *s, uint64_t *out);
/* The same, but a bare number is MiB (QEMU's -m): for ram and pool. */
__must_check int config_parse_mem_size(const char *s, uint64_t *out);
/* Whether @key takes a memory size (a bare number MiB, "NB" bytes). */
bool config_key_is_size(const char *key);
__must_check int config_parse_bool(const char *s, bool *out);
/* Set one key; on error @err names the key and the value. */
__must_check int config_set(struct vm_config *cfg, const char *key, const char *value,
	       char *err, size_t errlen);
/* Load an INI file (keys at top level or in [vm]). */
__must_check int config_load(const char *path, struct vm_config *cfg, char *err,
		size_t errlen);
/* "auto", "huge" or "4k": the fault key's spelling. */
const char *config_fault_name(enum vm_fault_policy f);
/*
 * A VM's config before any host resource is touched: a kernel given, RAM a
 * multiple of 2 MiB, the kernel, initrd and disk readable (the disk
 * writable unless read-only). -EINVAL or -ENOENT, @err says which.
 */
__must_check int config_check(const struct vm_config *cfg, char *err, size_t errlen);
__must_check int config_check_ram(const struct vm_config *cfg, char *err, size_t errlen);
/* A pool is whole 2 MiB pageblocks. */
__must_check int config_check_pool(uint64_t pool_bytes, char *err, size_t errlen);
/* Fill what the user left out (name from the kernel file). */
void config_finish(struct vm_config *cfg);

#endif
