// SPDX-License-Identifier: GPL-2.0
/*
 * QMP's wire protocol (greeting, capabilities negotiation, commands with
 * optional ids, events) and gpmm's commands, as a table. Messages are
 * JSON values, one after another on the stream; the framer (qmp_wire.c)
 * finds where each ends, scanning every byte once, and jansson decodes it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "devices/device.h"
#include "devices/legacy/power.h"
#include "devices/virtio/virtio_balloon.h"
#include "vmm/core/config.h"
#include "vmm/control/daemon.h"
#include "vmm/control/qmp_cmd.h"
#include "vmm/control/qmp_wire.h"
#include "vmm/control/report.h"
#include "vmm/memory/guest_mem.h"

#define QMP_MAX_MESSAGE	(1 << 20)
#define QMP_MAX_PENDING	(4 << 20)	/* unsent output before a client is dropped */

json_t *qmp_fail(struct qmp_err *e, const char *cls, const char *fmt, ...)
{
	va_list ap;

	e->cls = cls;
	va_start(ap, fmt);
	vsnprintf(e->desc, sizeof(e->desc), fmt, ap);
	va_end(ap);
	return NULL;
}

/*
 * Output never blocks the daemon's one loop: what the socket does not take
 * now waits in the connection's buffer and goes out when poll says it can
 * (qmp_flush). A client that lets more than QMP_MAX_PENDING pile up (it
 * stopped reading, while a VM's console keeps writing) is dropped: one
 * slow reader must not stall every VM's console and end handling, nor
 * grow the daemon's memory without bound.
 */
int qmp_flush(struct conn *c)
{
	size_t off = 0;

	while (off < c->out_len) {
		ssize_t n = send(c->fd, c->out + off, c->out_len - off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n <= 0) {
			c->dead = true;
			return -EPIPE;
		}
		off += (size_t)n;
	}
	memmove(c->out, c->out + off, c->out_len - off);
	c->out_len -= off;
	return 0;
}

static int queue_output(struct conn *c, const char *s, size_t len)
{
	if (c->out_len + len > QMP_MAX_PENDING) {
		c->dead = true;
		return -ENOBUFS;
	}
	if (c->out_len + len > c->out_cap) {
		size_t cap = c->out_cap ? c->out_cap : 8192;
		char *out;

		while (cap < c->out_len + len)
			cap *= 2;
		out = realloc(c->out, cap);
		if (!out) {
			c->dead = true;
			return -ENOMEM;
		}
		c->out = out;
		c->out_cap = cap;
	}
	memcpy(c->out + c->out_len, s, len);
	c->out_len += len;
	return 0;
}

void qmp_send(struct conn *c, json_t *msg)
{
	char *s = json_dumps(msg, JSON_COMPACT);

	json_decref(msg);
	if (s && !c->dead && !queue_output(c, s, strlen(s)) && !queue_output(c, "\r\n", 2))
		qmp_flush(c);
	free(s);
}

void qmp_event(struct conn *c, const char *name, json_t *data)
{
	struct timeval tv;
	json_t *ev;

	gettimeofday(&tv, NULL);
	ev = json_pack("{s:s, s:{s:I, s:I}}", "event", name, "timestamp",
		       "seconds", (json_int_t)tv.tv_sec,
		       "microseconds", (json_int_t)tv.tv_usec);
	if (data)
		json_object_set(ev, "data", data);
	qmp_send(c, ev);
}

void qmp_broadcast_vm(struct daemon *d, struct dvm *dvm, const char *name,
		      json_t *data)
{
	for (struct conn *c = d->conns; c; c = c->next)
		if (c->negotiated && (c->vm == dvm || dvm->owner == c))
			qmp_event(c, name, data);
	json_decref(data);
}

void qmp_greet(struct conn *c)
{
	qmp_send(c, json_pack("{s:{s:{s:{s:i, s:i, s:i}, s:s}, s:[]}}",
		"QMP", "version", "qemu", "major", 7, "minor", 2, "micro", 0,
		"package", "gpmm", "capabilities"));
}

struct dvm *qmp_target_vm(struct conn *c, json_t *args, struct qmp_err *e)
{
	const char *name = json_string_value(json_object_get(args, "vm"));
	struct dvm *v;

