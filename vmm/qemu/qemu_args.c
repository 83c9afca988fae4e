// SPDX-License-Identifier: GPL-2.0
/*
 * QEMU's command line, as libvirt writes it, read into a gpmm VM config.
 * Two syntaxes: QemuOpts ("type,key=val,key2=val2", ",," for a comma in a
 * value, the first item naming an implied key) and, for -object, -device,
 * -blockdev and -audiodev, JSON (parsed with jansson). Each option is a
 * row of a table: its name, whether it takes an argument, what to do, and
 * what -help says of it. A QEMU user's hand-typed line and libvirt's
 * generated one go through the same rows.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devices/device.h"
#include "vmm/core/config.h"
#include "vmm/qemu/qemu_args.h"

#define MAX_BACKENDS	4
#define MAX_BLOCKDEVS	8

struct parse {
	struct qemu_cmdline *q;
	char *err;
	size_t errlen;
	struct { char id[64]; uint64_t size; } backends[MAX_BACKENDS];
	unsigned int nr_backends;
	char machine_backend[64];
	uint64_t m_bytes;
	struct { char node[64]; char file[64]; char filename[PATH_MAX]; bool ro, raw; } blk[MAX_BLOCKDEVS];
	unsigned int nr_blk;
	char serial_id[64];
	char disk_node[64];
	/* -netdev tap: its id and what gpmm's `net` spec makes of it */
	struct { char id[64]; char spec[96]; } netdevs[MACHINE_NET_MAX];
	unsigned int nr_netdevs;
	/* -device virtio-net-*: the netdev it names and its MAC */
	struct { char netdev[64]; char mac[32]; } nics[MACHINE_NET_MAX];
	unsigned int nr_nics;
	unsigned int nr_serial_opts;	/* -serial given so far */
	bool nographic, nodefaults;
};

static int fail(struct parse *p, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct parse *p, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->err, p->errlen, fmt, ap);
	va_end(ap);
	return err;
}

/*
 * The end of the QemuOpts item at @s (its ',' or the string's end; ",,"
 * is an escaped comma inside it), and in *@eq its first '=', or NULL.
 */
static const char *opt_item_end(const char *s, const char **eq)
{
	*eq = NULL;
	while (*s && !(*s == ',' && s[1] != ',')) {
		if (*s == '=' && !*eq)
			*eq = s;
		s += *s == ',' ? 2 : 1;
	}
	return s;
}

/*
 * QemuOpts: the value of @key in @opts, into @out; the first item, when it
 * has no '=', is the value of @implied. ",," stands for a comma. false
 * when the key is absent or the value does not fit.
 */
static bool opt_get(const char *opts, const char *key, const char *implied, char *out,
		    size_t n)
{
	for (bool first = true; *opts; first = false) {
		const char *eq, *p = opt_item_end(opts, &eq);
		size_t len = 0;
		bool match;

		match = eq ? (size_t)(eq - opts) == strlen(key) && !strncmp(opts, key, strlen(key)) :
			first && implied && !strcmp(implied, key);
		if (match) {
			for (const char *v = eq ? eq + 1 : opts; v < p; v += *v == ',' ? 2 : 1) {
				if (len + 1 >= n)
					return false;
				out[len++] = *v;
			}
			out[len] = '\0';
			return true;
		}
		opts = *p ? p + 1 : p;
	}
	return false;
}

static bool opt_is(const char *opts, const char *key, const char *implied, const char *val)
{
	char v[256];

	return opt_get(opts, key, implied, v, sizeof(v)) && !strcmp(v, val);
}

/*
 * A QemuOpts switch: key=on (true, yes), or the bare key of the older
 * spelling people still type (-serial unix:P,server,nowait).
 */
static bool opt_flag(const char *opts, const char *key)
{
	char v[16];

	if (opt_get(opts, key, NULL, v, sizeof(v)))
		return !strcmp(v, "on") || !strcmp(v, "true") || !strcmp(v, "yes");
	while (*opts) {
		const char *eq, *e = opt_item_end(opts, &eq);

		if (!eq && (size_t)(e - opts) == strlen(key) && !strncmp(opts, key, strlen(key)))
			return true;
		opts = *e ? e + 1 : e;
	}
	return false;
}

/* -object/-device/-blockdev/-audiodev: JSON, or QemuOpts turned into JSON. */
static json_t *object_arg(struct parse *p, const char *opt, const char *arg, const char *implied)
{
	json_t *o;

	if (arg[0] == '{') {
		o = json_loads(arg, 0, NULL);
		if (!json_is_object(o)) {
			json_decref(o);
			fail(p, -EINVAL, "-%s: malformed JSON: %.80s", opt, arg);
			return NULL;
		}
		return o;
	}
	o = json_object();
	for (const char *s = arg; *s;) {
		char item[512], key[128], *eq;
		size_t len = 0;

		while (*s && !(*s == ',' && s[1] != ',') && len + 1 < sizeof(item)) {
			item[len++] = *s;
			s += *s == ',' ? 2 : 1;
		}
		item[len] = '\0';
		s += *s == ',';
		eq = strchr(item, '=');
		if (!eq) {
			json_object_set_new(o, implied, json_string(item));
			continue;
		}
		snprintf(key, sizeof(key), "%.*s", (int)(eq - item), item);
		json_object_set_new(o, key, json_string(eq + 1));
	}
	return o;
}

