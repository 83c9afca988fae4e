// SPDX-License-Identifier: GPL-2.0
/*
 * CLI commands that run or steer VMs: run, daemon, status, stop, pause,
 * resume. The only place (with cli.c) that prints errors and exits.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "vmm/core/config.h"
#include "vmm/control/daemon.h"
#include "vmm/sys/host.h"
#include "vmm/core/kvm.h"
#include "vmm/pool_service/pool_service.h"
#include "vmm/control/qmp_client.h"
#include "vmm/sys/sandbox.h"

static const char run_usage[] =
	"usage: gpmm run [CONFIG.ini] [--kernel FILE] [--initrd FILE] [--append CMDLINE]\n"
	"                [--ram SIZE] [--cpus N] [--console stdio|pty|socket:PATH|file:PATH|none]\n"
	"                [--pool SIZE] [--name NAME] [--prefault] [--qmp PATH]\n"
	"                [--daemon SOCK] [--stats] [--huge on|off] [--huge-fill]\n"
	"                [--huge-rate RANGES_PER_S] [--huge-target PCT]\n"
	"                [--disk FILE] [--balloon on|off] [--pool-huge on|off]\n"
	"                [--pool-release-ms MS] [--pool-populate] [--fault huge|4k|auto]\n"
	"                [--host-pool[=SOCKET] | --own-pool] [--no-seccomp]\n"
	"Boots a Linux bzImage (x86 boot protocol, ACPI; the guest's poweroff ends\n"
	"the run with status 0, its reboot restarts it) or a flat payload (its boot\n"
	"protocol: docs/running.md) with guest RAM from a pool of host frames;\n"
	"exits with the guest's exit code (255: the VM failed, the reason on\n"
	"stderr). The serial console is the terminal by default (raw; Ctrl-A x\n"
	"leaves).\n"
	"With --daemon, a running `gpmm daemon`\n"
	"hosts the VM, which lives as long as this command does. --stats prints\n"
	"the VM's and the pool's statistics (buddyinfo, pagetypeinfo) at the end.\n"
	"Guest RAM is moved onto 2 MiB host pages while it runs (--huge off to\n"
	"stop that; --huge-fill populates partly touched 2 MiB ranges to do it).\n"
	"--disk gives the guest a raw image as virtio-blk; the virtio balloon (on\n"
	"by default) hands memory the guest frees back to the pool.\n"
	"The pool takes host memory a 2 MiB block at a time, made one host huge\n"
	"page when first used (--pool-huge off: 4 KiB host pages), and gives a\n"
	"block back to the host once it stayed free MS to 2xMS ms (default 1000,\n"
	"0: never): --pool is a ceiling, not a reservation. --pool-populate takes\n"
	"the whole pool at start, as host huge pages, and keeps it (a reservation).\n"
	"--fault: the first touch of a 2 MiB range takes a whole free 2 MiB block\n"
	"(huge), 64 KiB of 4 KiB pages (4k), or a block while the pool keeps free\n"
	"blocks above 1/16 of it (auto, the default); --huge off and --huge-target\n"
	"below 100 leave first touches to 4 KiB pages.\n"
	"--host-pool: guest RAM is lent by the host's pool service (`gpmm daemon`,\n"
	"default socket $GPMM_RUN_DIR/pool.sock), shared with every VM process on\n"
	"the host; used by default when that socket exists (--own-pool: never).\n"
	"Once set up, the process runs under a seccomp allow-list and each vCPU\n"
	"thread under a narrower one; a forbidden system call is named on stderr\n"
	"and ends this process (SIGSYS). --no-seccomp drops both, for debugging.\n"
	"Config keys (INI, top level or [vm]): name ram cpus kernel initrd append\n"
	"console pool pool_huge pool_release_ms pool_populate fault prefault qmp huge huge_fill\n"
	"huge_rate huge_target disk disk_readonly balloon balloon_reporting.\n";

static int set_opt(struct vm_config *cfg, const char *key, const char *val)
{
	char err[256];

	if (config_set(cfg, key, val, err, sizeof(err))) {
		fprintf(stderr, "gpmm run: %s\n", err);
		return -1;
	}
	return 0;
}

static bool run_stats, run_no_seccomp;

static enum host_pool_use host_pool;
static char host_pool_path[108];

static int parse_run_args(int argc, char **argv, struct vm_config *cfg,
			  const char **daemon_sock)
{
	static const struct option opts[] = {
		{ "kernel", required_argument, NULL, 'k' },
		{ "initrd", required_argument, NULL, 'i' },
		{ "append", required_argument, NULL, 'a' },
		{ "console", required_argument, NULL, 'C' },
		{ "ram", required_argument, NULL, 'm' },
		{ "cpus", required_argument, NULL, 'c' },
		{ "pool", required_argument, NULL, 'p' },
		{ "name", required_argument, NULL, 'n' },
		{ "qmp", required_argument, NULL, 'q' },
		{ "prefault", no_argument, NULL, 'f' },
		{ "daemon", required_argument, NULL, 'd' },
		{ "stats", no_argument, NULL, 's' },
		{ "huge", required_argument, NULL, 'H' },
		{ "huge-fill", no_argument, NULL, 'F' },
		{ "huge-rate", required_argument, NULL, 'R' },
		{ "huge-target", required_argument, NULL, 'T' },
		{ "disk", required_argument, NULL, 'D' },
		{ "balloon", required_argument, NULL, 'B' },
		{ "pool-huge", required_argument, NULL, 'P' },
		{ "pool-release-ms", required_argument, NULL, 'r' },
		{ "pool-populate", no_argument, NULL, 'E' },
		{ "fault", required_argument, NULL, 'U' },
		{ "host-pool", optional_argument, NULL, 'O' },
		{ "own-pool", no_argument, NULL, 'o' },
		{ "no-seccomp", no_argument, NULL, 'X' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	char err[512];
	int c;

	config_defaults(cfg);
	/*
	 * A config file first, so options given beside it override it. The
	 * option table itself tells which arguments are files: a first quiet
	 * getopt pass moves every non-option argument behind the options
	 * (GNU permutation), whatever flags, abbreviations or '=' forms came
	 * with them.
	 */
	optind = 0;	/* glibc: rescan from scratch */
	opterr = 0;
	while (getopt_long(argc, argv, "h", opts, NULL) != -1)
		;
	opterr = 1;
	for (int i = optind; i < argc; i++) {
		if (config_load(argv[i], cfg, err, sizeof(err))) {
			fprintf(stderr, "gpmm run: %s\n", err);
			return 2;
		}
	}
	optind = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		const char *key = NULL;

		switch (c) {
		case 'k': key = "kernel"; break;
		case 'i': key = "initrd"; break;
		case 'a': key = "append"; break;
		case 'C': key = "console"; break;
		case 'm': key = "ram"; break;
		case 'c': key = "cpus"; break;
		case 'p': key = "pool"; break;
		case 'n': key = "name"; break;
		case 'q': key = "qmp"; break;
		case 'f': cfg->prefault = true; break;
		case 'd': *daemon_sock = optarg; break;
		case 's': run_stats = true; break;
		case 'H': key = "huge"; break;
		case 'F': cfg->huge_fill = true; break;
		case 'R': key = "huge_rate"; break;
		case 'T': key = "huge_target"; break;
		case 'D': key = "disk"; break;
		case 'B': key = "balloon"; break;
		case 'P': key = "pool_huge"; break;
		case 'r': key = "pool_release_ms"; break;
		case 'E': cfg->pool_host.populate = true; break;
		case 'U': key = "fault"; break;
		case 'O':
			host_pool = HOST_POOL_REQUIRED;
			if (optarg)
				snprintf(host_pool_path, sizeof(host_pool_path), "%s", optarg);
			break;
		case 'o': host_pool = HOST_POOL_NEVER; break;
		case 'X': run_no_seccomp = true; break;
		case 'h': fputs(run_usage, stdout); return 1;
		default: fputs(run_usage, stderr); return 2;
		}
		if (key && set_opt(cfg, key, optarg))
			return 2;
	}
	if (!cfg->kernel[0]) {
		fprintf(stderr, "gpmm run: no kernel: give --kernel FILE or kernel= in a config\n%s",
			run_usage);
		return 2;
	}
	config_finish(cfg);
	return 0;
}