	if (c->vm)
		return c->vm;
	if (name) {
		v = daemon_find_vm(c->d, name);
		if (!v)
			qmp_fail(e, "DeviceNotFound", "no VM named '%s'", name);
		return v;
	}
	if (c->d->vms && !c->d->vms->next)
		return c->d->vms;
	qmp_fail(e, "GenericError", c->d->vms ? "several VMs: say which with \"vm\""
					 : "no VM is running");
	return NULL;
}

/*
 * qmp_target_vm for a command that needs the VM itself. A VM that has ended
 * stays listed until the end of the daemon loop's round (finish_vm, then
 * reap), and a connection to its own socket may still have input handled
 * in that round: such a dvm has no vm.
 */
struct dvm *qmp_target_live(struct conn *c, json_t *args, struct qmp_err *e)
{
	struct dvm *v = qmp_target_vm(c, args, e);

	if (v && !v->vm) {
		qmp_fail(e, "GenericError", "the VM has ended");
		return NULL;
	}
	return v;
}

static json_t *cmd_capabilities(struct conn *c, json_t *args, struct qmp_err *e)
{
	if (c->negotiated)
		return qmp_fail(e, "CommandNotFound",
			    "Capabilities negotiation is already complete, command ignored");
	c->negotiated = true;
	return json_object();
}

static json_t *cmd_query_status(struct conn *c, json_t *args, struct qmp_err *e)
{
	struct dvm *v = qmp_target_live(c, args, e);
	enum vm_state s;

	if (!v)
		return NULL;
	s = vm_get_state(v->vm);
	return json_pack("{s:b, s:b, s:s}", "running", s == VM_RUNNING,
			 "singlestep", 0, "status", vm_state_name(s));
}

static json_t *cmd_stop(struct conn *c, json_t *args, struct qmp_err *e)
{
	struct dvm *v = qmp_target_live(c, args, e);

	if (!v)
		return NULL;
	if (vm_pause(v->vm, NULL))
		return qmp_fail(e, "GenericError", "VM '%s' is %s, not running",
			    v->vm->cfg.name, vm_state_name(vm_get_state(v->vm)));
	qmp_broadcast_vm(c->d, v, "STOP", NULL);
	return json_object();
}

static json_t *cmd_cont(struct conn *c, json_t *args, struct qmp_err *e)
{
	struct dvm *v = qmp_target_live(c, args, e);
	enum vm_state s;

	if (!v)
		return NULL;
	s = vm_get_state(v->vm);
	if (s == VM_RUNNING)
		return json_object();
	if (vm_resume(v->vm, NULL))
		return qmp_fail(e, "GenericError", "VM '%s' is %s and cannot continue",
			    v->vm->cfg.name, vm_state_name(s));
	qmp_broadcast_vm(c->d, v, "RESUME", NULL);
	return json_object();
}

static json_t *cmd_quit(struct conn *c, json_t *args, struct qmp_err *e)
{
	struct dvm *v = qmp_target_vm(c, args, e);

	if (!v)
		return NULL;
	daemon_stop_vm(v, "host-qmp-quit", 0);
	return json_object();
}

/*
 * The guest's ACPI power button (a Linux guest powers off as from its own
 * `poweroff`). A flat payload has no ACPI and no button: as with QEMU,
 * the request is only the event, and the guest may ignore it.
 */
static json_t *cmd_powerdown(struct conn *c, json_t *args, struct qmp_err *e)
{
	struct dvm *v = qmp_target_vm(c, args, e);
	int ret;

	if (!v)
		return NULL;
	ret = v->vm ? power_button_press(&v->vm->mach) : -ENODEV;
	if (ret && ret != -ENODEV)
		return qmp_fail(e, "GenericError", "cannot press the power button: %s", strerror(-ret));
	qmp_broadcast_vm(c->d, v, "POWERDOWN", NULL);
	return json_object();
}

static json_t *cmd_memory_summary(struct conn *c, json_t *args, struct qmp_err *e)
{
	struct dvm *v = qmp_target_live(c, args, e);

	if (!v)
		return NULL;
	return json_pack("{s:I, s:I}", "base-memory", (json_int_t)v->vm->cfg.ram_bytes,
			 "plugged-memory", (json_int_t)0);
}

static json_t *cmd_query_name(struct conn *c, json_t *args, struct qmp_err *e)
{
	struct dvm *v = qmp_target_live(c, args, e);

	return v ? json_pack("{s:s}", "name", v->vm->cfg.name) : NULL;
}

static json_t *cmd_query_version(struct conn *c, json_t *args, struct qmp_err *e)
{
	return json_pack("{s:{s:i, s:i, s:i}, s:s}", "qemu", "major", 7, "minor", 2,
			 "micro", 0, "package", "gpmm");
}