static const char *jstr(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

static uint64_t jsize(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	uint64_t n = 0;

	if (json_is_integer(v))
		return (uint64_t)json_integer_value(v);
	if (json_is_string(v) && config_parse_size(json_string_value(v), &n))
		return 0;
	return n;
}

static bool jbool(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_true(v) || (json_is_string(v) && (!strcmp(json_string_value(v), "on") ||
							 !strcmp(json_string_value(v), "true")));
}

static int do_name(struct parse *p, const char *arg)
{
	char name[VM_NAME_MAX];

	if (!opt_get(arg, "guest", "guest", name, sizeof(name)) || !name[0])
		return fail(p, -EINVAL, "-name: no guest name in '%s'", arg);
	snprintf(p->q->cfg.name, sizeof(p->q->cfg.name), "%s", name);
	return 0;
}

static int do_object(struct parse *p, const char *arg)
{
	json_t *o = object_arg(p, "object", arg, "qom-type");
	const char *type;
	int ret = 0;

	if (!o)
		return -EINVAL;
	type = jstr(o, "qom-type");
	if (!strncmp(type, "memory-backend-", 15)) {
		if (p->nr_backends == MAX_BACKENDS)
			ret = fail(p, -ENOTSUP, "-object: more memory backends than gpmm takes");
		else {
			snprintf(p->backends[p->nr_backends].id, 64, "%s", jstr(o, "id"));
			p->backends[p->nr_backends++].size = jsize(o, "size");
		}
	} else if (strcmp(type, "secret") && strcmp(type, "iothread")) {
		ret = fail(p, -ENOTSUP, "-object %s: gpmm has no such object", type);
	}
	json_decref(o);
	return ret;
}

static int do_machine(struct parse *p, const char *arg)
{
	char v[64];

	if (opt_is(arg, "type", "type", "none")) {
		p->q->probe = true;
		return 0;
	}
	if (opt_get(arg, "memory-backend", NULL, v, sizeof(v)))
		snprintf(p->machine_backend, sizeof(p->machine_backend), "%s", v);
	if (opt_get(arg, "accel", NULL, v, sizeof(v)) && !strstr(v, "kvm"))
		return fail(p, -ENOTSUP, "-machine accel=%s: gpmm runs guests with KVM only", v);
	return 0;
}

static int do_accel(struct parse *p, const char *arg)
{
	if (!opt_is(arg, "accel", "accel", "kvm"))
		return fail(p, -ENOTSUP, "-accel %s: gpmm runs guests with KVM only", arg);
	return 0;
}

static int do_m(struct parse *p, const char *arg)
{
	uint64_t max;
	char v[64];

	if (!opt_get(arg, "size", "size", v, sizeof(v)))
		return fail(p, -EINVAL, "-m %s: no size", arg);
	if (config_parse_mem_size(v, &p->m_bytes) || !p->m_bytes)
		return fail(p, -EINVAL, "-m %s: not a size", arg);
	/* maxmem above the size is room for DIMMs plugged in later */
	if (opt_get(arg, "maxmem", NULL, v, sizeof(v)) && (config_parse_mem_size(v, &max) || max > p->m_bytes))
		return fail(p, -ENOTSUP, "-m %s: gpmm has no memory hotplug (maxmem)", arg);
	return 0;
}

/*
 * -smp N, cpus=N, or only a topology (sockets=2,cores=2), whose product
 * QEMU takes for the count. The topology itself changes nothing: gpmm's
 * vCPUs are as many flat CPUs as the count says.
 */
static unsigned long smp_count(const char *arg, bool *given)
{
	static const char *const levels[] = { "sockets", "dies", "clusters", "cores", "threads" };
	unsigned long n = 1;
	char v[32], *end;

	*given = false;
	if (opt_get(arg, "cpus", "cpus", v, sizeof(v))) {
		*given = true;
		n = strtoul(v, &end, 10);
		return *end || end == v ? 0 : n;
	}
	for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++) {
		if (!opt_get(arg, levels[i], NULL, v, sizeof(v)))
			continue;
		*given = true;
		n *= strtoul(v, &end, 10);
		if (*end || end == v || n > VM_MAX_CPUS)
			return 0;
	}
	return n;
}

static int do_smp(struct parse *p, const char *arg)
{
	char v[32];
	unsigned long n;
	bool given;

	n = smp_count(arg, &given);
	if (!given)
		return fail(p, -EINVAL, "-smp %s: no CPU count", arg);
	if (n < 1 || n > VM_MAX_CPUS)
		return fail(p, -EINVAL, "-smp %s: gpmm runs 1 to %d vCPUs", arg, VM_MAX_CPUS);
	if (opt_get(arg, "maxcpus", NULL, v, sizeof(v)) && strtoul(v, NULL, 10) != n)
		return fail(p, -ENOTSUP, "-smp %s: gpmm has no CPU hotplug (maxcpus)", arg);
	p->q->cfg.cpus = (unsigned int)n;
	return 0;
}

static int do_display(struct parse *p, const char *arg)
{
	if (!opt_is(arg, "type", "type", "none"))
		return fail(p, -ENOTSUP, "-display %s: gpmm has no display (-nographic puts the "
			    "serial console on this terminal; libvirt: <graphics> none)", arg);
	return 0;
}

static int do_vga(struct parse *p, const char *arg)
{
	if (strcmp(arg, "none"))
		return fail(p, -ENOTSUP, "-vga %s: gpmm has no display adapter (-vga none)", arg);
	return 0;
}

/* -monitor: QEMU's human monitor, which gpmm has not; its QMP is -qmp's. */
static int do_monitor(struct parse *p, const char *arg)
{
	if (strcmp(arg, "none"))
		return fail(p, -ENOTSUP, "-monitor %s: gpmm has no human monitor; it speaks QMP "
			    "(-qmp unix:PATH,server=on,wait=off)", arg);
	return 0;
}

static struct qemu_chardev *new_chardev(struct parse *p)
{
	struct qemu_chardev *c;

	if (p->q->nr_chardevs == QEMU_MAX_CHARDEVS) {
		fail(p, -ENOTSUP, "more than %d character devices", QEMU_MAX_CHARDEVS);
		return NULL;
	}
	c = &p->q->chardevs[p->q->nr_chardevs++];
	memset(c, 0, sizeof(*c));
	c->fd = c->log_fd = -1;
	return c;
}

/* The serial port's own chardev, as QEMU makes one for -serial and -nographic. */
static struct qemu_chardev *new_serial_chardev(struct parse *p)
{
	struct qemu_chardev *c = new_chardev(p);

	if (c) {
		snprintf(c->id, sizeof(c->id), "serial0");
		p->q->serial = (int)(c - p->q->chardevs);
	}
	return c;
}

