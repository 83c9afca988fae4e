/* SPDX-License-Identifier: GPL-2.0 */
#ifndef GPMM_CLI_H
#define GPMM_CLI_H

/* The CLI's top level: the only place that prints errors and exits. */
int cli_main(int argc, char **argv);

int cmd_run(int argc, char **argv);
int cmd_daemon(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_stop(int argc, char **argv);
int cmd_pause(int argc, char **argv);
int cmd_resume(int argc, char **argv);
int cmd_shutdown(int argc, char **argv);
int cmd_destroy(int argc, char **argv);
int cmd_frag(int argc, char **argv);
int cmd_host_check(int argc, char **argv);
int cmd_fragmenting_tenant(int argc, char **argv);
int cmd_qemu(int argc, char **argv);

#include <stdbool.h>
#include <stddef.h>

struct option;
/*
 * argv's options checked against @opts before getopt_long reads them: an
 * unknown one is named (with a hint when another VMM spells it so), one
 * that needs a value has one. -1: said on stderr, prefixed @who.
 */
int cli_check_options(const char *who, const struct option *opts, int argc, char **argv);
/* The QMP socket of VM @name, or of the only VM (or daemon) here; -1: said. */
int cli_find_vm_socket(const char *who, const char *name, char *path, size_t len);

struct vm_config;
struct pool;

/* Where a VM takes guest RAM: the host pool service or a pool of its own. */
enum host_pool_use { HOST_POOL_AUTO, HOST_POOL_REQUIRED, HOST_POOL_NEVER };
bool cli_uses_own_pool(enum host_pool_use use, const char *sock, char *path, size_t len);
int cli_open_pool(struct vm_config *cfg, enum host_pool_use use, const char *sock,
		  const char *who, const char *opt_out, struct pool **pool);
/* gpmm run's checks before any VM: KVM and userfaultfd; 0 or said on stderr. */
int cli_check_host(const char *who);
struct daemon;
/*
 * The VMM's sandbox (cli/sandbox.c; @off: --no-seccomp or -sandbox off).
 * The file system first, before the process's first thread: what VM @cfg
 * needs, or a daemon's socket and metrics @paths (their directories) and
 * the @dirs its VMs may write in. Then the seccomp lists, before the first
 * VM starts. 0, or the reason said on stderr and the caller stops. A VM's
 * named taps are attached first (their descriptors into @cfg).
 */
int cli_sandbox_fs_vm(struct vm_config *cfg, bool off, const char *who);
int cli_sandbox_fs_daemon(const char *const *paths, size_t n, const char *const *dirs,
			  size_t nr_dirs, bool off, const char *who);
int cli_sandbox(struct daemon *d, bool off, const char *who);

#endif
