// SPDX-License-Identifier: GPL-2.0
/*
 * The QMP commands libvirt's QEMU driver sends a QEMU it started
 * (../shared/notes/libvirt-qemu-driver.md): the start sequence, whose
 * every command must answer or the start fails, and what domstats,
 * dommemstat and setmem ask later. Each answer is what gpmm is, in
 * QEMU's shapes: no hotpluggable CPUs, no iothreads, no block nodes to
 * report, no dirty-rate measurement started; the vCPUs' real thread ids
 * (libvirt moves them into its cgroups), the balloon's real statistics.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>

#include "devices/virtio/virtio_balloon.h"
#include "vmm/control/daemon.h"
#include "vmm/qemu/qemu_args.h"
#include "vmm/control/qmp_cmd.h"
#include "vmm/control/report.h"
#include "vmm/core/vcpu.h"

#define QOM_PERIPHERAL	"/machine/peripheral"

/* A command about the VM itself, which must still be there. */
static struct vm *live_vm(struct conn *c, json_t *args, struct qmp_err *e)
{
	struct dvm *v = qmp_target_live(c, args, e);

	return v ? v->vm : NULL;
}

static json_t *cmd_empty_list(struct conn *c, json_t *args, struct qmp_err *e)
{
	return json_array();
}

static json_t *cmd_set_capabilities(struct conn *c, json_t *args, struct qmp_err *e)
{
	json_t *caps = json_object_get(args, "capabilities"), *cap;
	size_t i;

	if (!json_is_array(caps))
		return qmp_fail(e, "GenericError", "Parameter 'capabilities' is missing");
	/* events: the migration's progress as events; gpmm does not migrate VMs */
	json_array_foreach(caps, i, cap) {
		const char *name = json_string_value(json_object_get(cap, "capability"));

		if (!name || !json_is_boolean(json_object_get(cap, "state")))
			return qmp_fail(e, "GenericError", "Invalid parameter 'capabilities'");
		if (strcmp(name, "events") && json_is_true(json_object_get(cap, "state")))
			return qmp_fail(e, "GenericError", "gpmm does not migrate VMs: "
					"capability '%s' is not available", name);
	}
	return json_object();
}

/* "unix:PATH,server=on" for the listening socket @fd, as QEMU says it. */
static json_t *socket_filename(int fd)
{
	struct sockaddr_un sa;
	socklen_t len = sizeof(sa);
	char buf[sizeof(sa.sun_path) + 32];

	memset(&sa, 0, sizeof(sa));
	if (fd < 0 || getsockname(fd, (struct sockaddr *)&sa, &len) || sa.sun_family != AF_UNIX)
		return json_string("unix:");
	snprintf(buf, sizeof(buf), "unix:%.*s,server=on", (int)sizeof(sa.sun_path), sa.sun_path);
	return json_string(buf);
}

static json_t *chardev_json(const struct dvm *v, const struct qemu_cmdline *q, int i)
{
	const struct qemu_chardev *ch = &q->chardevs[i];
	json_t *name;
	char buf[sizeof(v->con.path) + 8];

	if (i == q->monitor)
		name = socket_filename(v->qmp_fd);
	else if (ch->kind == QEMU_CHARDEV_PTY && i == q->serial) {
		/* libvirt takes the console's pty from here */
		snprintf(buf, sizeof(buf), "pty:%s", v->con.path);
		name = json_string(buf);
	} else if (ch->kind == QEMU_CHARDEV_SOCKET)
		name = json_string(i == q->serial ? "unix:" : "disconnected");
	else
		name = json_string(ch->kind == QEMU_CHARDEV_FILE ? "file" :
				   ch->kind == QEMU_CHARDEV_NULL ? "null" :
				   ch->kind == QEMU_CHARDEV_STDIO ? "stdio" : "pty");
	return json_pack("{s:s, s:o, s:b}", "label", ch->id, "filename", name,
			 "frontend-open", i == q->monitor || i == q->serial);
}