/*
 * Every guest page is its own mapping; pages with adjacent frames merge,
 * but a scattered guest can need one VMA per page, and vm.max_map_count
 * caps them.
 */
static void warn_map_count(const struct vm_config *cfg)
{
	unsigned long long max = host_max_map_count(), pages = cfg->ram_bytes >> MM_PAGE_SHIFT;

	if (max && pages > max / 2)
		fprintf(stderr, "gpmm run: note: %llu guest pages against vm.max_map_count = %llu;"
			" if guest memory ends up scattered the host may run out of mappings"
			" (raise it with sysctl vm.max_map_count)\n", pages, max);
}

/*
 * The host pool service when asked for, or when its socket exists (said
 * on stderr, prefixed @who, with @opt_out, the way not to, if any); else
 * a pool of this VM's own.
 * -EHOSTDOWN: asked for and not there, or refused by it (said).
 */
int cli_open_pool(struct vm_config *cfg, enum host_pool_use use, const char *sock,
		  const char *who, const char *opt_out, struct pool **pool)
{
	char err[512], path[108];
	int ret;

	if (sock && sock[0])
		snprintf(path, sizeof(path), "%s", sock);
	else
		snprintf(path, sizeof(path), "%s/pool.sock", gpmm_run_dir());
	if (use == HOST_POOL_NEVER || (use == HOST_POOL_AUTO && access(path, F_OK)))
		return pool_open_host(cfg->pool_bytes, true, &cfg->pool_host, pool);
	ret = pool_open_remote(path, cfg->name, cfg->ram_bytes, pool, err, sizeof(err));
	if (!ret) {
		fprintf(stderr, "%s: guest RAM from the host pool service on %s", who, path);
		if (use == HOST_POOL_AUTO && opt_out)
			fprintf(stderr, " (%s: a pool of its own)", opt_out);
		fputc('\n', stderr);
		return 0;
	}
	/*
	 * A service that answered and refused the VM (its RAM, admission) has
	 * the last word: a pool of its own would bypass the host's admission.
	 */
	if (use == HOST_POOL_REQUIRED || ret == -EINVAL || ret == -ENOSPC) {
		fprintf(stderr, "%s: host pool: %s\n", who, err);
		return -EHOSTDOWN;
	}
	fprintf(stderr, "%s: the host pool service on %s did not serve this VM (%s): "
		"a pool of its own instead\n", who, path, err);
	return pool_open_host(cfg->pool_bytes, true, &cfg->pool_host, pool);
}

