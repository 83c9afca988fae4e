// SPDX-License-Identifier: GPL-2.0
/*
 * `gpmm qemu ARGS...`, or gpmm started under a name beginning with
 * qemu-system- or gpmm-qemu: the front end libvirt's QEMU driver starts
 * as a domain's <emulator>. It reads QEMU's command line (qemu_args.c),
 * runs the VM as `gpmm run` would (the host pool service's when it runs,
 * else a pool of its own sized from -m), and speaks QMP on the monitor
 * socket libvirt handed over, already listening.
 *
 * libvirt first probes the emulator for its capabilities (-machine none
 * ... -daemonize) with some fifty QMP commands about QEMU's machine
 * types, CPU models and schema. gpmm does not pretend to be QEMU there:
 * it hands the probe to the real qemu-system-x86_64, so libvirt learns a
 * true QEMU 7.2 capability set and then generates the command line every
 * start parses here. QEMU must therefore be installed beside gpmm.
 *
 * A QEMU user's own command line runs here too: -nographic or -serial
 * stdio makes the VM this terminal's, as `gpmm run` does (raw mode,
 * Ctrl-A x leaves), and the guest's poweroff ends the process with its
 * exit code. -version and -help are answered here, not by the real QEMU:
 * libvirt never asks the emulator either.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cli/cli.h"
#include "vmm/core/config.h"
#include "vmm/control/daemon.h"
#include "vmm/qemu/qemu_args.h"

#define QEMU_BINARY	"/usr/bin/qemu-system-x86_64"

static int exec_real_qemu(char **argv)
{
	const char *qemu = getenv("GPMM_QEMU_BINARY");

	if (!qemu || !*qemu)
		qemu = QEMU_BINARY;
	argv[0] = (char *)qemu;
	execv(qemu, argv);
	fprintf(stderr, "gpmm: libvirt's capability probe runs the real QEMU, and %s "
		"cannot run: %s (install qemu-system-x86, or set GPMM_QEMU_BINARY)\n",
		qemu, strerror(errno));
	return 1;
}

/* An inherited monitor descriptor must be a listening socket. */
static int check_listening(int fd)
{
	int on = 0;
	socklen_t len = sizeof(on);

	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &on, &len) || !on) {
		fprintf(stderr, "gpmm: monitor fd=%d is not a listening socket\n", fd);
		return -1;
	}
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	return 0;
}

/* The serial port's logfile= (libvirt's virtlogd pipe, or a path); -1 = none. */
static int serial_log_fd(const struct qemu_cmdline *q)
{
	const struct qemu_chardev *c = q->serial >= 0 ? &q->chardevs[q->serial] : NULL;
	int fd;

	if (!c || !c->logfile[0])
		return -1;
	if (c->log_fd >= 0)
		return c->log_fd;
	fd = open(c->logfile, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0)
		fprintf(stderr, "gpmm: cannot open console log %s: %s\n", c->logfile,
			strerror(errno));
	return fd < 0 ? -2 : fd;
}

static int write_pidfile(const char *path)
{
	FILE *f;

	if (!path[0])
		return 0;
	f = fopen(path, "w");
	if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f)) {
		fprintf(stderr, "gpmm: cannot write pidfile %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * -daemonize: the parent returns once the child is ready (its monitor
 * listens), as QEMU's does, so whoever started it can connect at once.
 * Returns in the child with the pipe's write end in *@ready.
 */
static int daemonize(int *ready)
{
	int p[2];
	char c;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid > 0) {
		close(p[1]);
		_exit(read(p[0], &c, 1) == 1 ? 0 : 1);
	}
	close(p[0]);
	setsid();
	*ready = p[1];
	return 0;
}

/*
 * A pool of its own when there is no host pool service: the guest's RAM
 * and an eighth more (at least 32 MiB) of room to move pages into when
 * 2 MiB blocks are assembled. A ceiling, not a reservation.
 */
static void size_own_pool(struct vm_config *cfg)
{
	uint64_t extra = cfg->ram_bytes / 8;

	if (extra < (32ULL << 20))
		extra = 32ULL << 20;
	cfg->pool_bytes = (cfg->ram_bytes + extra + MM_PAGEBLOCK_SIZE - 1) & ~(MM_PAGEBLOCK_SIZE - 1);
}

/* Where the guest's console went, for the line that says the VM runs. */
static const char *console_note(const struct qemu_cmdline *q)
{
	if (!strcmp(q->cfg.console, "stdio"))
		return "; console here, Ctrl-A x leaves";
	if (!q->serial_chosen && q->monitor < 0)
		return "; no serial console (-nographic or -serial stdio puts it here)";
	return "";
}