static json_t *cmd_query_chardev(struct conn *c, json_t *args, struct qmp_err *e)
{
	struct dvm *v = qmp_target_vm(c, args, e);
	json_t *list;

	if (!v)
		return NULL;
	list = json_array();
	if (!v->qemu) {
		json_array_append_new(list, json_pack("{s:s, s:s, s:b}", "label", "serial0",
			"filename", v->con.path[0] ? v->con.path : v->vm ? v->vm->cfg.console : "none",
			"frontend-open", true));
		return list;
	}
	for (unsigned int i = 0; i < v->qemu->nr_chardevs; i++)
		json_array_append_new(list, chardev_json(v, v->qemu, (int)i));
	return list;
}

static json_t *cmd_query_cpus_fast(struct conn *c, json_t *args, struct qmp_err *e)
{
	struct vm *vm = live_vm(c, args, e);
	json_t *list;

	if (!vm)
		return NULL;
	list = json_array();
	for (unsigned int i = 0; i < vm->nr_vcpus; i++) {
		char path[64];

		snprintf(path, sizeof(path), "/machine/unattached/device[%u]", i);
		json_array_append_new(list, json_pack(
			"{s:i, s:s, s:i, s:{s:i, s:i, s:i}, s:s}", "cpu-index", (int)i,
			"qom-path", path, "thread-id", (int)vm->vcpus[i].tid,
			"props", "core-id", 0, "thread-id", 0, "socket-id", (int)i,
			"target", "x86_64"));
	}
	return list;
}

/* The -device of @path ("/machine/peripheral/ID"), or NULL. */
static const struct qemu_device *peripheral(const struct dvm *v, const char *path)
{
	size_t n = strlen(QOM_PERIPHERAL);

	if (!v->qemu || strncmp(path, QOM_PERIPHERAL "/", n + 1))
		return NULL;
	for (unsigned int i = 0; i < v->qemu->nr_devices; i++)
		if (!strcmp(v->qemu->devices[i].id, path + n + 1))
			return &v->qemu->devices[i];
	return NULL;
}

static bool is_balloon(const struct qemu_device *d)
{
	return d && !strncmp(d->driver, "virtio-balloon", 14);
}

static json_t *prop(const char *name, const char *type)
{
	return json_pack("{s:s, s:s}", "name", name, "type", type);
}

/*
 * QOM as far as libvirt looks: the devices under /machine/peripheral by
 * their ids (it finds the balloon there), the balloon's statistics
 * properties, and CPUs with no properties (so it asks for no CPU flags).
 */
static json_t *cmd_qom_list(struct conn *c, json_t *args, struct qmp_err *e)
{
	struct dvm *v = qmp_target_vm(c, args, e);
	const char *path = json_string_value(json_object_get(args, "path"));
	const struct qemu_device *d;
	json_t *list;

	if (!v)
		return NULL;
	if (!path)
		return qmp_fail(e, "GenericError", "Parameter 'path' is missing");
	list = json_array();
	if (!strcmp(path, "/machine")) {
		json_array_append_new(list, prop("peripheral", "child<container>"));
		json_array_append_new(list, prop("unattached", "child<container>"));
	} else if (!strcmp(path, QOM_PERIPHERAL)) {
		for (unsigned int i = 0; v->qemu && i < v->qemu->nr_devices; i++) {
			char type[64];

			snprintf(type, sizeof(type), "child<%s>", v->qemu->devices[i].driver);
			json_array_append_new(list, prop(v->qemu->devices[i].id, type));
		}
	} else if ((d = peripheral(v, path))) {
		json_array_append_new(list, prop("type", "string"));
		if (is_balloon(d)) {
			json_array_append_new(list, prop("guest-stats", "guest-stats"));
			json_array_append_new(list, prop("guest-stats-polling-interval", "int"));
		}
	} else if (strncmp(path, "/machine/unattached", 19)) {
		json_decref(list);
		return qmp_fail(e, "DeviceNotFound", "Device '%s' not found", path);
	}
	return list;
}

