// SPDX-License-Identifier: GPL-2.0
/*
 * CLI commands that run VMs: run (in the foreground or on a daemon) and
 * daemon, with the checks before a VM starts. The control verbs are in
 * cmd_ctl.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <grp.h>
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
#include "vmm/sys/unix_socket.h"

static const char run_usage[] =
	"usage: gpmm run [CONFIG.ini] [OPTION...]\n"
	"Boots a Linux bzImage or ELF vmlinux (the guest's poweroff ends the run\n"
	"with status 0, its reboot restarts it) or a flat payload (docs/running.md)\n"
	"with guest RAM from a pool of 2 MiB host blocks; exits with the guest's\n"
	"exit code (255: the VM failed, the reason on stderr). Options override\n"
	"the config's keys (INI, top level or [vm], named as the options with _\n"
	"for -; its file names are relative to the config file).\n"
	"The guest:\n"
	"  --kernel FILE            the kernel or payload (required)\n"
	"  --initrd FILE            an initramfs for a Linux kernel\n"
	"  --append CMDLINE         the kernel command line\n"
	"  --ram SIZE               guest RAM, a multiple of 2 MiB (default 128M;\n"
	"                           a bare number is MiB: 256 = 256M; 1.5G works)\n"
	"  --cpus N                 vCPUs, 1..32 (default 1)\n"
	"  --disk FILE              a raw image as virtio-blk\n"
	"  --net tap=NAME|fd=N[,mac=52:54:00:..][,offload=off]\n"
	"                           virtio-net over a host tap (repeat for more,\n"
	"                           up to 4); the tap must exist or gpmm be root\n"
	"  --balloon on|off         virtio-balloon: memory the guest frees goes back\n"
	"                           to the pool (default on)\n"
	"  --console stdio|pty|socket:PATH|file:PATH|none\n"
	"                           the serial console (default stdio: this terminal,\n"
	"                           raw; Ctrl-A x leaves)\n"
	"Control and reports:\n"
	"  --name NAME              the name control verbs use (default: the kernel\n"
	"                           file's name)\n"
	"  --qmp PATH               the QMP socket (default $GPMM_RUN_DIR/NAME.qmp)\n"
	"  --stats[=tables]         the fragmentation report on stderr at the end\n"
	"                           (=tables: with the pool's buddyinfo/pagetypeinfo)\n"
	"  --daemon SOCK            let a running gpmm daemon host the VM\n"
	"Guest memory:\n"
	"  --pool SIZE              the pool of this VM's own (default 1G): a ceiling,\n"
	"                           not a reservation; a multiple of 2 MiB\n"
	"  --host-pool[=SOCKET]     RAM from the host pool service (gpmm daemon),\n"
	"                           default $GPMM_RUN_DIR/pool.sock, unset: the\n"
	"                           system's /run/gpmm/pool.sock; used when that\n"
	"                           socket exists unless --own-pool\n"
	"  --own-pool               a pool of its own even when the service runs\n"
	"  --fault huge|4k|auto     a first touch of a 2 MiB range takes a whole\n"
	"                           2 MiB block (huge), 64 KiB of 4 KiB pages (4k),\n"
	"                           or a block while the pool keeps free blocks\n"
	"                           above 1/16 of it (auto, the default)\n"
	"  --huge on|off            move guest RAM onto 2 MiB host pages while it\n"
	"                           runs (default on)\n"
	"  --huge-fill              populate partly touched 2 MiB ranges to do it\n"
	"  --huge-rate N            at most N ranges a second (default 0: no limit)\n"
	"  --huge-target PCT        stop at PCT%% of touched ranges (default 100)\n"
	"  --prefault               touch all guest RAM before the guest starts\n"
	"  --pool-huge on|off       pool blocks on host huge pages (default on)\n"
	"  --pool-release-ms MS     a block free for MS..2xMS ms goes back to the\n"
	"                           host (default 1000; 0: never)\n"
	"  --pool-populate          take the whole pool at start and keep it\n"
	"  --overcommit RATIO       the pool lends RATIO times its size (1 to 16,\n"
	"                           default 1); what does not fit is swapped\n"
	"  --swap DIR|off           where the VM's swap file goes (default /var/tmp\n"
	"                           when the pool is overcommitted): unlinked, it\n"
	"                           goes away with the VM\n"
	"Sandbox:\n"
	"  --no-seccomp             no sandbox (for debugging); otherwise the process\n"
	"                           and each vCPU thread run under seccomp allow-lists\n"
	"                           (a forbidden call ends the process) and Landlock\n"
	"                           keeps it to the VM's files\n"
	"Every option and key: docs/running.md.\n";

static int set_opt(struct vm_config *cfg, const char *key, const char *val)
{
	char err[256];

	if (config_set(cfg, key, val, err, sizeof(err))) {
		fprintf(stderr, "gpmm run: %s\n", err);
		return -1;
	}
	return 0;
}

static bool run_stats, run_tables, run_no_seccomp;

static enum host_pool_use host_pool;
static char host_pool_path[108];

/*
 * Everything the command line says, checked before the host is asked for
 * anything (KVM, userfaultfd, memory): a typo is answered as a typo even
 * on a host that could not run the VM anyway.
 */