/*
 * Once per start, in the domain's log: the devices accepted with nothing
 * behind them, so that whoever wonders where the guest's USB went reads it.
 */
static void note_plumbing(const struct qemu_plumbing *pl, const char *what, const char *why)
{
	if (pl->count)
		fprintf(stderr, "gpmm: %u %s (%s%s) accepted with nothing behind %s: %s\n",
			pl->count, what, pl->first, pl->count > 1 ? ", ..." : "",
			pl->count > 1 ? "them" : "it", why);
}

static int run_qemu(struct qemu_cmdline *q)
{
	struct dvm_opts opts = { .qmp_listen_fd = -1, .console_log_fd = -1, .qemu = q,
				 .start_paused = q->start_paused,
				 .foreground = !strcmp(q->cfg.console, "stdio") };
	struct pool *pool;
	struct daemon d;
	struct dvm *v;
	char err[512];
	int ready = -1, ret;

	if (q->monitor >= 0) {
		const struct qemu_chardev *m = &q->chardevs[q->monitor];

		if (m->fd >= 0) {
			if (check_listening(m->fd))
				return 1;
			opts.qmp_listen_fd = m->fd;
		} else {
			snprintf(q->cfg.qmp_path, sizeof(q->cfg.qmp_path), "%s", m->path);
		}
	}
	note_plumbing(&q->usb_controllers, q->usb_controllers.count > 1 ? "USB controllers" :
		      "USB controller", "gpmm's machine has no USB, so the guest sees none");
	note_plumbing(&q->pci_ports, q->pci_ports.count > 1 ? "PCI ports or bridges" :
		      "PCI port or bridge", "gpmm's devices are virtio-mmio, behind no PCI bus");
	opts.console_log_fd = serial_log_fd(q);
	if (opts.console_log_fd == -2 || cli_check_host("gpmm"))
		return 1;
	if (q->daemonize && daemonize(&ready)) {
		fprintf(stderr, "gpmm: -daemonize: %s\n", strerror(errno));
		return 1;
	}
	if (write_pidfile(q->pidfile))
		return 1;
	size_own_pool(&q->cfg);
	if (cli_sandbox_fs_vm(&q->cfg, q->no_seccomp, "gpmm"))
		return 1;
	ret = cli_open_pool(&q->cfg, HOST_POOL_AUTO, getenv("GPMM_POOL_SOCKET"), "gpmm", NULL, &pool);
	if (ret) {
		if (ret != -EHOSTDOWN)
			fprintf(stderr, "gpmm: cannot create a %llu MiB pool: %s\n",
				(unsigned long long)(q->cfg.pool_bytes >> 20), strerror(-ret));
		return 1;
	}
	ret = daemon_init(&d, pool, NULL, err, sizeof(err));
	if (!ret && cli_sandbox(&d, q->no_seccomp, "gpmm")) {
		daemon_fini(&d);
		pool_close(pool);
		return 1;
	}
	if (!ret)
		ret = daemon_add_vm(&d, &q->cfg, &opts, &v, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "gpmm: %s\n", err);
		daemon_fini(&d);
		pool_close(pool);
		return 1;
	}
	/* read on the loop's thread only, which has not run yet: no guest reset is missed */
	v->reset_ends = q->no_reboot;
	fprintf(stderr, "gpmm: VM %s: %llu MiB, %u vCPUs, %s%s\n", q->cfg.name,
		(unsigned long long)(q->cfg.ram_bytes >> 20), q->cfg.cpus,
		q->start_paused ? "paused until QMP cont" : "running", console_note(q));
	if (ready >= 0 && (write(ready, "", 1) != 1 || close(ready)))
		return 1;
	d.exit_when_idle = true;
	ret = daemon_loop(&d);
	daemon_fini(&d);
	pool_close(pool);
	if (ret > 128 && ret < 128 + 65) {
		/* as QEMU: a signal from the host is an orderly end */
		fprintf(stderr, "gpmm: terminating on signal %d\n", ret - 128);
		return 0;
	}
	return ret < 0 ? 1 : ret & 0xff;
}

int cmd_qemu(int argc, char **argv)
{
	static struct qemu_cmdline q;	/* large: PATH_MAX strings */
	char err[1024];

	if (qemu_args_is_probe(argc, argv))
		return exec_real_qemu(argv);
	if (qemu_args_parse(argc, argv, &q, err, sizeof(err))) {
		fprintf(stderr, "gpmm: %s\n", err);
		return 1;
	}
	if (q.help || q.version) {
		(q.help ? qemu_args_usage : qemu_args_version)(stdout);
		return 0;
	}
	if (q.probe)
		return exec_real_qemu(argv);
	return run_qemu(&q);
}