static int do_chardev(struct parse *p, const char *arg)
{
	struct qemu_chardev *c = new_chardev(p);
	char backend[32], v[32];

	if (!c)
		return -ENOTSUP;
	if (!opt_get(arg, "backend", "backend", backend, sizeof(backend)) ||
	    !opt_get(arg, "id", NULL, c->id, sizeof(c->id)))
		return fail(p, -EINVAL, "-chardev %s: needs a backend and an id", arg);
	if (opt_get(arg, "fd", NULL, v, sizeof(v)))
		c->fd = atoi(v);
	opt_get(arg, "path", NULL, c->path, sizeof(c->path));
	opt_get(arg, "logfile", NULL, c->logfile, sizeof(c->logfile));
	c->server = opt_flag(arg, "server");
	if (!strcmp(backend, "socket"))
		c->kind = QEMU_CHARDEV_SOCKET;
	else if (!strcmp(backend, "pty"))
		c->kind = QEMU_CHARDEV_PTY;
	else if (!strcmp(backend, "file"))
		c->kind = QEMU_CHARDEV_FILE;
	else if (!strcmp(backend, "null"))
		c->kind = QEMU_CHARDEV_NULL;
	else if (!strcmp(backend, "stdio"))
		c->kind = QEMU_CHARDEV_STDIO;
	else
		return fail(p, -ENOTSUP, "-chardev %s: gpmm has no '%s' character device", arg,
			    backend);
	if (c->kind == QEMU_CHARDEV_SOCKET && c->fd < 0 && !c->path[0])
		return fail(p, -EINVAL, "-chardev %s: a socket needs fd= or path=", arg);
	return 0;
}

static int find_chardev(struct parse *p, const char *id)
{
	for (unsigned int i = 0; i < p->q->nr_chardevs; i++)
		if (!strcmp(p->q->chardevs[i].id, id))
			return (int)i;
	return -1;
}

static int do_mon(struct parse *p, const char *arg)
{
	char id[64];

	if (!opt_get(arg, "chardev", "chardev", id, sizeof(id)) || find_chardev(p, id) < 0)
		return fail(p, -EINVAL, "-mon %s: no such chardev", arg);
	if (!opt_is(arg, "mode", NULL, "control"))
		return fail(p, -ENOTSUP, "-mon %s: gpmm speaks QMP only (mode=control)", arg);
	p->q->monitor = find_chardev(p, id);
	return 0;
}

/* -qmp unix:PATH,server=on,wait=off: the probe's monitor. */
static int do_qmp(struct parse *p, const char *arg)
{
	struct qemu_chardev *c;
	char path[PATH_MAX];

	if (strncmp(arg, "unix:", 5) || !opt_get(arg + 5, "path", "path", path, sizeof(path)))
		return fail(p, -ENOTSUP, "-qmp %s: gpmm listens on unix sockets only", arg);
	c = new_chardev(p);
	if (!c)
		return -ENOTSUP;
	snprintf(c->id, sizeof(c->id), "qmp");
	c->kind = QEMU_CHARDEV_SOCKET;
	snprintf(c->path, sizeof(c->path), "%s", path);
	c->server = true;
	p->q->monitor = (int)(c - p->q->chardevs);
	return 0;
}

/*
 * -serial as typed by hand: each of QEMU's back ends that is one of gpmm's
 * console kinds becomes a chardev of its own, as QEMU makes one. mon:
 * muxes QEMU's human monitor in; gpmm has none, so mon:stdio is the
 * console alone. gpmm's machine has one serial port, so one -serial.
 */
static int serial_backend(struct parse *p, const char *arg, struct qemu_chardev *c)
{
	const char *be = strncmp(arg, "mon:", 4) ? arg : arg + 4;

	if (!strcmp(be, "stdio"))
		c->kind = QEMU_CHARDEV_STDIO;
	else if (!strcmp(be, "pty"))
		c->kind = QEMU_CHARDEV_PTY;
	else if (!strcmp(be, "null"))
		c->kind = QEMU_CHARDEV_NULL;
	else if (!strncmp(be, "file:", 5) && be[5] && strlen(be + 5) < sizeof(c->path)) {
		c->kind = QEMU_CHARDEV_FILE;
		strcpy(c->path, be + 5);
	} else if (!strncmp(be, "unix:", 5) &&
		 opt_get(be + 5, "path", "path", c->path, sizeof(c->path)) && c->path[0]) {
		c->kind = QEMU_CHARDEV_SOCKET;
		c->server = opt_flag(be + 5, "server");
		if (!c->server)
			return fail(p, -ENOTSUP, "-serial %s: gpmm's console socket is one it "
				    "listens on (unix:PATH,server=on)", arg);
	} else
		return fail(p, -ENOTSUP, "-serial %s: gpmm's serial console is stdio, mon:stdio, "
			    "pty, file:PATH, unix:PATH,server=on, null, none or chardev:ID", arg);
	return 0;
}

static int do_serial(struct parse *p, const char *arg)
{
	struct qemu_chardev *c;
	int ret;

	if (p->nr_serial_opts++)
		return fail(p, -ENOTSUP, "-serial %s: gpmm's machine has one serial port", arg);
	p->q->serial_chosen = true;
	p->q->serial = -1;
	p->serial_id[0] = '\0';
	if (!strncmp(arg, "chardev:", 8)) {
		snprintf(p->serial_id, sizeof(p->serial_id), "%s", arg + 8);
		return 0;
	}
	if (!strcmp(arg, "none"))
		return 0;
	c = new_serial_chardev(p);
	if (!c)
		return -ENOTSUP;
	ret = serial_backend(p, arg, c);
	if (ret)
		p->q->serial = -1;
	return ret;
}

static int do_add_fd(struct parse *p, const char *arg)
{
	char set[16], fd[16];

	if (!opt_get(arg, "set", NULL, set, sizeof(set)) || !opt_get(arg, "fd", NULL, fd, sizeof(fd)))
		return fail(p, -EINVAL, "-add-fd %s: needs set= and fd=", arg);
	if (p->q->nr_fdsets == QEMU_MAX_FDSETS)
		return fail(p, -ENOTSUP, "-add-fd: more than %d descriptor sets", QEMU_MAX_FDSETS);
	p->q->fdsets[p->q->nr_fdsets].set = atoi(set);
	p->q->fdsets[p->q->nr_fdsets++].fd = atoi(fd);
	return 0;
}

/* A string or a number in JSON: its text into @out. */
static const char *jtext(json_t *o, const char *key, char *out, size_t n)
{
	json_t *v = json_object_get(o, key);

	if (json_is_integer(v))
		snprintf(out, n, "%lld", (long long)json_integer_value(v));
	else
		snprintf(out, n, "%s", json_is_string(v) ? json_string_value(v) : "");
	return out;
}

/*
 * -netdev tap: a tap opened by name (ifname=, with no scripts) or handed
 * over open (fd=, as libvirt does for every <interface> type). gpmm moves
 * packets itself, so a vhost-net descriptor libvirt adds (vhostfd=) is
 * left unused; user-mode networking and multiqueue taps are refused.
 */
