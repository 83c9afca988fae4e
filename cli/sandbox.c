// SPDX-License-Identifier: GPL-2.0
/*
 * Putting a VMM process in its sandbox (vmm/sys/sandbox.h), as gpmm run,
 * gpmm daemon and gpmm-qemu do: the file system first, before the first
 * thread, with the paths the process will still need; the seccomp lists
 * once the process is set up. Either failing stops the VMM with the
 * reason (fail closed), unless --no-seccomp / -sandbox off drops both.
 * A kernel without Landlock is the one exception, said loudly: seccomp
 * alone still keeps the process from other processes' signals, scheduling,
 * terminals and sockets, but not from their files.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "vmm/control/daemon.h"
#include "vmm/control/qmp_client.h"
#include "vmm/core/vm.h"
#include "vmm/memory/swap.h"
#include "vmm/sys/sandbox.h"
#include "vmm/sys/tap.h"

#define RW	(SANDBOX_FS_READ | SANDBOX_FS_WRITE)
#define RWC	(SANDBOX_FS_READ | SANDBOX_FS_WRITE | SANDBOX_FS_CREATE)

/* The directory @path is in, for a socket or file made and removed there. */
static int allow_parent(const char *path, unsigned int how, char *err, size_t errlen)
{
	char dir[PATH_MAX];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash)
		return sandbox_fs_allow(".", how, err, errlen);
	if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	return sandbox_fs_allow(dir, how, err, errlen);
}

/*
 * A console file is made now, so that the rule can name the file rather
 * than let the VMM create files in its directory.
 */
static int allow_console(const char *spec, char *err, size_t errlen)
{
	int fd;

	if (!strncmp(spec, "socket:", 7))
		return allow_parent(spec + 7, RWC, err, errlen);
	if (strncmp(spec, "file:", 5))
		return 0;
	fd = open(spec + 5, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NONBLOCK, 0600);
	if (fd >= 0)
		close(fd);
	return sandbox_fs_allow(spec + 5, SANDBOX_FS_WRITE, err, errlen);
}

static int allow_vm(const struct vm_config *cfg, char *err, size_t errlen)
{
	int ret = sandbox_fs_allow(gpmm_run_dir(), RWC, err, errlen);

	if (!ret)
		ret = sandbox_fs_allow(cfg->kernel, SANDBOX_FS_READ, err, errlen);
	if (!ret && cfg->initrd[0])
		ret = sandbox_fs_allow(cfg->initrd, SANDBOX_FS_READ, err, errlen);
	if (!ret && cfg->disk[0])
		ret = sandbox_fs_allow(cfg->disk, cfg->disk_readonly ? SANDBOX_FS_READ : RW,
				       err, errlen);
	if (!ret && cfg->qmp_path[0])
		ret = allow_parent(cfg->qmp_path, RWC, err, errlen);
	if (!ret)
		ret = allow_console(cfg->console, err, errlen);
	return ret;
}

/*
 * Enter the restriction, or stop. Without Landlock in the kernel the VMM
 * runs with seccomp only, and says what that leaves open.
 */
static int enter_fs(bool off, int ret, const char *who, char *err, size_t errlen)
{
	if (off)
		return 0;
	if (!ret)
		ret = sandbox_fs_enter(err, errlen);
	if (ret == -EOPNOTSUPP) {
		fprintf(stderr, "%s: WARNING: %s: the file system is not restricted, so a guest "
			"that breaks a device model can open every file this user may (another "
			"process's /proc/PID/mem included); seccomp still applies\n", who, err);
		return 0;
	}
	if (ret)
		fprintf(stderr, "%s: sandbox: %s (--no-seccomp runs without the sandbox)\n",
			who, err);
	return ret;
}

int cli_sandbox_fs_vm(struct vm_config *cfg, bool off, const char *who)
{
	char err[PATH_MAX + 128];

	/* before the sandbox, which keeps /dev/net/tun and TUNSETIFF out of reach */
	if (tap_attach_all(cfg, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", who, err);
		return -1;
	}
	/* the VM gets its swap file open, not the directory */
	if (swap_file_open(cfg, err, sizeof(err))) {
		bool asked = strcmp(cfg->swap_dir, "auto");

		if (asked || cfg->pool_host.overcommit_pct > 100)
			fprintf(stderr, "%s: %s%s\n", who, err, asked ? "" :
				": the VM cannot swap (swap = DIR names another place)");
		if (asked)
			return -1;
		cfg->swap_dir[0] = '\0';
	} else if (err[0] && (strcmp(cfg->swap_dir, "auto") || cfg->pool_host.overcommit_pct > 100)) {
		fprintf(stderr, "%s: %s\n", who, err);
	}
	return enter_fs(off, off ? 0 : allow_vm(cfg, err, sizeof(err)), who, err, sizeof(err));
}

/*
 * A daemon makes VMs later from paths its clients name. It may read and
 * write only where the operator said, its run directory, the directories
 * of its sockets and metrics and each --allow DIR, besides what every
 * VMM opens: a guest that takes over a VM the daemon runs reads no file
 * of the host's it was not given (other VMs' disks and kernels, /etc).
 */
int cli_sandbox_fs_daemon(const char *const *paths, size_t n, const char *const *dirs,
			  size_t nr_dirs, bool off, const char *who)
{
	char err[PATH_MAX + 128];
	int ret = 0;

	if (!off) {
		ret = sandbox_fs_allow(gpmm_run_dir(), RWC, err, sizeof(err));
		for (size_t i = 0; !ret && i < n; i++)
			if (paths[i][0])
				ret = allow_parent(paths[i], RWC, err, sizeof(err));
		for (size_t i = 0; !ret && i < nr_dirs; i++)
			ret = sandbox_fs_allow(dirs[i], RWC, err, sizeof(err));
	}
	return enter_fs(off, ret, who, err, sizeof(err));
}

int cli_sandbox(struct daemon *d, bool off, const char *who)
{
	char err[256];

	if (off) {
		fprintf(stderr, "%s: --no-seccomp: running without a syscall filter or a file system "
			"restriction\n", who);
		return 0;
	}
	if (sandbox_enter_vmm(err, sizeof(err))) {
		fprintf(stderr, "%s: %s: stopping (--no-seccomp runs without the sandbox)\n",
			who, err);
		return -1;
	}
	d->sandboxed = true;
	return 0;
}
