// SPDX-License-Identifier: GPL-2.0
/*
 * The daemon loop: every socket, every VM's console and end, and the
 * termination signals, in one poll(). VMs run on their own threads and
 * only ever talk to the loop through an eventfd and a console pipe, so no
 * vCPU ever blocks on a client and no client can stall a vCPU.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "devices/virtio/virtio_balloon.h"
#include "vmm/memory/assembler.h"
#include "vmm/control/daemon.h"
#include "vmm/pool_service/pool_client.h"
#include "vmm/pool_service/pool_service.h"
#include "vmm/control/report.h"
#include "vmm/sys/unix_socket.h"

#define CONSOLE_PIPE_SIZE	(1 << 20)
#define DAEMON_TICK_MS		1000


static unsigned int live_conns(const struct daemon *d)
{
	unsigned int n = 0;

	for (const struct conn *c = d->conns; c; c = c->next)
		n += !c->dead;
	return n;
}

static int signals_fd(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

int daemon_init(struct daemon *d, struct pool *pool, const char *sock_path,
		char *err, size_t errlen)
{
	memset(d, 0, sizeof(*d));
	d->pool = pool;
	d->listen_fd = -1;
	d->sigfd = signals_fd();
	if (d->sigfd < 0) {
		snprintf(err, errlen, "signalfd: %s", strerror(errno));
		return -errno;
	}
	if (assembler_start(&d->assembler, 20)) {
		snprintf(err, errlen, "cannot start the 2 MiB assembler");
		return -ENOMEM;
	}
	if (sock_path) {
		d->listen_fd = unix_listen(sock_path, SOCK_STREAM, err, errlen);
		if (d->listen_fd < 0)
			return d->listen_fd;
		snprintf(d->sock_path, sizeof(d->sock_path), "%s", sock_path);
	}
	return 0;
}

json_t *daemon_report(struct daemon *d, struct vm **vms, unsigned int nr, bool all, bool map)
{
	json_t *procs = all ? pool_service_clients_json(d->svc) : json_array(), *r, *p;
	uint32_t owners[POOL_SERVICE_MAX_CLIENTS];
	unsigned int n = 0;
	size_t i;

	json_array_foreach(procs, i, p)
		if (n < POOL_SERVICE_MAX_CLIENTS)
			owners[n++] = (uint32_t)json_integer_value(json_object_get(p, "owner"));
	r = report_build_owners(d->pool, vms, nr, map, owners, n);
	if (!r) {
		json_decref(procs);
		return NULL;
	}
	json_object_set_new(r, "tenants", json_array());
	/*
	 * Each VM process's own report, with the service's count beside it;
	 * a tenant that is no VM (gpmm fragmenting-tenant) is listed apart,
	 * as what it is. Each says which owner it is in the picture's map:
	 * the local VMs come first there, then the processes in this order.
	 */
	json_array_foreach(procs, i, p) {
		bool tenant = !strcmp(json_string_value(json_object_get(p, "kind")) ?: "", "tenant");
		json_t *vm = tenant ? NULL : json_incref(json_object_get(p, "vm"));

		if (tenant) {
			vm = json_pack("{s:O}", "name", json_object_get(p, "name"));
		} else if (!json_is_object(vm)) {
			json_decref(vm);
			vm = json_pack("{s:O, s:s}", "name", json_object_get(p, "name"),
				       "status", "starting");
		}
		json_object_del(p, "vm");
		json_object_set(vm, "process", p);
		json_object_set_new(vm, "map_owner", json_integer((json_int_t)(nr + i)));
		json_array_append_new(json_object_get(r, tenant ? "tenants" : "vms"), vm);
	}
	if (d->svc)
		json_object_set_new(r, "pool_service", pool_service_json(d->svc));
	json_object_set_new(r, "control", json_pack("{s:b, s:I, s:I}", "seccomp", d->sandboxed,
			    "connections", (json_int_t)live_conns(d),
			    "connections_refused", (json_int_t)d->conns_refused));
	json_decref(procs);
	return r;
}