static int do_netdev(struct parse *p, const char *arg)
{
	json_t *o = object_arg(p, "netdev", arg, "type");
	char fd[32], ifname[64], script[PATH_MAX];
	int ret = 0;

	if (!o)
		return -EINVAL;
	jtext(o, "fd", fd, sizeof(fd));
	jtext(o, "ifname", ifname, sizeof(ifname));
	jtext(o, "script", script, sizeof(script));
	if (strcmp(jstr(o, "type"), "tap"))
		ret = fail(p, -ENOTSUP, "-netdev %s: gpmm networks through a host tap only "
			   "(-netdev tap,ifname=NAME or fd=N; libvirt: <interface type='network'>, "
			   "'bridge' or 'ethernet')", jstr(o, "type"));
	else if (jstr(o, "fds")[0] || jstr(o, "queues")[0])
		ret = fail(p, -ENOTSUP, "-netdev: gpmm's virtio-net has one queue pair (no "
			   "fds=, queues=; libvirt: no <driver queues=...>)");
	else if ((script[0] && strcmp(script, "no")) || (jstr(o, "downscript")[0] &&
						       strcmp(jstr(o, "downscript"), "no")))
		ret = fail(p, -ENOTSUP, "-netdev: gpmm runs no network scripts (script=no,"
			   "downscript=no and a tap that exists)");
	else if (!fd[0] == !ifname[0])
		ret = fail(p, -EINVAL, "-netdev tap: give ifname= or fd= (one of them)");
	else if (p->nr_netdevs == MACHINE_NET_MAX)
		ret = fail(p, -ENOTSUP, "-netdev: more than %d interfaces", MACHINE_NET_MAX);
	if (!ret) {
		typeof(p->netdevs[0]) *n = &p->netdevs[p->nr_netdevs++];

		snprintf(n->id, sizeof(n->id), "%s", jstr(o, "id"));
		snprintf(n->spec, sizeof(n->spec), fd[0] ? "fd=%s" : "tap=%s", fd[0] ? fd : ifname);
	}
	json_decref(o);
	return ret;
}

/* Each -device virtio-net-* on its -netdev: the VM's `net` interfaces, in order. */
static int finish_nics(struct parse *p)
{
	struct vm_config *cfg = &p->q->cfg;

	for (unsigned int i = 0; i < p->nr_nics; i++) {
		char spec[160], err[256];
		unsigned int j;

		for (j = 0; j < p->nr_netdevs; j++)
			if (!strcmp(p->netdevs[j].id, p->nics[i].netdev))
				break;
		if (j == p->nr_netdevs)
			return fail(p, -EINVAL, "virtio-net on netdev '%s', which is not defined",
				    p->nics[i].netdev);
		snprintf(spec, sizeof(spec), "%s%s%s", p->netdevs[j].spec,
			 p->nics[i].mac[0] ? ",mac=" : "", p->nics[i].mac);
		if (net_spec_parse(spec, &cfg->net[cfg->nr_net], err, sizeof(err)))
			return fail(p, -EINVAL, "%s", err);
		cfg->nr_net++;
	}
	return 0;
}

static int do_blockdev(struct parse *p, const char *arg)
{
	json_t *o = object_arg(p, "blockdev", arg, "driver");
	const char *driver;
	int ret = 0;

	if (!o)
		return -EINVAL;
	driver = jstr(o, "driver");
	if (p->nr_blk == MAX_BLOCKDEVS) {
		ret = fail(p, -ENOTSUP, "-blockdev: more block nodes than gpmm takes");
	} else if (!strcmp(driver, "file") || !strcmp(driver, "host_device") || !strcmp(driver, "raw")) {
		typeof(p->blk[0]) *b = &p->blk[p->nr_blk++];

		snprintf(b->node, sizeof(b->node), "%s", jstr(o, "node-name"));
		snprintf(b->file, sizeof(b->file), "%s", jstr(o, "file"));
		snprintf(b->filename, sizeof(b->filename), "%s", jstr(o, "filename"));
		b->ro = jbool(o, "read-only");
		b->raw = !strcmp(driver, "raw");
	} else {
		ret = fail(p, -ENOTSUP, "-blockdev driver %s: gpmm reads raw images only", driver);
	}
	json_decref(o);
	return ret;
}

/*
 * -drive as a QEMU user types it: a raw image on virtio-blk, gpmm's one
 * disk (if=virtio), or a node a -device virtio-blk-pci,drive=ID names
 * (if=none). QEMU's default, if=ide, is a disk gpmm's machine has not
 * (the guest would look for it under another name), so it is refused, as
 * are images gpmm would misread (a format but raw: QEMU's probing of an
 * unnamed format is not ours) and snapshot=on, whose writes QEMU keeps
 * off the image while gpmm's would reach it.
 */
static int do_drive(struct parse *p, const char *arg)
{
	char file[PATH_MAX], itf[16] = "ide", id[64] = "drive0";
	typeof(p->blk[0]) *b;

	if (!opt_get(arg, "file", NULL, file, sizeof(file)) || !file[0])
		return fail(p, -EINVAL, "-drive %s: no file=", arg);
	if (!opt_is(arg, "format", NULL, "raw"))
		return fail(p, -ENOTSUP, "-drive %s: gpmm reads raw images only (format=raw)", arg);
	opt_get(arg, "if", NULL, itf, sizeof(itf));
	if (strcmp(itf, "virtio") && strcmp(itf, "none"))
		return fail(p, -ENOTSUP, "-drive %s: gpmm has no %s disk; its disk is virtio-blk "
			    "(if=virtio)", arg, itf);
	if (opt_flag(arg, "snapshot"))
		return fail(p, -ENOTSUP, "-drive %s: gpmm writes to the image itself (no snapshot=on)",
			    arg);
	if (!opt_get(arg, "id", NULL, id, sizeof(id)) && !strcmp(itf, "none"))
		return fail(p, -EINVAL, "-drive %s: if=none needs the id= its -device names", arg);
	if (p->nr_blk == MAX_BLOCKDEVS)
		return fail(p, -ENOTSUP, "-drive: more block nodes than gpmm takes");
	b = &p->blk[p->nr_blk++];
	memset(b, 0, sizeof(*b));
	snprintf(b->node, sizeof(b->node), "%s", id);
	snprintf(b->filename, sizeof(b->filename), "%s", file);
	b->ro = opt_flag(arg, "readonly");
	if (!strcmp(itf, "virtio")) {
		if (p->disk_node[0])
			return fail(p, -ENOTSUP, "-drive %s: gpmm gives a VM one disk", arg);
		snprintf(p->disk_node, sizeof(p->disk_node), "%s", id);
	}
	return 0;
}