/*
 * QEMU's guest-stats: every statistic it knows, -1 for one the guest did
 * not send; last-update is when the last set arrived (seconds, wall clock).
 */
static json_t *guest_stats(struct vm *vm, struct qmp_err *e)
{
	struct virtio_balloon_info info;
	json_t *stats = json_object();
	int64_t updated = 0;

	if (virtio_balloon_query(&vm->mach, &info, true)) {
		json_decref(stats);
		return qmp_fail(e, "DeviceNotActive", "No balloon device has been activated");
	}
	for (unsigned int tag = 0; tag < VIRTIO_BALLOON_S_NR; tag++)
		if (virtio_balloon_stat_name(tag))
			json_object_set_new(stats, virtio_balloon_stat_name(tag), json_integer(-1));
	for (unsigned int i = 0; i < info.nr_stats; i++) {
		const char *name = virtio_balloon_stat_name(info.stat_tag[i]);

		if (name)
			json_object_set_new(stats, name, json_integer((json_int_t)info.stat_val[i]));
	}
	if (info.stats_updates)
		updated = (int64_t)time(NULL) - (int64_t)(info.stats_age_ns / 1000000000ULL);
	return json_pack("{s:o, s:I}", "stats", stats, "last-update", (json_int_t)updated);
}

/* qom-get's and qom-set's "path" and "property", and the VM; false: @e says why. */
static bool qom_args(struct conn *c, json_t *args, struct qmp_err *e, struct dvm **v,
		     const char **path, const char **name)
{
	*v = qmp_target_vm(c, args, e);
	*path = json_string_value(json_object_get(args, "path"));
	*name = json_string_value(json_object_get(args, "property"));
	if (*v && (!*path || !*name))
		qmp_fail(e, "GenericError", "Parameter '%s' is missing", *path ? "property" : "path");
	return *v && *path && *name;
}

static json_t *cmd_qom_get(struct conn *c, json_t *args, struct qmp_err *e)
{
	const struct qemu_device *d;
	const char *path, *name;
	struct dvm *v;

	if (!qom_args(c, args, e, &v, &path, &name))
		return NULL;
	d = peripheral(v, path);
	if (is_balloon(d) && v->vm && !strcmp(name, "guest-stats"))
		return guest_stats(v->vm, e);
	if (is_balloon(d) && !strcmp(name, "guest-stats-polling-interval"))
		return json_integer(v->stats_period_s);
	if (!strncmp(path, "/machine/unattached/device[", 27) && !strcmp(name, "unavailable-features"))
		return json_array();	/* the CPU is the host's: it lacks nothing asked */
	return qmp_fail(e, "GenericError", "Property '%s' not found", name);
}

/* The balloon's statistics period: the daemon's tick asks the guest that often. */
static json_t *cmd_qom_set(struct conn *c, json_t *args, struct qmp_err *e)
{
	json_t *value = json_object_get(args, "value");
	const char *path, *name;
	struct dvm *v;

	if (!qom_args(c, args, e, &v, &path, &name))
		return NULL;
	if (!value)
		return qmp_fail(e, "GenericError", "Parameter 'value' is missing");
	if (!is_balloon(peripheral(v, path)) || strcmp(name, "guest-stats-polling-interval"))
		return qmp_fail(e, "GenericError", "Property '%s' not found", name);
	if (!json_is_integer(value) || json_integer_value(value) < 0 ||
	    json_integer_value(value) > UINT32_MAX)
		return qmp_fail(e, "GenericError", "timer value must be greater than zero");
	v->stats_period_s = (unsigned int)json_integer_value(value);
	v->next_stats_ns = 0;
	return json_object();
}

static bool one_of(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(s, *list))
			return true;
	return false;
}

/*
 * What the VM does on a guest event (libvirt's <on_reboot>, ...): gpmm
 * can end the VM on a reset instead of restarting it; a poweroff always
 * ends it, and it has neither a panic device nor a watchdog, so those
 * actions are accepted and never taken.
 */