/*
 * QEMU's balloon behaviour, which libvirt relies on: the guest's memory
 * statistics asked for every stats_period_s (qom-set by libvirt), and a
 * BALLOON_CHANGE event when the guest's RAM less the balloon changed
 * (libvirt's "current memory" follows only that event). The query waits
 * for the balloon's lock, which a guest holds only for bounded steps (its
 * chains are served with the lock dropped, virtio_balloon.c): a guest
 * cannot stall this loop, and the other VMs of the daemon with it.
 */
static void balloon_tick(struct daemon *d, struct dvm *v, uint64_t now)
{
	struct virtio_balloon_info info;
	bool refresh = v->stats_period_s && now >= v->next_stats_ns;

	if (!v->vm || v->ended || virtio_balloon_query(&v->vm->mach, &info, refresh))
		return;
	if (refresh)
		v->next_stats_ns = now + v->stats_period_s * 1000000000ULL;
	if (!v->balloon_actual)
		v->balloon_actual = v->vm->cfg.ram_bytes;
	if (info.actual_bytes != v->balloon_actual) {
		v->balloon_actual = info.actual_bytes;
		qmp_broadcast_vm(d, v, "BALLOON_CHANGE",
				 json_pack("{s:I}", "actual", (json_int_t)info.actual_bytes));
	}
}

/*
 * vm.max_map_count caps the mappings of the whole process, and guest RAM
 * scattered on 4 KiB frames takes one per run of adjacent frames: said
 * once, on stderr, when this process holding VMs comes near the cap (not
 * before: most VMs never do, being on 2 MiB blocks, one mapping each).
 */
static void map_count_tick(struct daemon *d)
{
	char msg[768];

	if (d->map_count_warned || !d->vms)
		return;
	if (report_map_count_warning(report_process_mappings(), report_max_map_count(), msg,
				     sizeof(msg))) {
		fprintf(stderr, "gpmm: warning: %s\n", msg);
		d->map_count_warned = true;
	}
}

/*
 * Once every DAEMON_TICK_MS: a VM process tells the pool service how its
 * VM is (the service's reports show it), the balloons and the process's
 * mappings are looked at, and the metrics file is rewritten (written
 * beside and renamed, so a scraper never reads half of it).
 */
static void daemon_tick(struct daemon *d, uint64_t now)
{
	for (struct dvm *v = d->vms; v; v = v->next)
		balloon_tick(d, v, now);
	map_count_tick(d);
	if (d->pool->client) {
		for (struct dvm *v = d->vms; v; v = v->next) {
			json_t *r = v->ended ? NULL : report_build(d->pool, &v->vm, 1, false);
			json_t *vm = json_array_get(json_object_get(r, "vms"), 0);
			char *text;

			if (vm) {
				json_object_set_new(vm, "cached_frames", json_integer(
					(json_int_t)pool_client_cached(d->pool->client)));
				text = json_dumps(vm, JSON_COMPACT);
				if (text)
					pool_client_report(d->pool->client, text);
				free(text);
			}
			json_decref(r);
		}
	}
	if (d->metrics_path[0]) {
		struct vm *vms[256];
		unsigned int nr = 0;
		char tmp[PATH_MAX + 8];
		json_t *r;
		FILE *f;

		for (struct dvm *v = d->vms; v && nr < 256; v = v->next)
			if (!v->ended)
				vms[nr++] = v->vm;
		r = daemon_report(d, vms, nr, true, false);
		snprintf(tmp, sizeof(tmp), "%s.tmp", d->metrics_path);
		f = r ? fopen(tmp, "w") : NULL;
		if (f) {
			report_write_prometheus(r, f);
			if (fclose(f) == 0)
				rename(tmp, d->metrics_path);
		}
		json_decref(r);
	}
}