/* What no VM can run without, first: not a socket path's permissions. */
int cli_check_host(const char *who)
{
	char prefix[64];

	if (!host_has(HOST_KVM) || !host_has(HOST_UFFD)) {
		enum host_cap_id id = host_has(HOST_KVM) ? HOST_UFFD : HOST_KVM;

		fprintf(stderr, "%s: %s\n", who, host_caps()->cap[id].detail);
		return -ENODEV;
	}
	snprintf(prefix, sizeof(prefix), "%s: host: ", who);
	host_caps_print_missing(stderr, prefix);
	return 0;
}

void cli_sandbox(struct daemon *d, bool off, const char *who)
{
	char err[256];

	if (off) {
		fprintf(stderr, "%s: --no-seccomp: running without a syscall filter\n", who);
		return;
	}
	d->sandboxed = !sandbox_enter_vmm(err, sizeof(err));
	if (!d->sandboxed)
		fprintf(stderr, "%s: %s: running without a syscall filter, so a guest that "
			"breaks a device model gets every system call of this process\n", who, err);
}

static int run_foreground(struct vm_config *cfg)
{
	struct pool *pool;
	struct daemon d;
	char err[512];
	int ret;

	if (cli_check_host("gpmm run"))
		return 1;
	warn_map_count(cfg);
	if (!cfg->qmp_path[0])
		snprintf(cfg->qmp_path, sizeof(cfg->qmp_path), "%s/%s.qmp",
			 gpmm_run_dir(), cfg->name);
	ret = cli_open_pool(cfg, host_pool, host_pool_path, "gpmm run", "--own-pool", &pool);
	if (ret == -EHOSTDOWN)
		return 1;
	if (ret) {
		fprintf(stderr, "gpmm run: cannot create a %llu MiB pool: %s\n",
			(unsigned long long)(cfg->pool_bytes >> 20),
			ret == -EINVAL ? "the size must be a multiple of 2 MiB" : strerror(-ret));
		return 2;
	}
	ret = daemon_init(&d, pool, NULL, err, sizeof(err));
	if (!ret)
		cli_sandbox(&d, run_no_seccomp, "gpmm run");
	if (!ret)
		ret = daemon_add_vm(&d, cfg, &(struct dvm_opts){ .foreground = true,
				    .qmp_listen_fd = -1, .console_log_fd = -1 }, NULL, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "gpmm run: %s\n", err);
		daemon_fini(&d);
		pool_close(pool);
		return ret == -ENOENT || ret == -EINVAL || ret == -EFBIG ||
		       ret == -E2BIG ? 2 : 1;
	}
	d.exit_when_idle = true;
	d.print_stats = run_stats;
	ret = daemon_loop(&d);
	daemon_fini(&d);
	pool_close(pool);
	return ret < 0 ? 1 : ret & 0xff;
}