static json_t *vm_json(struct dvm *v)
{
	struct vm *vm = v->vm;

	return json_pack("{s:s, s:s, s:I, s:i, s:I, s:I, s:s}",
		"name", vm->cfg.name, "status", vm_state_name(vm_get_state(vm)),
		"ram-bytes", (json_int_t)vm->cfg.ram_bytes, "cpus", (int)vm->nr_vcpus,
		"populated-bytes", (json_int_t)(vm_populated_pages(vm) << MM_PAGE_SHIFT),
		"demand-faults", (json_int_t)__atomic_load_n(&vm->stats.demand_faults, __ATOMIC_RELAXED),
		"qmp", v->qmp_path);
}

static json_t *cmd_query_vms(struct conn *c, json_t *args, struct qmp_err *e)
{
	json_t *arr = json_array();

	for (struct dvm *v = c->d->vms; v; v = v->next)
		if (!v->ended)
			json_array_append_new(arr, vm_json(v));
	return arr;
}

/* The host-wide half of the fragmentation report. */
static json_t *cmd_query_pool(struct conn *c, json_t *args, struct qmp_err *e)
{
	json_t *r = report_build(c->d->pool, NULL, 0, false), *host;

	if (!r)
		return qmp_fail(e, "GenericError", "out of memory");
	host = json_incref(json_object_get(r, "host"));
	json_decref(r);
	return host;
}

/* Every argument is a config key; numbers and booleans are spelled out. */
static int args_to_config(json_t *args, struct vm_config *cfg, char *err,
			  size_t errlen)
{
	const char *key;
	json_t *val;

	config_defaults(cfg);
	json_object_foreach(args, key, val) {
		char buf[64];
		const char *s = buf;
		int ret;

		if (json_is_string(val))
			s = json_string_value(val);
		else if (json_is_integer(val))	/* sizes on the wire are bytes */
			snprintf(buf, sizeof(buf), "%lld%s", (long long)json_integer_value(val),
				 config_key_is_size(key) ? "B" : "");
		else if (json_is_boolean(val))
			snprintf(buf, sizeof(buf), "%s", json_is_true(val) ? "yes" : "no");
		else {
			snprintf(err, errlen, "argument '%s' must be a string, number or boolean", key);
			return -EINVAL;
		}
		ret = config_set(cfg, key, s, err, errlen);
		if (ret)
			return ret;
	}
	config_finish(cfg);
	return 0;
}

/*
 * `gpmm run --daemon`: the VM belongs to this connection and lives as long
 * as it does; its console and end arrive here as events.
 */
static json_t *cmd_vm_create(struct conn *c, json_t *args, struct qmp_err *e)
{
	struct vm_config cfg;
	struct dvm *v;
	char err[512];

	if (!json_is_object(args))
		return qmp_fail(e, "GenericError", "gpmm-vm-create needs arguments");
	if (args_to_config(args, &cfg, err, sizeof(err)))
		return qmp_fail(e, "GenericError", "%s", err);
	if (daemon_find_vm(c->d, cfg.name))
		return qmp_fail(e, "GenericError", "a VM named '%s' exists already", cfg.name);
	if (daemon_add_vm(c->d, &cfg, &(struct dvm_opts){ .owner = c, .qmp_listen_fd = -1,
			  .console_log_fd = -1 }, &v, err, sizeof(err)))
		return qmp_fail(e, "GenericError", "%s%s", err,
				strstr(err, strerror(EACCES)) ? " (gpmm daemon opens files only in "
				"its run directory and the directories given with --allow DIR)" : "");
	return json_pack("{s:s, s:s}", "name", cfg.name, "qmp", v->qmp_path);
}

/* The fragmentation report: this socket's VM, the named one, or all. */
static json_t *cmd_query_fragmentation(struct conn *c, json_t *args, struct qmp_err *e)
{
	const char *name = json_string_value(json_object_get(args, "vm"));
	bool map = json_is_true(json_object_get(args, "map"));
	struct vm *vms[256];
	unsigned int nr = 0;
	json_t *r;

	if (c->vm || name) {
		struct dvm *v = qmp_target_live(c, args, e);

		if (!v)
			return NULL;
		vms[nr++] = v->vm;
	} else {
		for (struct dvm *v = c->d->vms; v && nr < 256; v = v->next)
			if (!v->ended)
				vms[nr++] = v->vm;
	}
	r = daemon_report(c->d, vms, nr, !c->vm && !name, map);
	return r ? r : qmp_fail(e, "GenericError", "cannot read the pool");
}