struct dvm *daemon_find_vm(struct daemon *d, const char *name)
{
	for (struct dvm *v = d->vms; v; v = v->next)
		if (!v->ended && !strcmp(v->vm->cfg.name, name))
			return v;
	return NULL;
}

/* vCPU side: never blocks; a full pipe drops output and counts it. */
static void console_to_pipe(void *opaque, const char *buf, size_t len)
{
	struct dvm *v = opaque;

	if (write(v->console_wr, buf, len) != (ssize_t)len)
		__atomic_add_fetch(&v->console_dropped, len, __ATOMIC_RELAXED);
}

static void vm_ended(struct vm *vm, void *opaque)
{
	struct dvm *v = opaque;
	uint64_t one = 1;

	if (write(v->end_efd, &one, sizeof(one)) < 0)
		abort();	/* an eventfd write cannot fail but on overflow */
}

static int dvm_open_channels(struct dvm *v, char *err, size_t errlen)
{
	int p[2];

	v->end_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (v->end_efd < 0 || pipe2(p, O_CLOEXEC | O_NONBLOCK)) {
		snprintf(err, errlen, "cannot make the VM's channels: %s", strerror(errno));
		return -errno;
	}
	fcntl(p[1], F_SETPIPE_SZ, CONSOLE_PIPE_SIZE);
	v->console_rd = p[0];
	v->console_wr = p[1];
	return 0;
}

static void dvm_free(struct dvm *v)
{
	if (v->qmp_fd >= 0) {
		close(v->qmp_fd);
		if (v->qmp_path[0])
			unlink(v->qmp_path);
	}
	if (v->end_efd >= 0)
		close(v->end_efd);
	if (v->console_rd >= 0)
		close(v->console_rd);
	if (v->console_wr >= 0)
		close(v->console_wr);
	console_close(&v->con);
	free(v);
}

/* Make the VM of @cfg and run it in @v (again, after a guest reset). */
static int dvm_start(struct daemon *d, struct dvm *v, const struct vm_config *cfg,
		     bool paused, char *err, size_t errlen)
{
	int ret = vm_create(cfg, d->pool, &v->vm, err, errlen);

	if (ret)
		return ret;
	v->vm->seccomp = d->sandboxed;
	v->vm->console = console_to_pipe;
	v->vm->console_opaque = v;
	v->vm->on_end = vm_ended;
	v->vm->on_end_opaque = v;
	/* the assembler first: a VM it cannot serve is refused, not run half */
	ret = assembler_add(d->assembler, v->vm);
	if (ret)
		snprintf(err, errlen, "the 2 MiB assembler serves no more VMs (%s)",
			 strerror(-ret));
	else if ((ret = paused ? vm_start_paused(v->vm) : vm_start(v->vm))) {
		assembler_remove(d->assembler, v->vm);
		snprintf(err, errlen, "cannot start the VM: %s", strerror(-ret));
	}
	if (ret) {
		vm_destroy(v->vm);
		v->vm = NULL;
	}
	return ret;
}

static void announce_console(const struct dvm *v, const struct vm_config *cfg)
{
	if (!strcmp(cfg->console, "pty"))
		fprintf(stderr, "gpmm: VM %s: console on %s\n", cfg->name, v->con.path);
	else if (!strncmp(cfg->console, "socket:", 7))
		fprintf(stderr, "gpmm: VM %s: console on socket %s\n", cfg->name, v->con.path);
}

