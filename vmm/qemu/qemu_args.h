/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The QEMU command line libvirt's QEMU driver generates (libvirt 9.0 with
 * QEMU 7.2 capabilities: JSON -object/-device/-blockdev), read into the VM
 * config `gpmm run` uses plus what only a libvirt start has: the inherited
 * monitor socket, chardevs on inherited descriptors, -S. The same parser
 * reads what a QEMU user types by hand (-nographic, -serial stdio, -m 1G,
 * -drive ...,if=virtio, -version, -help). Options that change nothing the
 * guest sees are accepted; one gpmm cannot honour is refused with a
 * sentence libvirt, or the user's terminal, shows.
 */
#ifndef GPMM_QEMU_ARGS_H
#define GPMM_QEMU_ARGS_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>

#include "vmm/core/vm.h"

/*
 * The QEMU whose command line and QMP gpmm speaks: the one libvirt's
 * capability probe finds (Debian 12's), so -version agrees with the QMP
 * greeting (vmm/control/qmp.c spells the same 7, 2, 0).
 */
#define QEMU_FRONT_END_VERSION	"7.2.0"

#define QEMU_MAX_CHARDEVS	8
#define QEMU_MAX_FDSETS		8

enum qemu_chardev_kind {
	QEMU_CHARDEV_SOCKET,	/* fd=N (inherited, listening) or path=P */
	QEMU_CHARDEV_PTY,
	QEMU_CHARDEV_FILE,	/* path, or /dev/fdset/N: an inherited fd */
	QEMU_CHARDEV_NULL,
	QEMU_CHARDEV_STDIO,	/* this terminal: -nographic, -serial stdio */
};

struct qemu_chardev {
	char id[64];
	enum qemu_chardev_kind kind;
	int fd;			/* socket fd=, or the fdset's fd for a file; -1 */
	char path[PATH_MAX];
	bool server;
	char logfile[PATH_MAX];	/* logfile=: a copy of the output, "" = none */
	int log_fd;		/* its inherited fd (/dev/fdset/N), or -1 */
};

#define QEMU_MAX_DEVICES	8

/* A -device gpmm has: its id (libvirt's alias) and QEMU's driver name. */
struct qemu_device {
	char id[64];
	char driver[32];
};

/*
 * Devices accepted with nothing behind them (USB controllers, PCI ports):
 * how many, and the first one's driver, for the one line the domain's log
 * gets about them.
 */
struct qemu_plumbing {
	unsigned int count;
	char first[32];
};

struct qemu_cmdline {
	struct vm_config cfg;
	bool probe;		/* -machine none: a capability probe, for real QEMU */
	bool start_paused;	/* -S: vCPUs wait for QMP cont */
	bool no_shutdown;	/* a guest poweroff stops the VM, the process stays */
	bool daemonize;
	bool no_seccomp;	/* -sandbox off */
	bool no_reboot;		/* a guest reset ends the VM */
	bool serial_chosen;	/* -serial, -nographic or a serial device said where */
	bool help, version;	/* -help, -version: print, run nothing */
	char pidfile[PATH_MAX];
	char uuid[40];
	int monitor;		/* index in chardevs of the QMP monitor, -1 */
	int serial;		/* index in chardevs of the serial port, -1 */
	struct qemu_chardev chardevs[QEMU_MAX_CHARDEVS];
	unsigned int nr_chardevs;
	struct qemu_device devices[QEMU_MAX_DEVICES];
	unsigned int nr_devices;
	struct qemu_plumbing usb_controllers, pci_ports;
	struct { int set, fd; } fdsets[QEMU_MAX_FDSETS];
	unsigned int nr_fdsets;
};

/*
 * Parse argv[1..argc-1]. Returns 0, or -EINVAL/-ENOTSUP with the reason
 * in @err. A probe (-machine none), -help and -version parse no further
 * than they must. The serial port's back end is left in cfg.console as a
 * `gpmm run --console` spec (stdio, pty, file:PATH, fd:N, socket:PATH, none).
 */
__must_check int qemu_args_parse(int argc, char **argv, struct qemu_cmdline *out,
				 char *err, size_t errlen);
/* The argv is a capability probe (-machine none, ... -daemonize). */
bool qemu_args_is_probe(int argc, char **argv);
/* What -help and -version print (the caller chooses the stream). */
void qemu_args_usage(FILE *f);
void qemu_args_version(FILE *f);

#endif