/*
 * QEMU's balloon commands, spelled as QEMU spells them (qapi/machine.json):
 * `balloon` {"value": bytes of guest RAM wanted}, `query-balloon` ->
 * {"actual": bytes}; errors in QEMU's order and words. `query-gpmm-balloon`
 * adds what gpmm knows: the guest's latest stats (and asks it for fresh
 * ones, seen by the next query), and what the balloon gave back.
 */
static struct dvm *balloon_vm(struct conn *c, json_t *args, struct qmp_err *e)
{
	struct dvm *v = qmp_target_live(c, args, e);

	if (v && !dev_priv(&v->vm->mach, &virtio_balloon_device)) {
		qmp_fail(e, "DeviceNotActive", "No balloon device has been activated");
		return NULL;
	}
	return v;
}

static json_t *cmd_balloon(struct conn *c, json_t *args, struct qmp_err *e)
{
	json_t *value = json_object_get(args, "value");
	struct dvm *v;

	if (!value)
		return qmp_fail(e, "GenericError", "Parameter 'value' is missing");
	if (!json_is_integer(value))
		return qmp_fail(e, "GenericError", "Invalid parameter type for 'value', expected: integer");
	v = balloon_vm(c, args, e);
	if (!v)
		return NULL;
	if (json_integer_value(value) <= 0)
		return qmp_fail(e, "GenericError", "Parameter 'target' expects a size");
	if (virtio_balloon_set_target(&v->vm->mach, (uint64_t)json_integer_value(value)))
		return qmp_fail(e, "DeviceNotActive", "No balloon device has been activated");
	return json_object();
}

static json_t *cmd_query_balloon(struct conn *c, json_t *args, struct qmp_err *e)
{
	struct virtio_balloon_info info;
	struct dvm *v = balloon_vm(c, args, e);

	if (!v)
		return NULL;
	if (virtio_balloon_query(&v->vm->mach, &info, false))
		return qmp_fail(e, "DeviceNotActive", "No balloon device has been activated");
	return json_pack("{s:I}", "actual", (json_int_t)info.actual_bytes);
}

static json_t *cmd_query_gpmm_balloon(struct conn *c, json_t *args, struct qmp_err *e)
{
	struct virtio_balloon_info info;
	struct dvm *v = balloon_vm(c, args, e);
	const struct vm_discard_stats *d;
	json_t *stats, *r;

	if (!v)
		return NULL;
	if (virtio_balloon_query(&v->vm->mach, &info, true))
		return qmp_fail(e, "DeviceNotActive", "No balloon device has been activated");
	d = &v->vm->discard;
	stats = json_object();
	for (unsigned int i = 0; i < info.nr_stats; i++) {
		const char *name = virtio_balloon_stat_name(info.stat_tag[i]);

		if (name)
			json_object_set_new(stats, name, json_integer((json_int_t)info.stat_val[i]));
	}
	r = json_pack("{s:I, s:I, s:I, s:I, s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
		"target", (json_int_t)info.target_bytes, "actual", (json_int_t)info.actual_bytes,
		"num-pages", (json_int_t)info.num_pages, "actual-pages", (json_int_t)info.actual_pages,
		"driver-ok", (info.status & VIRTIO_STATUS_DRIVER_OK) != 0,
		"inflated-pages", (json_int_t)info.inflated_pages,
		"deflated-pages", (json_int_t)info.deflated_pages,
		"reported-bytes", (json_int_t)info.reported_bytes,
		"returned-bytes", (json_int_t)__atomic_load_n(&d->bytes, __ATOMIC_RELAXED),
		"discard-failed", (json_int_t)__atomic_load_n(&d->failed, __ATOMIC_RELAXED),
		"bad-pfns", (json_int_t)info.bad_pfns,
		"stats-updates", (json_int_t)info.stats_updates);
	json_object_set_new(r, "stats", stats);
	json_object_set_new(r, "stats-age-ms", info.stats_updates ?
			    json_integer((json_int_t)(info.stats_age_ns / 1000000)) : json_null());
	return r;
}