/*
 * What each -device driver is to gpmm, by QEMU's names: one of its own
 * devices (PCI ones become virtio-mmio, which the guest learns of from
 * ACPI as in any gpmm VM), plumbing that libvirt and virt-install put in
 * every plain domain and that carries nothing gpmm's machine has (USB
 * controllers with nothing behind them, PCI bridges and root ports: the
 * guest sees none of them, and misses nothing it was given), or a device
 * the guest would look for and not find, refused with what to write
 * instead. Drivers not in the table are refused by name.
 */
enum qemu_dev_kind {
	QDEV_SERIAL,
	QDEV_BALLOON,
	QDEV_BLK,
	QDEV_NET,
	QDEV_USB_HOST,		/* a USB host controller: nothing behind it */
	QDEV_PCI_PORT,		/* a PCI bridge or root port: nothing behind it */
	QDEV_REFUSED,
};

static const struct qemu_devtype {
	const char *driver;
	enum qemu_dev_kind kind;
	const char *why;	/* QDEV_REFUSED: the sentence after the driver */
} qemu_devtypes[] = {
	{ "isa-serial", QDEV_SERIAL },
	{ "virtio-balloon-pci", QDEV_BALLOON },
	{ "virtio-balloon-device", QDEV_BALLOON },
	{ "virtio-blk-pci", QDEV_BLK },
	{ "virtio-blk-device", QDEV_BLK },
	{ "virtio-net-pci", QDEV_NET },
	{ "virtio-net-device", QDEV_NET },
	/* libvirt's <controller type='usb'> models, and virt-install's four */
	{ "piix3-usb-uhci", QDEV_USB_HOST },
	{ "piix4-usb-uhci", QDEV_USB_HOST },
	{ "ich9-usb-ehci1", QDEV_USB_HOST },
	{ "ich9-usb-ehci2", QDEV_USB_HOST },
	{ "ich9-usb-uhci1", QDEV_USB_HOST },
	{ "ich9-usb-uhci2", QDEV_USB_HOST },
	{ "ich9-usb-uhci3", QDEV_USB_HOST },
	{ "ich9-usb-uhci4", QDEV_USB_HOST },
	{ "ich9-usb-uhci5", QDEV_USB_HOST },
	{ "ich9-usb-uhci6", QDEV_USB_HOST },
	{ "usb-ehci", QDEV_USB_HOST },
	{ "qemu-xhci", QDEV_USB_HOST },
	{ "nec-usb-xhci", QDEV_USB_HOST },
	/* libvirt's <controller type='pci'> models (q35 domains have many) */
	{ "pcie-root-port", QDEV_PCI_PORT },
	{ "ioh3420", QDEV_PCI_PORT },
	{ "pci-bridge", QDEV_PCI_PORT },
	{ "pcie-pci-bridge", QDEV_PCI_PORT },
	{ "i82801b11-bridge", QDEV_PCI_PORT },
	{ "x3130-upstream", QDEV_PCI_PORT },
	{ "xio3130-downstream", QDEV_PCI_PORT },
	/* what virt-install adds for a recent Linux --osinfo */
	{ "virtio-serial-pci", QDEV_REFUSED, "gpmm has no virtio-serial, so the guest would find "
	  "no <channel> (such as the guest agent's): remove the <channel> (virt-install: "
	  "--channel none)" },
	{ "virtio-rng-pci", QDEV_REFUSED, "gpmm has no virtio-rng, so the guest would find no "
	  "<rng>: remove it (virt-install: --rng none)" },
	{ "usb-tablet", QDEV_REFUSED, "gpmm's machine has no USB bus for it (libvirt: no "
	  "<input bus='usb'>)" },
	{ "usb-kbd", QDEV_REFUSED, "gpmm's machine has no USB bus for it (libvirt: no "
	  "<input bus='usb'>)" },
	{ "usb-mouse", QDEV_REFUSED, "gpmm's machine has no USB bus for it (libvirt: no "
	  "<input bus='usb'>)" },
};

static const struct qemu_devtype *find_devtype(const char *driver)
{
	for (size_t i = 0; i < sizeof(qemu_devtypes) / sizeof(qemu_devtypes[0]); i++)
		if (!strcmp(qemu_devtypes[i].driver, driver))
			return &qemu_devtypes[i];
	return NULL;
}

/* A device with nothing behind it: counted, and its first driver kept for the log line. */
static void note_plumbing(struct qemu_plumbing *pl, const char *driver)
{
	if (!pl->count++)
		snprintf(pl->first, sizeof(pl->first), "%s", driver);
}

static int add_device(struct parse *p, const struct qemu_devtype *t, json_t *o)
{
	switch (t->kind) {
	case QDEV_SERIAL:
		snprintf(p->serial_id, sizeof(p->serial_id), "%s", jstr(o, "chardev"));
		p->q->serial_chosen = true;
		return 0;
	case QDEV_BALLOON:
		p->q->cfg.balloon = true;
		/* libvirt's <memballoon freePageReporting='off'> */
		p->q->cfg.balloon_no_reporting = json_is_false(json_object_get(o, "free-page-reporting"));
		return 0;
	case QDEV_BLK:
		if (p->disk_node[0])
			return fail(p, -ENOTSUP, "-device %s: gpmm gives a VM one disk", t->driver);
		snprintf(p->disk_node, sizeof(p->disk_node), "%s", jstr(o, "drive"));
		return 0;
	case QDEV_NET:
		if (p->nr_nics == MACHINE_NET_MAX)
			return fail(p, -ENOTSUP, "-device %s: more than %d interfaces", t->driver,
				    MACHINE_NET_MAX);
		snprintf(p->nics[p->nr_nics].netdev, sizeof(p->nics[0].netdev), "%s",
			 jstr(o, "netdev"));
		snprintf(p->nics[p->nr_nics++].mac, sizeof(p->nics[0].mac), "%s", jstr(o, "mac"));
		return 0;
	case QDEV_USB_HOST:
		note_plumbing(&p->q->usb_controllers, t->driver);
		return 1;
	case QDEV_PCI_PORT:
		note_plumbing(&p->q->pci_ports, t->driver);
		return 1;
	case QDEV_REFUSED:
		break;
	}
	return fail(p, -ENOTSUP, "-device %s: %s", t->driver, t->why);
}