static int check_run_config(struct vm_config *cfg, const char *daemon_sock)
{
	bool own = !daemon_sock && cli_uses_own_pool(host_pool, host_pool_path, NULL, 0);
	char err[512];

	if (config_check(cfg, err, sizeof(err)) ||
	    (own && config_check_pool(cfg->pool_bytes, err, sizeof(err)))) {
		fprintf(stderr, "gpmm run: %s\n", err);
		return -1;
	}
	if (daemon_sock && cfg->nr_net) {
		fprintf(stderr, "gpmm run: --net: a VM the daemon hosts has no network yet "
			"(run it in its own process: without --daemon)\n");
		return -1;
	}
	if (own && cfg->ram_bytes * 100 > cfg->pool_bytes * cfg->pool_host.overcommit_pct) {
		fprintf(stderr, "gpmm run: --ram %llu MiB is larger than the pool (%llu MiB%s%s):"
			" give --pool %lluM or more, or --overcommit RATIO to swap the rest\n",
			(unsigned long long)(cfg->ram_bytes >> 20),
			(unsigned long long)(cfg->pool_bytes >> 20),
			cfg->pool_bytes == CONFIG_DEFAULT_POOL ? ", the default" : "",
			cfg->pool_host.overcommit_pct > 100 ? ", times --overcommit" : "",
			(unsigned long long)(cfg->ram_bytes >> 20));
		return -1;
	}
	config_finish(cfg);
	return 0;
}

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
		{ "stats", optional_argument, NULL, 's' },
		{ "huge", required_argument, NULL, 'H' },
		{ "huge-fill", no_argument, NULL, 'F' },
		{ "huge-rate", required_argument, NULL, 'R' },
		{ "huge-target", required_argument, NULL, 'T' },
		{ "disk", required_argument, NULL, 'D' },
		{ "net", required_argument, NULL, 'N' },
		{ "balloon", required_argument, NULL, 'B' },
		{ "pool-huge", required_argument, NULL, 'P' },
		{ "pool-release-ms", required_argument, NULL, 'r' },
		{ "pool-populate", no_argument, NULL, 'E' },
		{ "overcommit", required_argument, NULL, 'V' },
		{ "swap", required_argument, NULL, 'W' },
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
	if (cli_check_options("gpmm run", opts, argc, argv))
		return 2;
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
		case 's':
			run_stats = true;
			run_tables = optarg && !strcmp(optarg, "tables");
			if (optarg && !run_tables) {
				fprintf(stderr, "gpmm run: --stats=%s: want --stats or --stats=tables\n",
					optarg);
				return 2;
			}
			break;
		case 'H': key = "huge"; break;
		case 'F': cfg->huge_fill = true; break;
		case 'R': key = "huge_rate"; break;
		case 'T': key = "huge_target"; break;
		case 'D': key = "disk"; break;
		case 'N': key = "net"; break;
		case 'B': key = "balloon"; break;
		case 'P': key = "pool_huge"; break;
		case 'r': key = "pool_release_ms"; break;
		case 'E': cfg->pool_host.populate = true; break;
		case 'V': key = "overcommit"; break;
		case 'W': key = "swap"; break;
		case 'U': key = "fault"; break;
		case 'O':
			host_pool = HOST_POOL_REQUIRED;
			if (optarg)
				snprintf(host_pool_path, sizeof(host_pool_path), "%s", optarg);
			break;
		case 'o': host_pool = HOST_POOL_NEVER; break;
		case 'X': run_no_seccomp = true; break;
		case 'h': fputs(run_usage, stdout); return 1;
		default: return 2;	/* cli_check_options said it */
		}
		if (key && set_opt(cfg, key, optarg))
			return 2;
	}
	return check_run_config(cfg, *daemon_sock) ? 2 : 0;
}