const struct qmp_cmd qmp_cmds[] = {
	{ "qmp_capabilities", cmd_capabilities },
	{ "query-status", cmd_query_status },
	{ "stop", cmd_stop },
	{ "cont", cmd_cont },
	{ "quit", cmd_quit },
	{ "system_powerdown", cmd_powerdown },
	{ "query-memory-size-summary", cmd_memory_summary },
	{ "query-name", cmd_query_name },
	{ "query-version", cmd_query_version },
	{ "query-gpmm-pool", cmd_query_pool },
	{ "query-fragmentation", cmd_query_fragmentation },
	{ "balloon", cmd_balloon },
	{ "query-balloon", cmd_query_balloon },
	{ "query-gpmm-balloon", cmd_query_gpmm_balloon },
	{ "query-gpmm-vms", cmd_query_vms, .daemon_only = true },
	{ "gpmm-vm-create", cmd_vm_create, .daemon_only = true },
	{ 0 }
};

static const struct qmp_cmd *const qmp_tables[] = { qmp_cmds, qmp_qemu_cmds };

static const struct qmp_cmd *find_cmd(const char *name)
{
	for (size_t t = 0; t < sizeof(qmp_tables) / sizeof(qmp_tables[0]); t++)
		for (const struct qmp_cmd *q = qmp_tables[t]; q->name; q++)
			if (!strcmp(q->name, name))
				return q;
	return NULL;
}

static json_t *run_command(struct conn *c, json_t *msg, struct qmp_err *e)
{
	const char *name = json_string_value(json_object_get(msg, "execute"));
	json_t *args = json_object_get(msg, "arguments");
	const struct qmp_cmd *q;

	if (!json_is_object(msg))
		return qmp_fail(e, "GenericError", "QMP input must be a JSON object");
	if (!name)
		return qmp_fail(e, "GenericError", "QMP input lacks member 'execute'");
	if (args && !json_is_object(args))
		return qmp_fail(e, "GenericError", "QMP input member 'arguments' must be an object");
	q = find_cmd(name);
	if (!c->negotiated && (!q || q->fn != cmd_capabilities))
		return qmp_fail(e, "CommandNotFound",
			    "Expecting capabilities negotiation with 'qmp_capabilities'");
	if (!q || (q->daemon_only && c->vm))
		return qmp_fail(e, "CommandNotFound", "The command %s has not been found", name);
	if (args)
		return q->fn(c, args, e);
	/* the command sees an empty object, which is ours to free */
	json_t *none = json_object(), *ret = q->fn(c, none, e);

	json_decref(none);
	return ret;
}

static void handle_message(struct conn *c, json_t *msg)
{
	struct qmp_err e = { 0 };
	json_t *id = json_object_get(msg, "id");
	json_t *ret = run_command(c, msg, &e), *reply;

	if (ret)
		reply = json_pack("{s:o}", "return", ret);
	else
		reply = json_pack("{s:{s:s, s:s}}", "error", "class", e.cls,
				  "desc", e.desc);
	if (id)
		json_object_set(reply, "id", id);
	qmp_send(c, reply);
}

/* Decode as many whole messages as the buffer holds. */
static void drain_buffer(struct conn *c)
{
	size_t off = 0;

	while (off < c->len) {
		json_t *msg = NULL;
		size_t used;
		int got = qmp_wire_decode(&c->framer, c->buf + off, c->len - off,
					  JSON_DECODE_ANY, &msg, &used);

		if (got < 0) {
			qmp_send(c, json_pack("{s:{s:s, s:s}}", "error", "class",
				 "GenericError", "desc", "JSON parse error"));
			off = c->len;
			break;
		}
		off += used;
		if (!got)
			break;
		handle_message(c, msg);
		json_decref(msg);
	}
	memmove(c->buf, c->buf + off, c->len - off);
	c->len -= off;
}

int qmp_input(struct conn *c)
{
	ssize_t n;

	if (qmp_wire_grow(&c->buf, &c->cap, c->len, QMP_MAX_MESSAGE)) {
		/* a message that does not end within the limit: say why we hang up */
		char desc[96];

		snprintf(desc, sizeof(desc), "a message longer than %d bytes (or not JSON): "
			 "closing the connection", QMP_MAX_MESSAGE);
		qmp_send(c, json_pack("{s:{s:s, s:s}}", "error", "class", "GenericError",
				      "desc", desc));
		return -1;
	}
	n = read(c->fd, c->buf + c->len, c->cap - c->len);
	if (n <= 0)
		return n < 0 && errno == EINTR ? 0 : -1;
	c->len += (size_t)n;
	drain_buffer(c);
	return c->dead ? -1 : 0;
}