struct remote_run {
	int exit_code;
	bool ended;
};

static void remote_event(json_t *ev, void *opaque)
{
	struct remote_run *r = opaque;
	const char *name = json_string_value(json_object_get(ev, "event"));
	json_t *data = json_object_get(ev, "data");

	if (!name)
		return;
	if (!strcmp(name, "GPMM_CONSOLE")) {
		const char *text = json_string_value(json_object_get(data, "text"));
		size_t len = json_string_length(json_object_get(data, "text"));

		if (text && fwrite(text, 1, len, stdout) == len)
			fflush(stdout);
	} else if (!strcmp(name, "SHUTDOWN")) {
		const char *report = json_string_value(json_object_get(data, "report"));

		r->exit_code = (int)json_integer_value(json_object_get(data, "exit-code"));
		r->ended = true;
		if (report && *report)
			fprintf(stderr, "gpmm: VM stopped: %s", report);
	}
}

static int run_remote(const char *sock, const struct vm_config *cfg)
{
	struct remote_run r = { 0 };
	struct qmp_client q;
	char err[512], kernel[PATH_MAX], disk[PATH_MAX];
	json_t *args, *ret, *ev;

	if (!realpath(cfg->kernel, kernel)) {
		fprintf(stderr, "gpmm run: cannot read kernel %s: %s\n", cfg->kernel,
			strerror(errno));
		return 2;
	}
	if (qmpc_connect(&q, sock, err, sizeof(err))) {
		fprintf(stderr, "gpmm run: %s\n", err);
		return 1;
	}
	args = json_pack("{s:s, s:I, s:i, s:s, s:b}", "name", cfg->name,
			 "ram", (json_int_t)cfg->ram_bytes, "cpus", (int)cfg->cpus,
			 "kernel", kernel, "prefault", cfg->prefault);
	if (cfg->qmp_path[0])
		json_object_set_new(args, "qmp", json_string(cfg->qmp_path));
	if (cfg->initrd[0]) {
		char initrd[PATH_MAX];

		if (!realpath(cfg->initrd, initrd)) {
			fprintf(stderr, "gpmm run: cannot read initrd %s: %s\n", cfg->initrd,
				strerror(errno));
			json_decref(args);
			qmpc_close(&q);
			return 2;
		}
		json_object_set_new(args, "initrd", json_string(initrd));
	}
	if (cfg->append[0])
		json_object_set_new(args, "append", json_string(cfg->append));
	/* the daemon has no terminal of ours: stdio means its events, here */
	if (strcmp(cfg->console, "stdio"))
		json_object_set_new(args, "console", json_string(cfg->console));
	json_object_set_new(args, "huge", json_boolean(cfg->huge));
	json_object_set_new(args, "huge_fill", json_boolean(cfg->huge_fill));
	json_object_set_new(args, "huge_rate", json_integer(cfg->huge_rate));
	json_object_set_new(args, "huge_target", json_integer(cfg->huge_target));
	json_object_set_new(args, "balloon", json_boolean(cfg->balloon));
	if (cfg->disk[0]) {	/* the daemon has its own working directory */
		json_object_set_new(args, "disk", json_string(realpath(cfg->disk, disk) ?
								disk : cfg->disk));
		json_object_set_new(args, "disk_readonly", json_boolean(cfg->disk_readonly));
	}
	ret = qmpc_execute(&q, "gpmm-vm-create", args, remote_event, &r, err, sizeof(err));
	if (!ret) {
		fprintf(stderr, "gpmm run: the daemon refused: %s\n", err);
		qmpc_close(&q);
		return 2;
	}
	json_decref(ret);
	qmpc_wait_forever(&q);
	while (!r.ended && (ev = qmpc_read(&q))) {
		remote_event(ev, &r);
		json_decref(ev);
	}
	qmpc_close(&q);
	if (!r.ended) {
		fprintf(stderr, "gpmm run: lost the daemon\n");
		return 1;
	}
	return r.exit_code & 0xff;
}