static json_t *cmd_set_action(struct conn *c, json_t *args, struct qmp_err *e)
{
	static const char *const reboot[] = { "reset", "shutdown", NULL };
	static const char *const shutdown[] = { "poweroff", NULL };
	static const char *const panic[] = { "pause", "shutdown", "exit-failure", "none", NULL };
	static const char *const watchdog[] = { "reset", "shutdown", "poweroff", "pause", "debug",
						"none", "inject-nmi", NULL };
	static const struct { const char *key; const char *const *values; } actions[] = {
		{ "reboot", reboot }, { "shutdown", shutdown }, { "panic", panic },
		{ "watchdog", watchdog },
	};
	struct dvm *v = qmp_target_vm(c, args, e);
	const char *key;
	json_t *val;

	if (!v)
		return NULL;
	json_object_foreach(args, key, val) {
		const char *s = json_string_value(val);
		size_t i;

		if (!strcmp(key, "vm"))
			continue;
		for (i = 0; i < sizeof(actions) / sizeof(actions[0]); i++)
			if (!strcmp(key, actions[i].key))
				break;
		if (i == sizeof(actions) / sizeof(actions[0]))
			return qmp_fail(e, "GenericError", "Parameter '%s' is unexpected", key);
		if (!s || !one_of(s, actions[i].values))
			return qmp_fail(e, "GenericError", "gpmm cannot take action '%s' on %s",
					s ? s : "(not a string)", key);
	}
	val = json_object_get(args, "reboot");
	if (val)
		v->reset_ends = !strcmp(json_string_value(val), "shutdown");
	return json_object();
}

/* No dirty-rate measurement was ever started here: QEMU's answer for that. */
static json_t *cmd_query_dirty_rate(struct conn *c, json_t *args, struct qmp_err *e)
{
	return json_pack("{s:s, s:i, s:s, s:i, s:i}", "status", "unstarted",
			 "sample-pages", 0, "mode", "page-sampling", "start-time", 0,
			 "calc-time", 0);
}

static json_t *cmd_query_kvm(struct conn *c, json_t *args, struct qmp_err *e)
{
	return json_pack("{s:b, s:b}", "enabled", 1, "present", 1);
}

static json_t *cmd_query_uuid(struct conn *c, json_t *args, struct qmp_err *e)
{
	struct dvm *v = qmp_target_vm(c, args, e);

	if (!v)
		return NULL;
	return json_pack("{s:s}", "UUID", v->qemu && v->qemu->uuid[0] ? v->qemu->uuid :
			 "00000000-0000-0000-0000-000000000000");
}

/* HMP through QMP (virsh qemu-monitor-command --hmp): `info status`. */
static json_t *cmd_hmp(struct conn *c, json_t *args, struct qmp_err *e)
{
	const char *line = json_string_value(json_object_get(args, "command-line"));
	struct dvm *v = qmp_target_vm(c, args, e);
	char buf[512];

	if (!v)
		return NULL;
	if (!line)
		return qmp_fail(e, "GenericError", "Parameter 'command-line' is missing");
	if (!strcmp(line, "info status"))
		snprintf(buf, sizeof(buf), "VM status: %s\r\n",
			 v->vm ? vm_state_name(vm_get_state(v->vm)) : "shutdown");
	else
		snprintf(buf, sizeof(buf), "unknown command: '%.400s' (gpmm's monitor "
			 "knows only 'info status'; QMP has the rest)\r\n", line);
	return json_string(buf);
}

/*
 * The VM's statistics for libvirt's `domstats --vm`, read from this VM's
 * fragmentation report (so the same numbers as query-fragmentation's):
 * each a field of the report, by its path there.
 */