/*
 * Whether a VM takes a pool of its own rather than the host pool service:
 * never asked to use the service, or (by default) its socket @sock, else
 * gpmm_pool_socket(), is not there. That socket's path into @path when
 * given.
 */
bool cli_uses_own_pool(enum host_pool_use use, const char *sock, char *path, size_t len)
{
	char buf[108];

	if (!path) {
		path = buf;
		len = sizeof(buf);
	}
	if (sock && sock[0])
		snprintf(path, len, "%s", sock);
	else
		snprintf(path, len, "%s", gpmm_pool_socket());
	return use == HOST_POOL_NEVER || (use == HOST_POOL_AUTO && access(path, F_OK));
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

	if (cli_uses_own_pool(use, sock, path, sizeof(path)))
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
		fprintf(stderr, "%s: this host cannot run VMs (gpmm host-check says what it lacks);"
			" without KVM, run gpmm in the nested-KVM test VM of the source tree:"
			" tests/vm/run -- build/gpmm run ... (docs/testing.md)\n", who);
		return -ENODEV;
	}
	snprintf(prefix, sizeof(prefix), "%s: host: ", who);
	host_caps_print_missing(stderr, prefix);
	return 0;
}

static int run_foreground(struct vm_config *cfg)
{
	struct pool *pool;
	struct daemon d;
	char err[512];
	int ret;

	if (cli_check_host("gpmm run"))
		return 1;
	if (!cfg->qmp_path[0])
		snprintf(cfg->qmp_path, sizeof(cfg->qmp_path), "%s/%s.qmp",
			 gpmm_run_dir(), cfg->name);
	if (cli_sandbox_fs_vm(cfg, run_no_seccomp, "gpmm run"))
		return 1;
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
	if (!ret && cli_sandbox(&d, run_no_seccomp, "gpmm run")) {
		daemon_fini(&d);
		pool_close(pool);
		return 1;
	}
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
	d.print_tables = run_tables;
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
	"usage: gpmm daemon [OPTION...]\n"
	"Owns the host's pool and serves many VMs: `gpmm run --daemon SOCK` starts\n"
	"one inside it, and every `gpmm run` on the host draws its guest RAM from\n"
	"the pool through the pool service (docs/pool-service.md).\n"
	"  --pool SIZE              the pool, a multiple of 2 MiB (default 1G; a bare\n"
	"                           number is MiB): a ceiling, not a reservation\n"
	"  --socket PATH            QMP for control and reports (default\n"
	"                           $GPMM_RUN_DIR/gpmm.sock)\n"
	"  --pool-socket PATH|none  where VM processes are lent the pool (default\n"
	"                           $GPMM_RUN_DIR/pool.sock; none: not lent)\n"
	"  --pool-group GROUP       lend the pool to VM processes of GROUP too, and\n"
	"                           open pool.sock and its directory to it alone\n"
	"                           (libvirt's domains: libvirt-qemu; docs/libvirt.md)\n"
	"  --pool-answer-ms MS      a VM process that does not answer a request to\n"
	"                           move a page in MS ms is treated as pinned (3000)\n"
	"  --metrics FILE           keep FILE in Prometheus' text format, rewritten\n"
	"                           every second\n"
	"  --buddy                  a plain buddy allocator, without grouping by\n"
	"                           mobility: the baseline grouping is measured against\n"
	"  --overcommit RATIO       the VMs' RAM may reach RATIO times the pool (1 to\n"
	"                           16, default 1); VM processes swap what does not fit\n"
	"  --pool-huge on|off, --pool-release-ms MS, --pool-populate\n"
	"                           the pool's host memory, as for gpmm run (defaults\n"
	"                           on, 1000, off)\n"
	"  --allow DIR              VMs the daemon runs may read and write in DIR\n"
	"                           (kernels, initrds, disks, console files, QMP\n"
	"                           sockets); the sandbox lets the daemon open files\n"
	"                           only there, in its run directory and in its\n"
	"                           sockets' and metrics' directories\n"
	"  --no-seccomp             no sandbox: no syscall filter, no file system\n"
	"                           restriction (for debugging)\n"
	"$GPMM_RUN_DIR defaults to /run/gpmm as root, else $XDG_RUNTIME_DIR/gpmm.\n";

int cmd_daemon(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "pool", required_argument, NULL, 'p' },
		{ "buddy", no_argument, NULL, 'b' },
		{ "pool-huge", required_argument, NULL, 'P' },
		{ "pool-release-ms", required_argument, NULL, 'r' },
		{ "pool-populate", no_argument, NULL, 'E' },
		{ "overcommit", required_argument, NULL, 'V' },
		{ "pool-socket", required_argument, NULL, 'S' },
		{ "pool-answer-ms", required_argument, NULL, 'A' },
		{ "pool-group", required_argument, NULL, 'G' },
		{ "metrics", required_argument, NULL, 'M' },
		{ "no-seccomp", no_argument, NULL, 'X' },
		{ "allow", required_argument, NULL, 'W' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *allow_dirs[16];
	size_t nr_allow = 0;
	char pool_sock[108], metrics[PATH_MAX] = "";
	unsigned long answer_ms = 0;
	gid_t pool_group = UNIX_NO_GROUP;
	struct group *gr;
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
	if (cli_check_options("gpmm daemon", opts, argc, argv))
		return 2;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		const char *key = NULL;

		switch (c) {
		case 's': snprintf(path, sizeof(path), "%s", optarg); break;
		case 'p': key = "pool"; break;
		case 'b': grouping = false; break;
		case 'P': key = "pool_huge"; break;
		case 'r': key = "pool_release_ms"; break;
		case 'E': host.pool_host.populate = true; break;
		case 'V': key = "overcommit"; break;
		case 'S': snprintf(pool_sock, sizeof(pool_sock), "%s", optarg); break;
		case 'M': snprintf(metrics, sizeof(metrics), "%s", optarg); break;
		case 'X': no_seccomp = true; break;
		case 'W':
			if (nr_allow == sizeof(allow_dirs) / sizeof(allow_dirs[0])) {
				fprintf(stderr, "gpmm daemon: at most 16 --allow directories\n");
				return 2;
			}
			allow_dirs[nr_allow++] = optarg;
			break;
		case 'G':
			gr = getgrnam(optarg);
			if (!gr) {
				fprintf(stderr, "gpmm daemon: --pool-group %s: no such group\n", optarg);
				return 2;
			}
			pool_group = gr->gr_gid;
			break;
		case 'A':
			answer_ms = strtoul(optarg, &end, 10);
			if (*end || !answer_ms || answer_ms > 600000) {
				fprintf(stderr, "gpmm daemon: --pool-answer-ms wants 1..600000\n");
				return 2;
			}
			break;
		case 'h': fputs(daemon_usage, stdout); return 0;
		default: return 2;	/* cli_check_options said it */
		}
		if (key && config_set(&host, key, optarg, err, sizeof(err))) {
			fprintf(stderr, "gpmm daemon: %s\n", err);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "gpmm daemon: '%s': the daemon takes no VM; start VMs with"
			" gpmm run --daemon SOCK\nTry 'gpmm daemon --help'.\n", argv[optind]);
		return 2;
	}
	if (config_check_pool(host.pool_bytes, err, sizeof(err))) {
		fprintf(stderr, "gpmm daemon: %s\n", err);
		return 2;
	}
	host_caps_print_missing(stderr, "gpmm daemon: host: ");
	if (cli_sandbox_fs_daemon((const char *const[]){ path, strcmp(pool_sock, "none") ?
				  pool_sock : "", metrics }, 3, allow_dirs, nr_allow,
				  no_seccomp, "gpmm daemon"))
		return 1;
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
	    pool_service_start(pool, pool_sock, (unsigned int)answer_ms, pool_group, &d.svc, err,
			       sizeof(err))) {
		fprintf(stderr, "gpmm daemon: pool service: %s\n", err);
		daemon_fini(&d);
		pool_close(pool);
		return 1;
	}
	if (cli_sandbox(&d, no_seccomp, "gpmm daemon")) {
		pool_service_stop(d.svc);
		d.svc = NULL;
		daemon_fini(&d);
		pool_close(pool);
		return 1;
	}
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