int daemon_add_vm(struct daemon *d, const struct vm_config *cfg,
		  const struct dvm_opts *opts, struct dvm **out,
		  char *err, size_t errlen)
{
	static const struct dvm_opts none = { .qmp_listen_fd = -1, .console_log_fd = -1 };
	struct dvm *v = calloc(1, sizeof(*v));
	int ret;

	if (!v)
		return -ENOMEM;
	if (!opts)
		opts = &none;
	v->d = d;
	v->qmp_fd = v->end_efd = v->console_rd = v->console_wr = -1;
	v->owner = opts->owner;
	v->foreground = opts->foreground;
	v->qemu = opts->qemu;
	v->con.out_fd = v->con.in_fd = v->con.listen_fd = v->con.pty_slave = v->con.log_fd = -1;
	ret = dvm_open_channels(v, err, errlen);
	if (!ret && opts->qmp_listen_fd >= 0) {
		v->qmp_fd = opts->qmp_listen_fd;	/* inherited: not ours to unlink */
	} else if (!ret && cfg->qmp_path[0]) {
		v->qmp_fd = unix_listen(cfg->qmp_path, SOCK_STREAM, err, errlen);
		if (v->qmp_fd < 0)
			ret = v->qmp_fd;
		snprintf(v->qmp_path, sizeof(v->qmp_path), "%s", cfg->qmp_path);
	}
	if (!ret)
		ret = console_open(&v->con, cfg->console, v->foreground, err, errlen);
	if (!ret && opts->console_log_fd >= 0)
		ret = console_set_log(&v->con, opts->console_log_fd, err, errlen);
	if (!ret)
		ret = dvm_start(d, v, cfg, opts->start_paused, err, errlen);
	if (ret) {
		if (v->qmp_fd < 0)
			v->qmp_path[0] = '\0';
		dvm_free(v);
		return ret;
	}
	announce_console(v, cfg);
	v->next = d->vms;
	d->vms = v;
	if (out)
		*out = v;
	return 0;
}

static void forward_console(struct daemon *d, struct dvm *v)
{
	char buf[4096];
	ssize_t n;

	while ((n = read(v->console_rd, buf, sizeof(buf))) > 0) {
		console_out(&v->con, buf, (size_t)n);
		if (v->owner)
			qmp_event(v->owner, "GPMM_CONSOLE",
				  json_pack("{s:s%}", "text", buf, (size_t)n));
	}
}

/*
 * Keys for the guest. What its UART cannot take yet waits here, and the
 * console is not read again until the guest has taken it all: typed or
 * pasted input is never dropped. The operator leaving (Ctrl-A x) stops
 * the VM like QMP quit does.
 */
static void deliver_keys(struct dvm *v)
{
	if (!v->vm || v->ended || v->keys_off == v->keys_len)
		return;
	v->keys_off += machine_console_input(&v->vm->mach, v->keys + v->keys_off, v->keys_len - v->keys_off);
	if (v->keys_off == v->keys_len)
		v->keys_off = v->keys_len = 0;
}

static void console_keys(struct dvm *v)
{
	ssize_t n = console_read(&v->con, v->keys, sizeof(v->keys));

	if (!v->vm || v->ended)
		return;
	if (n > 0) {
		v->keys_off = 0;
		v->keys_len = (size_t)n;
		deliver_keys(v);
	} else if (n == -ECANCELED) {
		vm_request_stop(v->vm, VM_SHUTDOWN, 0);
	}
}

/* QMP SHUTDOWN's data, QEMU's reasons first, then gpmm's own fields. */
static json_t *end_json(const struct dvm *v)
{
	const struct vm *vm = v->vm;
	const char *reason = v->stop_reason ? v->stop_reason :
			     vm->state == VM_SHUTDOWN ? "guest-shutdown" : "guest-panic";

	return json_pack("{s:b, s:s, s:i, s:s, s:s}", "guest", !strncmp(reason, "guest-", 6),
			 "reason", reason, "exit-code", vm->exit_code,
			 "status", vm_state_name(vm->state), "report", vm->report);
}

/*
 * Only the first reason counts, as the VM keeps only the first stop
 * request: a guest that powered off before the signal keeps its own.
 */
void daemon_stop_vm(struct dvm *v, const char *reason, int code)
{
	if (!v->vm)
		return;
	if (!v->stop_reason && !vm_is_stopping(v->vm))
		v->stop_reason = reason;
	vm_request_stop(v->vm, VM_SHUTDOWN, code);
}