static const struct vm_stat {
	const char *name;
	const char *type;	/* QEMU's StatsType: how libvirt names it */
	const char *unit;
	const char *path[2];	/* in the report's VM object */
} vm_stats[] = {
	{ "huge_backed_bytes", "instant", "bytes", { "huge_backed_bytes" } },
	{ "populated_bytes", "instant", "bytes", { "populated_bytes" } },
	{ "assembled_bytes", "instant", "bytes", { "assembled_bytes" } },
	{ "mixed_pageblocks", "instant", NULL, { "mixed_pageblocks" } },
	{ "host_mappings", "instant", NULL, { "host_mappings" } },
	{ "migrated_pages", "cumulative", NULL, { "migrations", "pages" } },
	{ "ranges_assembled", "cumulative", NULL, { "assembly", "assembled" } },
	{ "balloon_returned_bytes", "cumulative", "bytes", { "balloon", "returned_bytes" } },
};

#define STATS_PROVIDER	"gpmm"	/* libvirt 9.0 reads the provider of no reply */

static json_t *cmd_query_stats_schemas(struct conn *c, json_t *args, struct qmp_err *e)
{
	json_t *stats = json_array();

	for (size_t i = 0; i < sizeof(vm_stats) / sizeof(vm_stats[0]); i++) {
		json_t *s = json_pack("{s:s, s:s, s:i}", "name", vm_stats[i].name,
				      "type", vm_stats[i].type, "exponent", 0);

		if (vm_stats[i].unit)
			json_object_set_new(s, "unit", json_string(vm_stats[i].unit));
		json_array_append_new(stats, s);
	}
	return json_pack("[{s:s, s:s, s:o}]", "provider", STATS_PROVIDER, "target", "vm",
			 "stats", stats);
}

static json_t *cmd_query_stats(struct conn *c, json_t *args, struct qmp_err *e)
{
	const char *target = json_string_value(json_object_get(args, "target"));
	struct vm *vm = live_vm(c, args, e);
	json_t *report, *me, *stats;

	if (!vm)
		return NULL;
	if (!target)
		return qmp_fail(e, "GenericError", "Parameter 'target' is missing");
	if (strcmp(target, "vm"))
		return qmp_fail(e, "GenericError", "gpmm keeps statistics of the VM only, "
				"not of target '%s'", target);
	report = report_build(vm->pool, &vm, 1, false);
	me = json_array_get(json_object_get(report, "vms"), 0);
	if (!me) {
		json_decref(report);
		return qmp_fail(e, "GenericError", "cannot read the pool");
	}
	stats = json_array();
	for (size_t i = 0; i < sizeof(vm_stats) / sizeof(vm_stats[0]); i++) {
		json_t *val = json_object_get(me, vm_stats[i].path[0]);

		if (vm_stats[i].path[1])
			val = json_object_get(val, vm_stats[i].path[1]);
		if (json_is_integer(val))
			json_array_append_new(stats, json_pack("{s:s, s:O}", "name",
						vm_stats[i].name, "value", val));
	}
	json_decref(report);
	return json_pack("[{s:s, s:o}]", "provider", STATS_PROVIDER, "stats", stats);
}

const struct qmp_cmd qmp_qemu_cmds[] = {
	{ "query-migrate-capabilities", cmd_empty_list },
	{ "migrate-set-capabilities", cmd_set_capabilities },
	{ "query-chardev", cmd_query_chardev },
	{ "query-hotpluggable-cpus", cmd_empty_list },
	{ "query-cpus-fast", cmd_query_cpus_fast },
	{ "qom-list", cmd_qom_list },
	{ "qom-get", cmd_qom_get },
	{ "qom-set", cmd_qom_set },
	{ "query-iothreads", cmd_empty_list },
	{ "query-named-block-nodes", cmd_empty_list },
	{ "query-block", cmd_empty_list },
	{ "query-blockstats", cmd_empty_list },
	{ "query-dirty-rate", cmd_query_dirty_rate },
	{ "query-stats-schemas", cmd_query_stats_schemas },
	{ "query-stats", cmd_query_stats },
	{ "query-kvm", cmd_query_kvm },
	{ "set-action", cmd_set_action },
	{ "query-uuid", cmd_query_uuid },
	{ "human-monitor-command", cmd_hmp },
	{ 0 }
};