int cmd_run(int argc, char **argv)
{
	const char *daemon_sock = NULL;
	struct vm_config cfg;
	int ret = parse_run_args(argc, argv, &cfg, &daemon_sock);

	if (ret)
		return ret == 1 ? 0 : ret;
	return daemon_sock ? run_remote(daemon_sock, &cfg) : run_foreground(&cfg);
}

static const char daemon_usage[] =
	"usage: gpmm daemon [--socket PATH] [--pool SIZE] [--buddy]\n"
	"                   [--pool-huge on|off] [--pool-release-ms MS] [--pool-populate]\n"
	"                   [--pool-socket PATH|none] [--pool-answer-ms MS] [--metrics FILE]\n"
	"                   [--no-seccomp]\n"
	"Owns one pool and serves many VMs; `gpmm run --daemon PATH` starts one.\n"
	"Speaks QMP on PATH (default $GPMM_RUN_DIR/gpmm.sock, /run/gpmm/gpmm.sock).\n"
	"--pool-huge, --pool-release-ms and --pool-populate as for gpmm run.\n"
	"Lends the pool to VM processes (`gpmm run --host-pool`) on --pool-socket\n"
	"(default $GPMM_RUN_DIR/pool.sock); one that does not answer a request to\n"
	"move a page in --pool-answer-ms (default 3000) is treated as pinned.\n"
	"--metrics keeps FILE in Prometheus' text format, rewritten every second.\n"
	"--no-seccomp: no syscall filter (for debugging; see gpmm run).\n";