/* The pool once the VM is gone: one line (the tables came with the report). */
static void print_pool(struct daemon *d, const char *when)
{
	struct mm_stats st;

	if (d->pool->mm)
		mm_drain_all(d->pool->mm);
	if (pool_stats(d->pool, &st))
		return;
	fprintf(stderr, "pool %s: %.1f of %.0f MiB free (%llu of %llu 4 KiB frames), %.1f%% of "
		"it in pieces under 2 MiB (unusable index(9) %.3f)\n", when,
		(double)(st.free_pages << MM_PAGE_SHIFT) / (1 << 20),
		(double)(st.frames << MM_PAGE_SHIFT) / (1 << 20),
		(unsigned long long)st.free_pages, (unsigned long long)st.frames,
		100.0 * mm_unusable_index(&st, MM_PAGEBLOCK_ORDER),
		mm_unusable_index(&st, MM_PAGEBLOCK_ORDER));
}

static void print_vm_stats(struct vm *vm)
{
	const struct vm_stats *s = &vm->stats;

	fprintf(stderr, "\nVM %s ended: %s, exit code %d; %llu demand faults (%.1f us host time "
		"each%s), %llu exits\n", vm->cfg.name, vm_state_name(vm->state), vm->exit_code,
		(unsigned long long)s->demand_faults,
		s->demand_faults ? s->fault_ns / 1e3 / (double)s->demand_faults : 0.0,
		vm->cfg.prefault ? ", prefaulted" : "", (unsigned long long)s->exits);
}

/*
 * The guest reset itself: the old VM gives its frames back and a new one
 * boots from the same configuration, keeping the VM's sockets, console
 * and clients. If the new one cannot start, the VM ends with the reason.
 */
static void restart_vm(struct daemon *d, struct dvm *v)
{
	struct vm_config cfg = v->vm->cfg;
	char err[512];
	int ret;

	assembler_remove(d->assembler, v->vm);
	vm_destroy(v->vm);
	v->vm = NULL;
	ret = dvm_start(d, v, &cfg, false, err, sizeof(err));
	if (!ret) {
		v->resets++;
		if (v->foreground || d->verbose)
			fprintf(stderr, "gpmm: VM %s reset by the guest: restarted (%u)\n",
				cfg.name, v->resets);
		qmp_broadcast_vm(d, v, "RESET", json_pack("{s:b, s:s}", "guest", true,
							  "reason", "guest-reset"));
		return;
	}
	fprintf(stderr, "gpmm: VM %s could not restart after a reset: %s\n", cfg.name, err);
	qmp_broadcast_vm(d, v, "SHUTDOWN", json_pack("{s:b, s:s, s:i, s:s, s:s}",
		"guest", false, "reason", "host-error", "exit-code", VM_FAIL_EXIT_CODE,
		"status", "internal-error", "report", err));
	d->last_exit_code = VM_FAIL_EXIT_CODE;
	for (struct conn *c = d->conns; c; c = c->next)
		if (c->vm == v)
			c->dead = true;
	v->ended = true;
}

