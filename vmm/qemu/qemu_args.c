// SPDX-License-Identifier: GPL-2.0
/*
 * QEMU's command line, as libvirt writes it, read into a gpmm VM config.
 * Two syntaxes: QemuOpts ("type,key=val,key2=val2", ",," for a comma in a
 * value, the first item naming an implied key) and, for -object, -device,
 * -blockdev and -audiodev, JSON (parsed with jansson). Each option is a
 * row of a table: its name, whether it takes an argument, what to do.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
 * QemuOpts: the value of @key in @opts, into @out; the first item, when it
 * has no '=', is the value of @implied. ",," stands for a comma. false
 * when the key is absent or the value does not fit.
 */
static bool opt_get(const char *opts, const char *key, const char *implied, char *out,
		    size_t n)
{
	for (bool first = true; *opts; first = false) {
		const char *eq = NULL, *p = opts;
		size_t len = 0;
		bool match;

		while (*p && !(*p == ',' && p[1] != ',')) {
			if (*p == '=' && !eq)
				eq = p;
			p += *p == ',' ? 2 : 1;
		}
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
	char v[64];
	size_t len;

	if (!opt_get(arg, "size", "size", v, sizeof(v)))
		return fail(p, -EINVAL, "-m %s: no size", arg);
	/* no suffix: MiB, as QEMU reads it */
	len = strlen(v);
	if (len && v[len - 1] >= '0' && v[len - 1] <= '9' && len + 1 < sizeof(v))
		strcat(v, "M");
	if (config_parse_size(v, &p->m_bytes) || !p->m_bytes)
		return fail(p, -EINVAL, "-m %s: not a size", arg);
	return 0;
}

static int do_smp(struct parse *p, const char *arg)
{
	char v[32], *end;
	unsigned long n;

	if (!opt_get(arg, "cpus", "cpus", v, sizeof(v)))
		return fail(p, -EINVAL, "-smp %s: no CPU count", arg);
	n = strtoul(v, &end, 10);
	if (*end || n < 1 || n > VM_MAX_CPUS)
		return fail(p, -EINVAL, "-smp %s: gpmm runs 1 to %d vCPUs", arg, VM_MAX_CPUS);
	if (opt_get(arg, "maxcpus", NULL, v, sizeof(v)) && strtoul(v, NULL, 10) != n)
		return fail(p, -ENOTSUP, "-smp %s: gpmm has no CPU hotplug (maxcpus)", arg);
	p->q->cfg.cpus = (unsigned int)n;
	return 0;
}

static int do_display(struct parse *p, const char *arg)
{
	if (!opt_is(arg, "type", "type", "none"))
		return fail(p, -ENOTSUP, "-display %s: gpmm has no display (use <graphics> none)", arg);
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
	c->server = opt_is(arg, "server", NULL, "on") || opt_is(arg, "server", NULL, "true");
	if (!strcmp(backend, "socket"))
		c->kind = QEMU_CHARDEV_SOCKET;
	else if (!strcmp(backend, "pty"))
		c->kind = QEMU_CHARDEV_PTY;
	else if (!strcmp(backend, "file"))
		c->kind = QEMU_CHARDEV_FILE;
	else if (!strcmp(backend, "null"))
		c->kind = QEMU_CHARDEV_NULL;
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

static int do_serial(struct parse *p, const char *arg)
{
	if (!strncmp(arg, "chardev:", 8)) {
		snprintf(p->serial_id, sizeof(p->serial_id), "%s", arg + 8);
		return 0;
	}
	if (!strcmp(arg, "none"))
		return 0;
	return fail(p, -ENOTSUP, "-serial %s: name a -chardev (chardev:ID)", arg);
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
 * Devices gpmm has, by QEMU's names; the rest are refused by name. PCI
 * devices become gpmm's virtio-mmio ones (the guest learns of them from
 * ACPI, as from any gpmm VM).
 */
static int do_device(struct parse *p, const char *arg)
{
	json_t *o = object_arg(p, "device", arg, "driver");
	const char *driver;
	int ret = 0;

	if (!o)
		return -EINVAL;
	driver = jstr(o, "driver");
	if (p->q->nr_devices == QEMU_MAX_DEVICES) {
		ret = fail(p, -ENOTSUP, "-device %s: more devices than gpmm takes", driver);
		json_decref(o);		/* after: driver is o's */
		return ret;
	}
	if (!strcmp(driver, "isa-serial"))
		snprintf(p->serial_id, sizeof(p->serial_id), "%s", jstr(o, "chardev"));
	else if (!strcmp(driver, "virtio-balloon-pci") || !strcmp(driver, "virtio-balloon-device")) {
		p->q->cfg.balloon = true;
		/* libvirt's <memballoon freePageReporting='off'> */
		p->q->cfg.balloon_no_reporting = json_is_false(json_object_get(o, "free-page-reporting"));
	}
	else if (!strcmp(driver, "virtio-blk-pci") || !strcmp(driver, "virtio-blk-device")) {
		if (p->disk_node[0])
			ret = fail(p, -ENOTSUP, "-device %s: gpmm gives a VM one disk", driver);
		snprintf(p->disk_node, sizeof(p->disk_node), "%s", jstr(o, "drive"));
	} else
		ret = fail(p, -ENOTSUP, "-device %s: gpmm has no such device", driver);
	if (!ret && jstr(o, "id")[0]) {
		struct qemu_device *d = &p->q->devices[p->q->nr_devices++];

		snprintf(d->id, sizeof(d->id), "%s", jstr(o, "id"));
		snprintf(d->driver, sizeof(d->driver), "%s", driver);
	}
	json_decref(o);
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

struct qemu_opt {
	const char *name;
	bool arg;
	int (*fn)(struct parse *p, const char *arg);
	const char *why;	/* for do_refuse: what gpmm lacks */
};

static const struct qemu_opt qemu_opts[] = {
	{ "name", true, do_name },
	{ "S", false, do_paused },
	{ "object", true, do_object },
	{ "machine", true, do_machine },
	{ "M", true, do_machine },
	{ "accel", true, do_accel },
	{ "enable-kvm", false, do_nothing },
	{ "cpu", true, do_nothing },		/* gpmm passes KVM's supported CPUID */
	{ "m", true, do_m },
	{ "overcommit", true, do_nothing },
	{ "smp", true, do_smp },
	{ "uuid", true, do_uuid },
	{ "display", true, do_display },
	{ "nographic", false, do_nothing },
	{ "no-user-config", false, do_nothing },
	{ "nodefaults", false, do_nothing },
	{ "no-acpi", false, do_nothing },	/* gpmm's power-off needs its ACPI tables */
	{ "no-hpet", false, do_nothing },
	{ "chardev", true, do_chardev },
	{ "mon", true, do_mon },
	{ "qmp", true, do_qmp },
	{ "serial", true, do_serial },
	{ "add-fd", true, do_add_fd },
	{ "rtc", true, do_nothing },
	{ "global", true, do_nothing },
	{ "no-shutdown", false, do_no_shutdown },
	{ "boot", true, do_nothing },
	{ "kernel", true, do_kernel },
	{ "initrd", true, do_initrd },
	{ "append", true, do_append },
	{ "device", true, do_device },
	{ "blockdev", true, do_blockdev },
	{ "audiodev", true, do_nothing },
	{ "sandbox", true, do_sandbox },
	{ "msg", true, do_nothing },
	{ "pidfile", true, do_pidfile },
	{ "daemonize", false, do_daemonize },
	{ "netdev", true, do_refuse, "network devices" },
	{ "nic", true, do_refuse, "network devices" },
	{ "drive", true, do_refuse, "-drive (libvirt gives -blockdev)" },
	{ "incoming", true, do_refuse, "incoming migration" },
	{ "vnc", true, do_refuse, "a display" },
	{ "spice", true, do_refuse, "a display" },
	{ "bios", true, do_refuse, "firmware boot (give the domain a <kernel>)" },
	{ "loadvm", true, do_refuse, "snapshots" },
};

static const struct qemu_opt *find_opt(const char *s)
{
	if (s[0] != '-')
		return NULL;
	s += s[1] == '-' ? 2 : 1;
	for (size_t i = 0; i < sizeof(qemu_opts) / sizeof(qemu_opts[0]); i++)
		if (!strcmp(qemu_opts[i].name, s))
			return &qemu_opts[i];
	return NULL;
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

/* What the whole command line says once every option is read. */
static int finish(struct parse *p)
{
	struct qemu_cmdline *q = p->q;

	q->cfg.ram_bytes = p->m_bytes ? p->m_bytes : q->cfg.ram_bytes;
	for (unsigned int i = 0; p->machine_backend[0] && i < p->nr_backends; i++)
		if (!strcmp(p->backends[i].id, p->machine_backend) && p->backends[i].size)
			q->cfg.ram_bytes = p->backends[i].size;
	if (p->serial_id[0]) {
		q->serial = find_chardev(p, p->serial_id);
		if (q->serial < 0)
			return fail(p, -EINVAL, "serial port on chardev '%s', which is not defined",
				    p->serial_id);
	}
	/* a file or log on /dev/fdset/N is the descriptor -add-fd gave */
	for (unsigned int i = 0; i < q->nr_chardevs; i++) {
		struct qemu_chardev *c = &q->chardevs[i];

		if (c->kind == QEMU_CHARDEV_FILE && fdset_fd(p, c->id, c->path, &c->fd))
			return -EINVAL;
		if (c->logfile[0] && fdset_fd(p, c->id, c->logfile, &c->log_fd))
			return -EINVAL;
	}
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
	if (!q->cfg.kernel[0])
		return fail(p, -ENOTSUP, "gpmm boots a kernel given by the domain's <kernel> (-kernel); "
			    "it has no firmware to boot a disk");
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
			return fail(&p, -ENOTSUP, "%s: gpmm does not know this QEMU option", argv[i]);
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
		if (q->probe)
			return 0;
	}
	return finish(&p);
}