/*
 * -device: the row of its driver. gpmm's own devices are kept by id for
 * QOM's /machine/peripheral; plumbing is counted, not kept (a q35 domain
 * has a dozen root ports).
 */
static int do_device(struct parse *p, const char *arg)
{
	json_t *o = object_arg(p, "device", arg, "driver");
	const struct qemu_devtype *t;
	const char *driver;
	int ret;

	if (!o)
		return -EINVAL;
	driver = jstr(o, "driver");
	t = find_devtype(driver);
	if (!t) {
		ret = fail(p, -ENOTSUP, "-device %s: gpmm has no such device", driver);
	} else if (t->kind < QDEV_USB_HOST && p->q->nr_devices == QEMU_MAX_DEVICES) {
		ret = fail(p, -ENOTSUP, "-device %s: more devices than gpmm takes", driver);
	} else {
		ret = add_device(p, t, o);
		if (ret == 0 && jstr(o, "id")[0]) {
			struct qemu_device *d = &p->q->devices[p->q->nr_devices++];

			snprintf(d->id, sizeof(d->id), "%s", jstr(o, "id"));
			snprintf(d->driver, sizeof(d->driver), "%s", driver);
		}
		ret = ret > 0 ? 0 : ret;
	}
	json_decref(o);		/* after: driver is o's */
	return ret;
}

static int set_str(struct parse *p, const char *opt, char *dst, size_t n, const char *arg)
{
	if (strlen(arg) >= n)
		return fail(p, -EINVAL, "-%s: too long", opt);
	memcpy(dst, arg, strlen(arg) + 1);
	return 0;
}

static int do_kernel(struct parse *p, const char *a) { return set_str(p, "kernel", p->q->cfg.kernel, sizeof(p->q->cfg.kernel), a); }
static int do_initrd(struct parse *p, const char *a) { return set_str(p, "initrd", p->q->cfg.initrd, sizeof(p->q->cfg.initrd), a); }
static int do_append(struct parse *p, const char *a) { return set_str(p, "append", p->q->cfg.append, sizeof(p->q->cfg.append), a); }
static int do_pidfile(struct parse *p, const char *a) { return set_str(p, "pidfile", p->q->pidfile, sizeof(p->q->pidfile), a); }
static int do_uuid(struct parse *p, const char *a) { return set_str(p, "uuid", p->q->uuid, sizeof(p->q->uuid), a); }
static int do_paused(struct parse *p, const char *a) { p->q->start_paused = true; return 0; }
static int do_no_shutdown(struct parse *p, const char *a) { p->q->no_shutdown = true; return 0; }
static int do_daemonize(struct parse *p, const char *a) { p->q->daemonize = true; return 0; }
static int do_nothing(struct parse *p, const char *a) { return 0; }
static int do_nographic(struct parse *p, const char *a) { p->nographic = true; return 0; }
static int do_nodefaults(struct parse *p, const char *a) { p->nodefaults = true; return 0; }
static int do_no_reboot(struct parse *p, const char *a) { p->q->no_reboot = true; return 0; }
static int do_help(struct parse *p, const char *a) { p->q->help = true; return 0; }
static int do_version(struct parse *p, const char *a) { p->q->version = true; return 0; }

/* libvirt's seccomp_sandbox = 0 gives "-sandbox off"; anything else is on. */
static int do_sandbox(struct parse *p, const char *a)
{
	p->q->no_seccomp = !strcmp(a, "off");
	return 0;
}

static int do_refuse(struct parse *p, const char *a)
{
	return -ENOTSUP;	/* the caller names the option */
}

/*
 * One row per option. A row with @help is one a QEMU user types by hand
 * and -help explains; the rest are listed by name as libvirt's. Rows in
 * the order -help shows them.
 */
struct qemu_opt {
	const char *name;
	bool arg;
	int (*fn)(struct parse *p, const char *arg);
	const char *why;	/* do_refuse: what gpmm lacks */
	const char *metavar;	/* -help: the argument's form */
	const char *help;	/* -help: what it does here */
	bool hidden;		/* -help says it under the row before (an alias) */
};