/* The VM's threads are done: report, give its frames back, forget it. */
static void finish_vm(struct daemon *d, struct dvm *v)
{
	struct vm *vm = v->vm;
	uint64_t n;

	if (read(v->end_efd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		return;
	vm_wait(vm);
	forward_console(d, v);
	if (vm->reboot && !d->quitting && !v->reset_ends) {
		restart_vm(d, v);
		return;
	}
	if (vm->reboot && !v->stop_reason)
		v->stop_reason = "guest-reset";
	if (vm->state == VM_FAILED && (v->foreground || d->verbose))
		fprintf(stderr, "gpmm: VM %s stopped: %s", vm->cfg.name, vm->report);
	if (v->console_dropped)
		fprintf(stderr, "gpmm: VM %s: %llu console bytes dropped\n",
			vm->cfg.name, (unsigned long long)v->console_dropped);
	qmp_broadcast_vm(d, v, "SHUTDOWN", end_json(v));
	d->last_exit_code = vm->exit_code;
	for (struct conn *c = d->conns; c; c = c->next)
		if (c->vm == v)
			c->dead = true;
	assembler_remove(d->assembler, vm);
	if (d->print_stats) {
		json_t *r = report_build(d->pool, &vm, 1, false);

		print_vm_stats(vm);
		fprintf(stderr, "report, the VM's memory still held (docs/report.md):\n");
		if (r)
			report_print_text(r, stderr);
		if (r && d->print_tables)
			report_print_tables(r, stderr);
		json_decref(r);
	}
	vm_destroy(vm);
	if (d->print_stats)
		print_pool(d, "after the VM gave its frames back");
	v->vm = NULL;
	v->ended = true;
}

/*
 * Each connection may hold up to a message and a backlog of replies
 * (qmp.c's limits); the cap on connections bounds the sum. A client past
 * it is closed at once and counted.
 */
static void accept_conn(struct daemon *d, int lfd, struct dvm *v)
{
	struct conn *c;
	int fd = unix_accept(lfd, UNIX_NO_GROUP);

	if (fd < 0) {
		d->conns_refused += fd != -EAGAIN && fd != -EINTR;
		return;
	}
	if (live_conns(d) >= DAEMON_MAX_CONNS) {
		d->conns_refused++;
		close(fd);
		return;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return;
	}
	c->d = d;
	c->fd = fd;
	c->vm = v;
	c->next = d->conns;
	d->conns = c;
	qmp_greet(c);
}

/* A VM owned by a connection stops when its owner goes away. */
static void reap(struct daemon *d)
{
	for (struct conn **pc = &d->conns; *pc;) {
		struct conn *c = *pc;

		if (!c->dead) {
			pc = &c->next;
			continue;
		}
		for (struct dvm *v = d->vms; v; v = v->next) {
			if (v->owner != c)
				continue;
			v->owner = NULL;
			if (v->vm)
				vm_request_stop(v->vm, VM_SHUTDOWN, 0);
		}
		*pc = c->next;
		close(c->fd);
		free(c->buf);
		free(c->out);
		free(c);
	}
	for (struct dvm **pv = &d->vms; *pv;) {
		struct dvm *v = *pv;

		if (v->ended) {
			*pv = v->next;
			dvm_free(v);
		} else {
			pv = &v->next;
		}
	}
}

static void on_signal(struct daemon *d)
{
	struct signalfd_siginfo si;

	while (read(d->sigfd, &si, sizeof(si)) == sizeof(si)) {
		d->quitting = true;
		for (struct dvm *v = d->vms; v; v = v->next)
			daemon_stop_vm(v, "host-signal", 128 + (int)si.ssi_signo);
	}
}

enum { SRC_SIG, SRC_LISTEN, SRC_VM_QMP, SRC_VM_END, SRC_VM_CONSOLE, SRC_CONN,
       SRC_VM_KEYS, SRC_VM_CONSOLE_ACCEPT };

struct source {
	int kind;
	void *ptr;
};

static size_t build_poll(struct daemon *d, struct pollfd *pfd, struct source *src,
			 size_t max)
{
	size_t n = 0;

#define ADD(fd_, kind_, ptr_) do { if (n < max) { \
	pfd[n] = (struct pollfd){ .fd = (fd_), .events = POLLIN }; \
	src[n++] = (struct source){ (kind_), (ptr_) }; } } while (0)

	ADD(d->sigfd, SRC_SIG, NULL);
	if (d->listen_fd >= 0 && !d->quitting)
		ADD(d->listen_fd, SRC_LISTEN, NULL);
	for (struct dvm *v = d->vms; v; v = v->next) {
		if (v->ended)
			continue;
		ADD(v->console_rd, SRC_VM_CONSOLE, v);
		ADD(v->end_efd, SRC_VM_END, v);
		if (v->qmp_fd >= 0)
			ADD(v->qmp_fd, SRC_VM_QMP, v);
		if (v->con.in_fd >= 0 && v->keys_len == 0)
			ADD(v->con.in_fd, SRC_VM_KEYS, v);
		if (v->con.listen_fd >= 0)
			ADD(v->con.listen_fd, SRC_VM_CONSOLE_ACCEPT, v);
	}
	for (struct conn *c = d->conns; c; c = c->next) {
		ADD(c->fd, SRC_CONN, c);
		if (c->out_len && n)
			pfd[n - 1].events |= POLLOUT;
	}
#undef ADD
	return n;
}

