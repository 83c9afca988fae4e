// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: QMP as a client speaks it (vmm/control/qmp.c, qmp_qemu.c,
 * qmp_wire.c). The input is the byte stream a client sends; it goes in
 * pieces through a socketpair into qmp_input, the daemon loop's own entry
 * for a readable connection, and every reply is read back.
 *
 * The stream runs twice: on the daemon's control socket and on a VM's
 * own socket (libvirt's monitor), which see different command sets.
 *
 * The daemon is a fake: linking fd_daemon.c would bring in vm.c, KVM and the
 * pool, and a gpmm-vm-create would start a guest (and create its socket
 * and console files). So this file stands in for daemon_add_vm and the
 * rest of the daemon, vm.c, report.c and the balloon with small stubs
 * over fake VMs that hold a name, a state and a balloon but run nothing.
 * Each input starts with two of them: a libvirt domain ("probe1", with
 * the command line of corpus/qemu_args/start: chardevs, -device ids, a
 * balloon) and a plain one. A VM stopped by quit ends as daemon_loop
 * ends it (fake_finish_vms). Everything QMP itself decides (framing,
 * negotiation, argument checks, which VM a command means, errors) is the
 * real code.
 *
 * Checked besides the sanitizers: every line the daemon writes is one
 * JSON object: a greeting, an event, or a reply with exactly one of
 * "return" and "error", an error with a class and a description.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "devices/device.h"
#include "devices/virtio/virtio_balloon.h"
#include "vmm/core/config.h"
#include "vmm/control/daemon.h"
#include "vmm/qemu/qemu_args.h"
#include "vmm/control/report.h"

/* A fake VM's balloon: what the stubs below report and keep. */
struct fake_balloon {
	uint64_t target;
	unsigned int nr_stats;
	bool held;
};

static struct daemon fd_daemon;
static struct qemu_cmdline libvirt_cmdline;
static bool show_replies;	/* FUZZ_QMP_SHOW=1: what the daemon answered, on stderr */

/* --- stand-ins for fd_daemon.c --- */

struct dvm *daemon_find_vm(struct daemon *d, const char *name)
{
	for (struct dvm *v = d->vms; v; v = v->next)
		if (!v->ended && !strcmp(v->vm->cfg.name, name))
			return v;
	return NULL;
}

/*
 * A struct vm is half a megabyte (the migration statistics): the fake VMs
 * come from a fixed array, and only the fields QMP reads are set, so an
 * input costs no large allocation.
 */
#define FAKE_VMS	16
static struct vm fake_vms[FAKE_VMS];
static unsigned int nr_fake_vms;

static struct dvm *fake_vm(struct daemon *d, const struct vm_config *cfg,
			   const struct qemu_cmdline *qemu, struct conn *owner)
{
	struct dvm *v;
	struct vm *vm;

	if (nr_fake_vms == FAKE_VMS)
		return NULL;
	v = calloc(1, sizeof(*v));
	if (!v)
		abort();
	vm = &fake_vms[nr_fake_vms++];
	vm->cfg = *cfg;
	vm->state = qemu && qemu->start_paused ? VM_PAUSED : VM_RUNNING;
	vm->stopping = false;
	vm->exit_code = 0;
	vm->mach.acpi = true;
	vm->mach.cfg.ram_bytes = cfg->ram_bytes;
	vm->nr_vcpus = 0;
	vm->stats.populated_pages = vm->stats.demand_faults = 0;
	memset(&vm->discard, 0, sizeof(vm->discard));
	vm->mach.bus.priv[0] = cfg->balloon ? calloc(1, sizeof(struct fake_balloon)) : NULL;
	v->d = d;
	v->vm = vm;
	v->qemu = qemu;
	v->owner = owner;
	v->qmp_fd = v->end_efd = v->console_rd = v->console_wr = -1;
	snprintf(v->qmp_path, sizeof(v->qmp_path), "%s", cfg->qmp_path);
	v->next = d->vms;
	d->vms = v;
	return v;
}

/* Refuses what vm_create would first: a VM without a kernel. */
int daemon_add_vm(struct daemon *d, const struct vm_config *cfg,
		  const struct dvm_opts *opts, struct dvm **out,
		  char *err, size_t errlen)
{
	if (!cfg->kernel[0]) {
		snprintf(err, errlen, "no kernel");
		return -EINVAL;
	}
	*out = fake_vm(d, cfg, opts ? opts->qemu : NULL, opts ? opts->owner : NULL);
	if (!*out) {
		snprintf(err, errlen, "out of fake VMs");
		return -ENOMEM;
	}
	return 0;
}

void daemon_stop_vm(struct dvm *v, const char *reason, int code)
{
	if (!v->vm)
		return;
	if (!v->stop_reason && !v->vm->stopping)
		v->stop_reason = reason;
	v->vm->stopping = true;
	v->vm->exit_code = code;
}

static json_t *fake_report(struct vm **vms, unsigned int nr)
{
	json_t *list = json_array();

	for (unsigned int i = 0; i < nr; i++)
		json_array_append_new(list, json_pack("{s:s, s:I, s:I, s:{s:I}}",
			"name", vms[i]->cfg.name, "populated_bytes", (json_int_t)0,
			"huge_backed_bytes", (json_int_t)0, "migrations", "pages", (json_int_t)0));
	return json_pack("{s:{s:I}, s:o}", "host", "frames", (json_int_t)1024, "vms", list);
}

json_t *daemon_report(struct daemon *d, struct vm **vms, unsigned int nr, bool all, bool map)
{
	return fake_report(vms, nr);
}

json_t *report_build(struct pool *pool, struct vm **vms, unsigned int nr, bool map)
{
	return fake_report(vms, nr);
}

/* --- stand-ins for vm.c, devices and the balloon --- */

const struct device_ops virtio_balloon_device = { .name = "virtio-balloon" };

void *dev_priv(struct machine *m, const struct device_ops *ops)
{
	return ops == &virtio_balloon_device ? m->bus.priv[0] : NULL;
}

enum vm_state vm_get_state(struct vm *vm)
{
	return vm->state;
}

const char *vm_state_name(enum vm_state state)
{
	static const char *const names[] = { "prelaunch", "running", "paused", "shutdown",
					     "internal-error" };

	return (unsigned int)state < 5 ? names[state] : "?";
}

int vm_pause(struct vm *vm, struct vcpu *self)
{
	if (vm->state != VM_RUNNING)
		return -EINVAL;
	vm->state = VM_PAUSED;
	return 0;
}

int vm_resume(struct vm *vm, struct vcpu *self)
{
	if (vm->state != VM_PAUSED)
		return -EINVAL;
	vm->state = VM_RUNNING;
	return 0;
}

int power_button_press(struct machine *m)
{
	return m->acpi ? 0 : -ENODEV;
}

int virtio_balloon_set_target(struct machine *m, uint64_t bytes)
{
	struct fake_balloon *b = dev_priv(m, &virtio_balloon_device);

	if (!b)
		return -ENODEV;
	b->target = bytes < m->cfg.ram_bytes ? bytes : m->cfg.ram_bytes;
	return 0;
}

int virtio_balloon_query(struct machine *m, struct virtio_balloon_info *info, bool refresh)
{
	struct fake_balloon *b = dev_priv(m, &virtio_balloon_device);

	if (!b)
		return -ENODEV;
	memset(info, 0, sizeof(*info));
	info->target_bytes = b->target;
	info->actual_bytes = m->cfg.ram_bytes;
	info->nr_stats = b->nr_stats;
	for (unsigned int i = 0; i < b->nr_stats; i++) {
		info->stat_tag[i] = (uint16_t)(i * 3);	/* some unknown to QEMU */
		info->stat_val[i] = i << 20;
	}
	info->stats_updates = b->nr_stats;
	info->stats_age_ns = 1000000000ULL;
	if (refresh && b->nr_stats < BALLOON_MAX_STATS)
		b->nr_stats++;
	return 0;
}

const char *virtio_balloon_stat_name(unsigned int tag)
{
	static const char *const names[VIRTIO_BALLOON_S_NR] = {
		[VIRTIO_BALLOON_S_MEMFREE] = "stat-free-memory",
		[VIRTIO_BALLOON_S_MEMTOT] = "stat-total-memory",
		[VIRTIO_BALLOON_S_AVAIL] = "stat-available-memory",
	};

	return tag < VIRTIO_BALLOON_S_NR ? names[tag] : NULL;
}

/* --- the harness --- */

static void fake_daemon_reset(void)
{
	struct vm_config plain;

	while (fd_daemon.vms) {
		struct dvm *v = fd_daemon.vms;

		fd_daemon.vms = v->next;
		free(v);
	}
	for (unsigned int i = 0; i < nr_fake_vms; i++) {
		free(fake_vms[i].mach.bus.priv[0]);
		fake_vms[i].mach.bus.priv[0] = NULL;
	}
	nr_fake_vms = 0;
	config_defaults(&plain);
	strcpy(plain.name, "plain");
	strcpy(plain.kernel, "/k");
	plain.balloon = false;
	fake_vm(&fd_daemon, &plain, NULL, NULL);
	fake_vm(&fd_daemon, &libvirt_cmdline.cfg, &libvirt_cmdline, NULL);
}

static void parse_libvirt_cmdline(void)
{
	static char *argv[] = {
		"qemu-system-x86_64", "-name", "guest=probe1,debug-threads=on", "-S",
		"-machine", "pc-i440fx-7.2,usb=off,dump-guest-core=off", "-accel", "kvm",
		"-m", "256", "-smp", "1,sockets=1,cores=1,threads=1",
		"-uuid", "0b3b6bd8-5a2c-4a41-9c0c-3e5a1a8b7c11", "-display", "none",
		"-no-user-config", "-nodefaults",
		"-chardev", "socket,id=charmonitor,fd=31,server=on,wait=off",
		"-mon", "chardev=charmonitor,id=monitor,mode=control", "-no-shutdown",
		"-kernel", "/k", "-append", "console=ttyS0",
		"-chardev", "pty,id=charserial0",
		"-device", "{\"driver\":\"isa-serial\",\"chardev\":\"charserial0\",\"id\":\"serial0\",\"index\":0}",
		"-device", "{\"driver\":\"virtio-balloon-pci\",\"id\":\"balloon0\",\"bus\":\"pci.0\",\"addr\":\"0x2\"}",
		NULL,
	};
	char err[512];

	if (qemu_args_parse(sizeof(argv) / sizeof(argv[0]) - 1, argv, &libvirt_cmdline,
			    err, sizeof(err))) {
		fprintf(stderr, "fuzz_qmp: the libvirt command line is refused: %s\n", err);
		abort();
	}
}

/* One line the daemon wrote: a JSON object of one of QMP's shapes. */
static void check_line(const char *line, size_t len)
{
	json_error_t jerr;
	json_t *msg = json_loadb(line, len, 0, &jerr), *err;
	bool ret, error;

	if (show_replies)
		fprintf(stderr, "%.*s\n", (int)len, line);
	if (!json_is_object(msg))
		abort();
	ret = json_object_get(msg, "return") != NULL;
	err = json_object_get(msg, "error");
	error = err != NULL;
	if (!json_object_get(msg, "QMP") && !json_object_get(msg, "event") && ret == error)
		abort();
	if (error && (!json_is_string(json_object_get(err, "class")) ||
		      !json_is_string(json_object_get(err, "desc"))))
		abort();
	json_decref(msg);
}

/* What the client end has received so far, split into CRLF lines. */
struct reader {
	char buf[1 << 16];
	size_t len;
};

static void read_replies(int fd, struct reader *r)
{
	for (;;) {
		ssize_t n;
		char *eol;

		if (r->len == sizeof(r->buf))
			abort();	/* a line longer than any reply here */
		n = recv(fd, r->buf + r->len, sizeof(r->buf) - r->len, MSG_DONTWAIT);
		if (n <= 0)
			break;
		r->len += (size_t)n;
		while ((eol = memmem(r->buf, r->len, "\r\n", 2))) {
			size_t line = (size_t)(eol - r->buf);

			check_line(r->buf, line);
			memmove(r->buf, eol + 2, r->len - line - 2);
			r->len -= line + 2;
		}
	}
}

/*
 * What daemon_loop does around a connection's input in one round: a VM
 * whose stop was asked for in an earlier round ends first (finish_vm:
 * SHUTDOWN, its own sockets' connections marked dead, the VM gone but
 * the dvm still listed), then the readable connection's input is handled,
 * dead or not, and only then reap() forgets the ended VMs.
 */
static void fake_finish_vms(struct daemon *d)
{
	for (struct dvm *v = d->vms; v; v = v->next) {
		if (v->ended || !v->vm->stopping)
			continue;
		qmp_broadcast_vm(d, v, "SHUTDOWN", json_pack("{s:b, s:s}", "guest", false,
							     "reason", v->stop_reason));
		for (struct conn *c = d->conns; c; c = c->next)
			if (c->vm == v)
				c->dead = true;
		v->vm = NULL;
		v->ended = true;
	}
}

static void fake_reap(struct daemon *d)
{
	for (struct dvm **pv = &d->vms; *pv;) {
		struct dvm *v = *pv;

		if (v->ended) {
			*pv = v->next;
			free(v);
		} else {
			pv = &v->next;
		}
	}
}

/*
 * Each piece of the stream is one round of the daemon's loop. Piece sizes
 * vary with the input's length, so messages get split at many places
 * across inputs while each input replays the same way.
 */
static void run_stream(const uint8_t *data, size_t size, struct dvm *vm)
{
	static struct reader r;
	struct conn c = { .d = &fd_daemon, .vm = vm };
	uint32_t seed = (uint32_t)size * 2654435761U;
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		abort();
	c.fd = sv[0];
	r.len = 0;
	fd_daemon.conns = &c;
	qmp_greet(&c);
	for (size_t off = 0; off < size && !c.dead; ) {
		size_t piece;
		int avail = 0;

		seed = seed * 1103515245U + 12345U;
		piece = 1 + (seed >> 16) % 512;
		if (piece > size - off)
			piece = size - off;
		if (write(sv[1], data + off, piece) != (ssize_t)piece)
			abort();
		off += piece;
		fake_finish_vms(&fd_daemon);
		/* qmp_input reads what is there, up to its buffer's room */
		while (!ioctl(sv[0], FIONREAD, &avail) && avail > 0)
			if (qmp_input(&c) < 0) {
				c.dead = true;
				break;
			}
		read_replies(sv[1], &r);
		fake_reap(&fd_daemon);
	}
	if (r.len)
		abort();	/* a reply not ended by CRLF */
	fd_daemon.conns = NULL;
	close(sv[0]);
	close(sv[1]);
	free(c.buf);
	free(c.out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!libvirt_cmdline.cfg.name[0]) {
		parse_libvirt_cmdline();
		show_replies = getenv("FUZZ_QMP_SHOW") != NULL;
	}
	fake_daemon_reset();
	run_stream(data, size, NULL);
	fake_daemon_reset();
	run_stream(data, size, daemon_find_vm(&fd_daemon, "probe1"));
	return 0;
}