static const struct qemu_opt qemu_opts[] = {
	{ "kernel", true, do_kernel, NULL, "FILE",
	  "bzImage, PVH vmlinux or flat payload (required)" },
	{ "initrd", true, do_initrd, NULL, "FILE", "the kernel's initramfs" },
	{ "append", true, do_append, NULL, "CMDLINE", "the kernel's command line (console=ttyS0)" },
	{ "m", true, do_m, NULL, "SIZE", "guest RAM: 256 (MiB), 1G, size=512M" },
	{ "smp", true, do_smp, NULL, "N", "vCPUs: 2, cpus=2, sockets=2,cores=2 (1 to 32)" },
	{ "nographic", false, do_nographic, NULL, "",
	  "the serial console on this terminal\n(raw: Ctrl-C goes to the guest; Ctrl-A x leaves)" },
	{ "serial", true, do_serial, NULL, "DEV",
	  "where the serial console goes: stdio, mon:stdio,\n"
	  "pty, file:PATH, unix:PATH,server=on, null, none" },
	{ "name", true, do_name, NULL, "NAME", "the VM's name (gpmm status, gpmm frag)" },
	{ "drive", true, do_drive, NULL, "file=F,format=raw,if=virtio",
	  "the VM's disk: virtio-blk over a raw image" },
	{ "netdev", true, do_netdev, NULL, "tap,id=ID,ifname=NAME|fd=N",
	  "a host tap (-device virtio-net-pci,netdev=ID)" },
	{ "qmp", true, do_qmp, NULL, "unix:PATH,server=on", "a QMP socket" },
	{ "no-reboot", false, do_no_reboot, NULL, "", "a guest reboot ends gpmm-qemu" },
	{ "enable-kvm", false, do_nothing, NULL, "", "accepted: gpmm runs on KVM only" },
	{ "accel", true, do_accel, NULL, "kvm", "accepted; any other accelerator is refused" },
	{ "machine", true, do_machine, NULL, "TYPE[,accel=kvm]",
	  "accepted (-M too); gpmm's machine is its own" },
	{ "M", true, do_machine, .hidden = true },
	{ "cpu", true, do_nothing, NULL, "MODEL",
	  "accepted; the guest sees the CPUID KVM offers" },
	{ "display", true, do_display, NULL, "none", "accepted, as is -vga none: there is no display" },
	{ "vga", true, do_vga, .hidden = true },
	{ "monitor", true, do_monitor, NULL, "none", "accepted: no human monitor (QMP: -qmp)" },
	{ "version", false, do_version, NULL, "", "QEMU's version line, saying it is gpmm" },
	{ "help", false, do_help, NULL, "", "this text (-h, --help)" },
	{ "h", false, do_help, .hidden = true },
	{ "S", false, do_paused },
	{ "object", true, do_object },
	{ "overcommit", true, do_nothing },
	{ "uuid", true, do_uuid },
	{ "no-user-config", false, do_nothing },
	{ "nodefaults", false, do_nodefaults },
	{ "no-acpi", false, do_nothing },	/* gpmm's power-off needs its ACPI tables */
	{ "no-hpet", false, do_nothing },
	{ "chardev", true, do_chardev },
	{ "mon", true, do_mon },
	{ "add-fd", true, do_add_fd },
	{ "rtc", true, do_nothing },
	{ "global", true, do_nothing },
	{ "no-shutdown", false, do_no_shutdown },
	{ "boot", true, do_nothing },
	{ "device", true, do_device },
	{ "blockdev", true, do_blockdev },
	{ "audiodev", true, do_nothing },
	{ "sandbox", true, do_sandbox },
	{ "msg", true, do_nothing },
	{ "pidfile", true, do_pidfile },
	{ "daemonize", false, do_daemonize },
	{ "nic", true, do_refuse, "-nic shorthand: -netdev tap + -device virtio-net-pci" },
	{ "hda", true, do_refuse, "IDE disk (-drive file=F,format=raw,if=virtio is a virtio one)" },
	{ "cdrom", true, do_refuse, "CD-ROM" },
	{ "incoming", true, do_refuse, "incoming migration" },
	{ "vnc", true, do_refuse, "display" },
	{ "spice", true, do_refuse, "display" },
	{ "bios", true, do_refuse, "firmware boot (give a -kernel; libvirt: a <kernel>)" },
	{ "loadvm", true, do_refuse, "snapshots" },
};

#define NR_QEMU_OPTS	(sizeof(qemu_opts) / sizeof(qemu_opts[0]))

static const struct qemu_opt *find_opt(const char *s)
{
	if (s[0] != '-')
		return NULL;
	s += s[1] == '-' ? 2 : 1;
	for (size_t i = 0; i < NR_QEMU_OPTS; i++)
		if (!strcmp(qemu_opts[i].name, s))
			return &qemu_opts[i];
	return NULL;
}

/*
 * -help is made from the table, so what it says a user may type is what
 * the parser takes: the hand-typed rows with their forms, libvirt's by
 * name, the refused ones with what gpmm lacks.
 */
void qemu_args_usage(FILE *f)
{
	int col;

	fprintf(f, "usage: gpmm-qemu [QEMU options]   (or: gpmm qemu [QEMU options])\n"
		"gpmm's QEMU front end: QEMU's command line, the guest run by gpmm on KVM.\n"
		"  gpmm-qemu -kernel bzImage -initrd initrd.gz -m 256 -smp 2 -nographic \\\n"
		"            -append console=ttyS0\n"
		"boots with the guest's serial console on this terminal; the guest's poweroff\n"
		"ends gpmm-qemu with status 0.\n\n");
	for (size_t i = 0; i < NR_QEMU_OPTS; i++) {
		const struct qemu_opt *o = &qemu_opts[i];
		char form[64];

		if (!o->help)
			continue;
		snprintf(form, sizeof(form), "-%s%s%s", o->name, o->metavar[0] ? " " : "", o->metavar);
		if (strlen(form) > 28)
			fprintf(f, "  %s\n  %-28s ", form, "");
		else
			fprintf(f, "  %-28s ", form);
		for (const char *h = o->help; *h; h++) {
			if (*h == '\n')
				fprintf(f, "\n  %-28s ", "");
			else
				fputc(*h, f);
		}
		fputc('\n', f);
	}
	col = fprintf(f, "\nas libvirt writes them (docs/libvirt.md):") - 1;
	for (size_t i = 0; i < NR_QEMU_OPTS; i++) {
		const struct qemu_opt *o = &qemu_opts[i];

		if (o->help || o->hidden || o->fn == do_refuse)
			continue;
		if (col + strlen(o->name) + 2 > 78) {
			fprintf(f, "\n ");
			col = 1;
		}
		col += fprintf(f, " -%s", o->name);
	}
	fprintf(f, "\n\nrefused, as gpmm has no such thing:\n");
	for (size_t i = 0; i < NR_QEMU_OPTS; i++)
		if (qemu_opts[i].fn == do_refuse)
			fprintf(f, "  -%-12s %s\n", qemu_opts[i].name, qemu_opts[i].why);
	fprintf(f, "and any option, device or back end not named here, each with its reason.\n"
		"libvirt's capability probe (-machine none ... -daemonize) runs the real QEMU.\n");
}

/*
 * QEMU's first line, for whatever reads the version from it, saying that
 * this is gpmm. libvirt 9.0 itself never runs the emulator with -version
 * or -help: it learns the version from QMP, through the probe.
 */
void qemu_args_version(FILE *f)
{
	fprintf(f, "QEMU emulator version %s (gpmm's QEMU front end, not QEMU)\n"
		"gpmm reads QEMU %s's command line and answers its QMP; the guest runs on gpmm, "
		"a KVM hypervisor.\n", QEMU_FRONT_END_VERSION, QEMU_FRONT_END_VERSION);
}

bool qemu_args_is_probe(int argc, char **argv)
{
	bool none = false, daemonize = false;

	for (int i = 1; i < argc; i++) {
		const struct qemu_opt *o = find_opt(argv[i]);

		if (o && o->fn == do_machine && i + 1 < argc)
			none |= opt_is(argv[i + 1], "type", "type", "none");
		if (o && o->fn == do_daemonize)
			daemonize = true;
	}
	return none && daemonize;
}