static bool done(const struct daemon *d)
{
	return !d->vms && (d->exit_when_idle || d->quitting);
}

int daemon_loop(struct daemon *d)
{
	while (!done(d)) {
		size_t max = 8;
		struct pollfd *pfd;
		struct source *src;
		int wait_ms = DAEMON_TICK_MS;
		uint64_t now = vm_now_ns();
		size_t n;

		/* keys the guest has not taken yet: offer them again soon */
		for (struct dvm *v = d->vms; v; v = v->next) {
			deliver_keys(v);
			if (v->keys_len)
				wait_ms = 20;
		}
		if (now >= d->next_tick_ns) {
			daemon_tick(d, now);
			d->next_tick_ns = now + DAEMON_TICK_MS * 1000000ULL;
		}

		for (struct dvm *v = d->vms; v; v = v->next)
			max += 5;
		for (struct conn *c = d->conns; c; c = c->next)
			max++;
		pfd = calloc(max, sizeof(*pfd));
		src = calloc(max, sizeof(*src));
		if (!pfd || !src)
			return -ENOMEM;
		n = build_poll(d, pfd, src, max);
		if (poll(pfd, n, wait_ms) < 0 && errno != EINTR) {
			free(pfd);
			free(src);
			return -errno;
		}
		/* consoles first, so a VM's last words precede its end */
		for (int pass = 0; pass < 2; pass++) {
			for (size_t i = 0; i < n; i++) {
				bool console = src[i].kind == SRC_VM_CONSOLE;

				if (!pfd[i].revents || console != (pass == 0))
					continue;
				switch (src[i].kind) {
				case SRC_SIG: on_signal(d); break;
				case SRC_LISTEN: accept_conn(d, d->listen_fd, NULL); break;
				case SRC_VM_QMP: accept_conn(d, ((struct dvm *)src[i].ptr)->qmp_fd, src[i].ptr); break;
				case SRC_VM_CONSOLE: forward_console(d, src[i].ptr); break;
				case SRC_VM_END: finish_vm(d, src[i].ptr); break;
				case SRC_VM_KEYS: console_keys(src[i].ptr); break;
				case SRC_VM_CONSOLE_ACCEPT: console_accept(&((struct dvm *)src[i].ptr)->con); break;
				case SRC_CONN:
					if ((pfd[i].revents & POLLOUT) && qmp_flush(src[i].ptr) < 0)
						break;
					if ((pfd[i].revents & ~POLLOUT) && qmp_input(src[i].ptr) < 0)
						((struct conn *)src[i].ptr)->dead = true;
					break;
				}
			}
		}
		free(pfd);
		free(src);
		reap(d);
	}
	return d->last_exit_code;
}

void daemon_fini(struct daemon *d)
{
	assembler_stop(d->assembler);
	d->assembler = NULL;
	for (struct dvm *v = d->vms; v; v = v->next)
		if (v->vm)
			vm_request_stop(v->vm, VM_SHUTDOWN, 0);
	for (struct dvm *v = d->vms; v; v = v->next)
		if (v->vm) {
			vm_destroy(v->vm);
			v->vm = NULL;
			v->ended = true;
		}
	for (struct conn *c = d->conns; c; c = c->next)
		c->dead = true;
	reap(d);
	if (d->listen_fd >= 0) {
		close(d->listen_fd);
		unlink(d->sock_path);
	}
	if (d->sigfd >= 0)
		close(d->sigfd);
}