int cmd_daemon(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "pool", required_argument, NULL, 'p' },
		{ "buddy", no_argument, NULL, 'b' },
		{ "pool-huge", required_argument, NULL, 'P' },
		{ "pool-release-ms", required_argument, NULL, 'r' },
		{ "pool-populate", no_argument, NULL, 'E' },
		{ "pool-socket", required_argument, NULL, 'S' },
		{ "pool-answer-ms", required_argument, NULL, 'A' },
		{ "metrics", required_argument, NULL, 'M' },
		{ "no-seccomp", no_argument, NULL, 'X' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	char pool_sock[108], metrics[PATH_MAX] = "";
	unsigned long answer_ms = 0;
	struct vm_config host;	/* parses the pool_* keys as gpmm run does */
	char path[108], err[512];
	bool grouping = true, no_seccomp = false;
	struct pool *pool;
	struct daemon d;
	char *end;
	int c, ret;

	snprintf(path, sizeof(path), "%s/gpmm.sock", gpmm_run_dir());
	snprintf(pool_sock, sizeof(pool_sock), "%s/pool.sock", gpmm_run_dir());
	config_defaults(&host);
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		const char *key = NULL;

		switch (c) {
		case 's': snprintf(path, sizeof(path), "%s", optarg); break;
		case 'p': key = "pool"; break;
		case 'b': grouping = false; break;
		case 'P': key = "pool_huge"; break;
		case 'r': key = "pool_release_ms"; break;
		case 'E': host.pool_host.populate = true; break;
		case 'S': snprintf(pool_sock, sizeof(pool_sock), "%s", optarg); break;
		case 'M': snprintf(metrics, sizeof(metrics), "%s", optarg); break;
		case 'X': no_seccomp = true; break;
		case 'A':
			answer_ms = strtoul(optarg, &end, 10);
			if (*end || !answer_ms || answer_ms > 600000) {
				fprintf(stderr, "gpmm daemon: --pool-answer-ms wants 1..600000\n");
				return 2;
			}
			break;
		case 'h': fputs(daemon_usage, stdout); return 0;
		default: fputs(daemon_usage, stderr); return 2;
		}
		if (key && config_set(&host, key, optarg, err, sizeof(err))) {
			fprintf(stderr, "gpmm daemon: %s\n", err);
			return 2;
		}
	}
	host_caps_print_missing(stderr, "gpmm daemon: host: ");
	ret = pool_open_host(host.pool_bytes, grouping, &host.pool_host, &pool);
	if (ret) {
		fprintf(stderr, "gpmm daemon: cannot create the pool: %s\n", strerror(-ret));
		return 1;
	}
	ret = daemon_init(&d, pool, path, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "gpmm daemon: %s\n", err);
		daemon_fini(&d);
		pool_close(pool);
		return 1;
	}
	snprintf(d.metrics_path, sizeof(d.metrics_path), "%s", metrics);
	if (strcmp(pool_sock, "none") &&
	    pool_service_start(pool, pool_sock, (unsigned int)answer_ms, &d.svc, err, sizeof(err))) {
		fprintf(stderr, "gpmm daemon: pool service: %s\n", err);
		daemon_fini(&d);
		pool_close(pool);
		return 1;
	}
	cli_sandbox(&d, no_seccomp, "gpmm daemon");
	d.verbose = true;
	if (d.svc)
		fprintf(stderr, "gpmm daemon: lending the pool to VM processes on %s\n", pool_sock);
	fprintf(stderr, "gpmm daemon: pool %llu MiB (%s), listening on %s\n",
		(unsigned long long)(pool->size >> 20),
		pool->host.populate ? "populated: host huge pages, kept" :
		pool->host.release_ms ? "host memory taken on use, given back when free" :
		"host memory taken on use, kept", path);
	daemon_loop(&d);
	/* the service first: its clients' frames go back before the pool goes */
	pool_service_stop(d.svc);
	d.svc = NULL;
	daemon_fini(&d);
	pool_close(pool);
	return 0;
}

/* gpmm status|stop|pause|resume [NAME | --qmp PATH] */
static int steer(int argc, char **argv, const char *cmd)
{
	static const struct option opts[] = {
		{ "qmp", required_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *qmp = NULL;
	char path[PATH_MAX], err[512];
	struct qmp_client q;
	json_t *ret;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'q': qmp = optarg; break;
		case 'h':
			printf("usage: gpmm %s [NAME | --qmp PATH]\n", argv[0]);
			return 0;
		default: return 2;
		}
	}
	if (!qmp && optind < argc) {
		snprintf(path, sizeof(path), "%s/%s.qmp", gpmm_run_dir(), argv[optind]);
		qmp = path;
	}
	if (!qmp) {
		fprintf(stderr, "usage: gpmm %s [NAME | --qmp PATH]\n", argv[0]);
		return 2;
	}
	if (qmpc_connect(&q, qmp, err, sizeof(err))) {
		fprintf(stderr, "gpmm %s: %s\n", argv[0], err);
		return 1;
	}
	ret = qmpc_execute(&q, cmd, NULL, NULL, NULL, err, sizeof(err));
	if (ret && !strcmp(cmd, "query-status")) {
		json_t *mem = qmpc_execute(&q, "query-memory-size-summary", NULL,
					   NULL, NULL, err, sizeof(err));

		printf("status: %s\nram: %lld MiB\n",
		       json_string_value(json_object_get(ret, "status")),
		       (long long)json_integer_value(json_object_get(mem, "base-memory")) >> 20);
		json_decref(mem);
	}
	qmpc_close(&q);
	if (!ret) {
		fprintf(stderr, "gpmm %s: %s\n", argv[0], err);
		return 1;
	}
	json_decref(ret);
	return 0;
}

int cmd_status(int argc, char **argv) { return steer(argc, argv, "query-status"); }
int cmd_stop(int argc, char **argv) { return steer(argc, argv, "quit"); }
int cmd_pause(int argc, char **argv) { return steer(argc, argv, "stop"); }
int cmd_resume(int argc, char **argv) { return steer(argc, argv, "cont"); }