/* @path is /dev/fdset/N: *@fd becomes the descriptor -add-fd put in set N. */
static int fdset_fd(struct parse *p, const char *id, const char *path, int *fd)
{
	int set;

	if (sscanf(path, "/dev/fdset/%d", &set) != 1)
		return 0;
	for (unsigned int k = 0; k < p->q->nr_fdsets; k++)
		if (p->q->fdsets[k].set == set)
			*fd = p->q->fdsets[k].fd;
	if (*fd < 0)
		return fail(p, -EINVAL, "-chardev %s: no -add-fd for %s", id, path);
	return 0;
}

/*
 * The serial port's chardev as the console spec `gpmm run --console`
 * takes. A socket gpmm would connect out on, or one libvirt passed
 * connected, is no console kind of gpmm's.
 */
static int serial_console(struct parse *p)
{
	struct qemu_cmdline *q = p->q;
	const struct qemu_chardev *c = q->serial >= 0 ? &q->chardevs[q->serial] : NULL;
	char *spec = q->cfg.console;
	size_t len = sizeof(q->cfg.console);

	switch (c ? (int)c->kind : -1) {
	case QEMU_CHARDEV_STDIO:
		snprintf(spec, len, "stdio");
		break;
	case QEMU_CHARDEV_PTY:
		snprintf(spec, len, "pty");
		break;
	case QEMU_CHARDEV_FILE:
		if (c->fd >= 0)
			snprintf(spec, len, "fd:%d", c->fd);
		else
			snprintf(spec, len, "file:%s", c->path);
		break;
	case QEMU_CHARDEV_SOCKET:
		if (c->fd >= 0 || !c->server)
			return fail(p, -ENOTSUP, "serial chardev '%s': gpmm's console is stdio, a pty, "
				    "a file, a unix socket it listens on, or nothing", c->id);
		snprintf(spec, len, "socket:%s", c->path);
		break;
	default:		/* no serial port, or QEMU_CHARDEV_NULL */
		snprintf(spec, len, "none");
	}
	return 0;
}

/*
 * What the whole command line says once every option is read. As in
 * QEMU, -nographic puts the serial port on stdio unless a serial port
 * was given its own back end or -nodefaults asked for no default ones.
 */
static int finish(struct parse *p)
{
	struct qemu_cmdline *q = p->q;
	int ret;

	q->cfg.ram_bytes = p->m_bytes ? p->m_bytes : q->cfg.ram_bytes;
	for (unsigned int i = 0; p->machine_backend[0] && i < p->nr_backends; i++)
		if (!strcmp(p->backends[i].id, p->machine_backend) && p->backends[i].size)
			q->cfg.ram_bytes = p->backends[i].size;
	if (p->serial_id[0]) {
		q->serial = find_chardev(p, p->serial_id);
		if (q->serial < 0)
			return fail(p, -EINVAL, "serial port on chardev '%s', which is not defined",
				    p->serial_id);
	} else if (p->nographic && !p->nodefaults && !q->serial_chosen) {
		struct qemu_chardev *c = new_serial_chardev(p);

		if (!c)
			return -ENOTSUP;
		c->kind = QEMU_CHARDEV_STDIO;
		q->serial_chosen = true;
	}
	/* a file or log on /dev/fdset/N is the descriptor -add-fd gave */
	for (unsigned int i = 0; i < q->nr_chardevs; i++) {
		struct qemu_chardev *c = &q->chardevs[i];

		if (c->kind == QEMU_CHARDEV_FILE && fdset_fd(p, c->id, c->path, &c->fd))
			return -EINVAL;
		if (c->logfile[0] && fdset_fd(p, c->id, c->logfile, &c->log_fd))
			return -EINVAL;
	}
	ret = serial_console(p);
	if (ret)
		return ret;
	if (q->daemonize && !strcmp(q->cfg.console, "stdio"))
		return fail(p, -EINVAL, "-daemonize: the serial console is on stdio (-nographic, "
			    "-serial stdio), which a daemon leaves; give -serial pty or file:PATH");
	if (p->disk_node[0]) {
		const char *node = p->disk_node;

		/* a raw format node names its file node */
		for (unsigned int i = 0; i < p->nr_blk; i++)
			if (!strcmp(p->blk[i].node, node) && p->blk[i].raw) {
				q->cfg.disk_readonly |= p->blk[i].ro;
				node = p->blk[i].file;
			}
		for (unsigned int i = 0; i < p->nr_blk; i++)
			if (!strcmp(p->blk[i].node, node) && !p->blk[i].raw) {
				snprintf(q->cfg.disk, sizeof(q->cfg.disk), "%s", p->blk[i].filename);
				q->cfg.disk_readonly |= p->blk[i].ro;
			}
		if (!q->cfg.disk[0])
			return fail(p, -EINVAL, "disk on block node '%s', which names no file",
				    p->disk_node);
	}
	ret = finish_nics(p);
	if (ret)
		return ret;
	if (!q->cfg.kernel[0])
		return fail(p, -ENOTSUP, "gpmm boots the kernel -kernel names (libvirt: the domain's "
			    "<kernel>); it has no firmware to boot a disk");
	config_finish(&q->cfg);		/* a VM without -name is named after its kernel */
	return 0;
}

int qemu_args_parse(int argc, char **argv, struct qemu_cmdline *q, char *err, size_t errlen)
{
	struct parse p = { .q = q, .err = err, .errlen = errlen };

	memset(q, 0, sizeof(*q));
	config_defaults(&q->cfg);
	q->cfg.balloon = false;		/* only with its -device */
	q->monitor = q->serial = -1;
	snprintf(q->cfg.console, sizeof(q->cfg.console), "none");
	for (int i = 1; i < argc; i++) {
		const struct qemu_opt *o = find_opt(argv[i]);
		const char *arg = NULL;
		int ret;

		if (!o)
			return fail(&p, -ENOTSUP, "%s: gpmm does not know this QEMU option "
				    "(gpmm-qemu -help lists those it takes)", argv[i]);
		if (o->arg) {
			if (i + 1 >= argc)
				return fail(&p, -EINVAL, "%s needs an argument", argv[i]);
			arg = argv[++i];
		}
		ret = o->fn(&p, arg ? arg : "");
		if (ret == -ENOTSUP && o->fn == do_refuse)
			return fail(&p, ret, "%s: gpmm has no %s", argv[i - o->arg], o->why);
		if (ret)
			return ret;
		if (q->probe || q->help || q->version)
			return 0;
	}
	return finish(&p);
}
