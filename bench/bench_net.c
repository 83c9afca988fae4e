// SPDX-License-Identifier: GPL-2.0
/*
 * `gpmm bench net`: a Linux guest's TCP throughput to and from the host
 * and its ping latency, under gpmm (virtio-net with and without offloads)
 * and under QEMU (microvm with virtio-net-device on the same kind of tap,
 * vhost off: both move packets in user space), side by side in one run.
 *
 * The host side lives in a network namespace the benchmark makes (a tap,
 * 10.99.9.1/24, a busybox httpd serving a file of --mib MiB); the VMM runs
 * in it with the same guest (make guest-linux), RAM and command line. The
 * guest's script (gpmm.run) gives eth0 10.99.9.2, serves a file of the
 * same size itself, fetches the host's and prints how long that took by
 * its own clock (host to guest). Then the host fetches the guest's file,
 * timed here (guest to host), and pings the guest --pings times, 0.2 s
 * apart (busybox ping's average round trip). Runs are interleaved (gpmm,
 * gpmm offload=off, QEMU, gpmm, ...); each figure is the median of the
 * runs, and the ratios are gpmm's over QEMU's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/bench.h"
#include "bench/progress.h"
#include "vmm/core/kvm.h"
#include "vmm/core/vm.h"

#define NET_MAX_RUNS	20
#define NET_TAP		"gbt0"
#define NET_MARK	"BENCH-NET-DOWN "

struct net_kind {
	const char *name;	/* --vmm */
	const char *label;
	const char *net_opts;	/* gpmm's --net suffix; NULL: QEMU */
};

static const struct net_kind net_kinds[] = {
	{ "gpmm", "gpmm, offloads", "" },
	{ "gpmm-nooffload", "gpmm, offload=off", ",offload=off" },
	{ "qemu", "QEMU microvm, vhost off", NULL },
};

#define NR_KINDS	(sizeof(net_kinds) / sizeof(net_kinds[0]))

struct net_opts {
	const char *kernel, *initrd;
	unsigned int mib, pings, runs, timeout_s;
	unsigned int kinds;
	bool json;
	char ns[32], dir[64];
};

struct net_run {
	double down_mbs, up_mbs, ping_ms;	/* < 0: not measured */
	char why[200];
};

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* The namespace, its tap and httpd, the host's file. */
static int net_setup(struct net_opts *o)
{
	char cmd[1024];

	snprintf(o->ns, sizeof(o->ns), "gpmmbench%d", (int)getpid());
	snprintf(o->dir, sizeof(o->dir), "/tmp/gpmm-bench-net-%d", (int)getpid());
	snprintf(cmd, sizeof(cmd), "ip netns add %s && ip -n %s link set lo up && "
		 "ip -n %s tuntap add " NET_TAP " mode tap && "
		 "ip -n %s addr add 10.99.9.1/24 dev " NET_TAP " && "
		 "ip -n %s link set " NET_TAP " up && mkdir -p %s && "
		 "head -c %uM /dev/zero > %s/blob && ip netns exec %s busybox httpd -p 8080 -h %s",
		 o->ns, o->ns, o->ns, o->ns, o->ns, o->dir, o->mib, o->dir, o->ns, o->dir);
	return system(cmd) ? -1 : 0;
}

static void net_teardown(const struct net_opts *o)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "ip netns pids %s | xargs -r kill; ip netns del %s; rm -rf %s",
		 o->ns, o->ns, o->dir);
	if (system(cmd))
		fprintf(stderr, "gpmm bench net: could not remove namespace %s\n", o->ns);
}

/* The guest's script: a comma stands for a space (the guest's rcS). */
static void guest_append(const struct net_opts *o, char *buf, size_t len)
{
	snprintf(buf, len, "console=ttyS0 quiet panic=-1 gpmm.run="
		 "ip,addr,add,10.99.9.2/24,dev,eth0;ip,link,set,eth0,up;"
		 "ping,-c,1,-W,60,10.99.9.1>/dev/null;"
		 "dd,if=/dev/zero,of=/tmp/blob,bs=1M,count=%u,2>/dev/null;httpd,-p,8080,-h,/tmp;"
		 "t0=$(cut,-d',',-f1,/proc/uptime);wget,-q,-O,/dev/null,http://10.99.9.1:8080/blob;"
		 "t1=$(cut,-d',',-f1,/proc/uptime);echo,BENCH-NET-DOWN,$t0,$t1;sleep,3600", o->mib);
}

static pid_t net_spawn(const struct net_kind *k, const struct net_opts *o, int out)
{
	char ram[] = "256M", append[1024], net[64], self[PATH_MAX], name[48];
	char *argv[48];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int i = 0;
	pid_t pid;

	self[n > 0 ? n : 0] = '\0';
	guest_append(o, append, sizeof(append));
	snprintf(net, sizeof(net), "tap=" NET_TAP "%s", k->net_opts ? k->net_opts : "");
	snprintf(name, sizeof(name), "bench-net-%d", (int)getpid());
	argv[i++] = "ip";
	argv[i++] = "netns";
	argv[i++] = "exec";
	argv[i++] = (char *)o->ns;
	if (k->net_opts) {
		const char *a[] = { self, "run", "--name", name, "--kernel", o->kernel, "--initrd",
				    o->initrd, "--ram", ram, "--console", "stdio", "--balloon",
				    "off", "--net", net, "--append", append };

		for (size_t j = 0; j < sizeof(a) / sizeof(a[0]); j++)
			argv[i++] = (char *)a[j];
	} else {
		const char *a[] = { "qemu-system-x86_64", "-machine", "microvm,accel=kvm", "-cpu",
				    "host", "-m", ram, "-smp", "1", "-nodefaults", "-no-user-config",
				    "-display", "none", "-no-reboot", "-chardev",
				    "stdio,id=con,signal=off", "-serial", "chardev:con", "-kernel",
				    o->kernel, "-initrd", o->initrd, "-append", append, "-netdev",
				    "tap,id=n0,ifname=" NET_TAP ",script=no,downscript=no,vhost=off",
				    "-device", "virtio-net-device,netdev=n0" };

		for (size_t j = 0; j < sizeof(a) / sizeof(a[0]); j++)
			argv[i++] = (char *)a[j];
	}
	argv[i] = NULL;
	pid = fork();
	if (pid)
		return pid;
	setpgid(0, 0);
	/* stdin is /dev/null: QEMU's stdio chardev wants a descriptor there */
	i = open("/dev/null", O_RDONLY);
	if (i > 0) {
		dup2(i, 0);
		close(i);
	}
	dup2(out, 1);
	dup2(out, 2);
	execvp(argv[0], argv);
	_exit(127);
}

/* The guest's marker line: its two uptimes around the download. false at EOF or time-out. */
static bool wait_marker(int fd, double deadline, double *t0, double *t1, char *last, size_t len)
{
	char buf[8192];
	size_t have = 0;

	while (now_s() < deadline) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		char *m, *nl;
		ssize_t n;

		if (poll(&p, 1, 1000) <= 0)
			continue;
		n = read(fd, buf + have, sizeof(buf) - 1 - have);
		if (n <= 0)
			return false;
		have += (size_t)n;
		buf[have] = '\0';
		m = strstr(buf, NET_MARK);
		if (m && strchr(m, '\n'))
			return sscanf(m + strlen(NET_MARK), "%lf %lf", t0, t1) == 2;
		nl = strrchr(buf, '\n');
		if (nl && nl > buf) {
			/* keep the last whole line for a failure, and the partial one after it */
			char *prev = nl;

			while (prev > buf && prev[-1] != '\n')
				prev--;
			snprintf(last, len, "%.*s", (int)(nl - prev), prev);
			have = strlen(nl + 1);
			memmove(buf, nl + 1, have + 1);
		}
		if (have == sizeof(buf) - 1)
			have = 0;
	}
	return false;
}

/* The host's side once the guest is up: its file fetched (timed), its ping average. */
static void host_side(const struct net_opts *o, struct net_run *r)
{
	char cmd[512], line[256];
	double t = now_s(), a;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "ip netns exec %s busybox wget -q -O /dev/null "
		 "http://10.99.9.2:8080/blob", o->ns);
	if (!system(cmd))
		r->up_mbs = o->mib / (now_s() - t);
	snprintf(cmd, sizeof(cmd), "ip netns exec %s busybox ping -q -c %u -i 0.2 10.99.9.2 "
		 "2>&1 | tail -n 1", o->ns, o->pings);
	f = popen(cmd, "r");
	if (f && fgets(line, sizeof(line), f) &&
	    sscanf(line, "round-trip min/avg/max = %*f/%lf", &a) == 1)
		r->ping_ms = a;
	if (f)
		pclose(f);
}

static void net_once(const struct net_kind *k, const struct net_opts *o, struct net_run *r)
{
	int pipefd[2], status;
	double t0, t1;
	pid_t pid;

	*r = (struct net_run){ -1, -1, -1, "" };
	if (pipe(pipefd)) {
		snprintf(r->why, sizeof(r->why), "pipe: %s", strerror(errno));
		return;
	}
	pid = net_spawn(k, o, pipefd[1]);
	close(pipefd[1]);
	if (pid < 0) {
		close(pipefd[0]);
		snprintf(r->why, sizeof(r->why), "fork: %s", strerror(errno));
		return;
	}
	if (wait_marker(pipefd[0], now_s() + o->timeout_s, &t0, &t1, r->why, sizeof(r->why))) {
		r->down_mbs = t1 > t0 ? o->mib / (t1 - t0) : -1;
		host_side(o, r);
		r->why[0] = '\0';
	} else if (!r->why[0]) {
		snprintf(r->why, sizeof(r->why), "no marker within %u s", o->timeout_s);
	}
	kill(-pid, SIGTERM);
	for (int i = 0; i < 50 && waitpid(pid, &status, WNOHANG) == 0; i++)
		usleep(100000);
	kill(-pid, SIGKILL);
	waitpid(pid, &status, 0);
	close(pipefd[0]);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The median of the measured values (< 0: none). */
static double median(double *v, unsigned int n)
{
	double m[NET_MAX_RUNS];
	unsigned int k = 0;

	for (unsigned int i = 0; i < n; i++)
		if (v[i] >= 0)
			m[k++] = v[i];
	if (!k)
		return -1;
	qsort(m, k, sizeof(m[0]), cmp_double);
	return k % 2 ? m[k / 2] : (m[k / 2 - 1] + m[k / 2]) / 2;
}

static double ratio(double a, double b)
{
	return a > 0 && b > 0 ? a / b : -1;
}

static void print_results(const struct net_opts *o, struct net_run res[][NET_MAX_RUNS])
{
	double f[NR_KINDS][3];

	for (size_t k = 0; k < NR_KINDS; k++) {
		double d[NET_MAX_RUNS], u[NET_MAX_RUNS], p[NET_MAX_RUNS];

		for (unsigned int i = 0; i < o->runs; i++) {
			d[i] = res[k][i].down_mbs;
			u[i] = res[k][i].up_mbs;
			p[i] = res[k][i].ping_ms;
		}
		f[k][0] = median(d, o->runs);
		f[k][1] = median(u, o->runs);
		f[k][2] = median(p, o->runs);
	}
	if (o->json) {
		printf("{\"mib\":%u,\"runs\":%u,\"pings\":%u", o->mib, o->runs, o->pings);
		for (size_t k = 0; k < NR_KINDS; k++)
			if (o->kinds & 1u << k)
				printf(",\"%s\":{\"host_to_guest_mbs\":%.2f,\"guest_to_host_mbs\":%.2f,"
				       "\"ping_ms\":%.3f}", net_kinds[k].name, f[k][0], f[k][1], f[k][2]);
		if ((o->kinds & 5) == 5)
			printf(",\"gpmm_over_qemu\":{\"host_to_guest\":%.3f,\"guest_to_host\":%.3f,"
			       "\"ping\":%.3f}", ratio(f[0][0], f[2][0]), ratio(f[0][1], f[2][1]),
			       ratio(f[0][2], f[2][2]));
		printf("}\n");
		return;
	}
	printf("TCP through a tap, %u MiB each way; ping: %u round trips 0.2 s apart; median of "
	       "%u runs\n%-26s %16s %16s %10s\n", o->mib, o->pings, o->runs, "",
	       "host->guest MB/s", "guest->host MB/s", "ping ms");
	for (size_t k = 0; k < NR_KINDS; k++)
		if (o->kinds & 1u << k)
			printf("%-26s %16.2f %16.2f %10.3f\n", net_kinds[k].label, f[k][0], f[k][1],
			       f[k][2]);
	if ((o->kinds & 5) == 5)
		printf("gpmm/QEMU: host->guest %.2fx, guest->host %.2fx, ping %.2fx "
		       "(throughput: higher is better; ping: lower is)\n", ratio(f[0][0], f[2][0]),
		       ratio(f[0][1], f[2][1]), ratio(f[0][2], f[2][2]));
	for (size_t k = 0; k < NR_KINDS; k++)
		for (unsigned int i = 0; i < o->runs; i++)
			if ((o->kinds & 1u << k) && res[k][i].why[0])
				printf("%s, run %u: %s\n", net_kinds[k].label, i + 1, res[k][i].why);
}

static const char net_usage[] =
	"usage: gpmm bench net [--runs N] [--vmm gpmm,gpmm-nooffload,qemu] [--mib N]\n"
	"         [--pings N] [--kernel BZIMAGE] [--initrd FILE] [--timeout SECONDS] [--json]\n"
	"A Linux guest's TCP throughput both ways and ping latency through a tap, under\n"
	"gpmm (virtio-net, with and without offloads) and QEMU (microvm, virtio-net-device,\n"
	"vhost off), in a network namespace of its own (10.99.9.0/24): host to guest the\n"
	"guest's busybox wget of --mib MiB (64), guest to host the host's; ping: --pings\n"
	"(20) round trips. Median of N runs (3), interleaved; gpmm/QEMU ratios. Needs root,\n"
	"/dev/kvm (else: tests/vm/run -- build/gpmm bench net), qemu-system-x86 and\n"
	"make guest-linux.\n";

static int parse_net(int argc, char **argv, struct net_opts *o)
{
	static const struct option opts[] = {
		{ "runs", required_argument, NULL, 'r' },
		{ "vmm", required_argument, NULL, 'v' },
		{ "mib", required_argument, NULL, 'm' },
		{ "pings", required_argument, NULL, 'p' },
		{ "kernel", required_argument, NULL, 'k' },
		{ "initrd", required_argument, NULL, 'i' },
		{ "timeout", required_argument, NULL, 't' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	char *save, *tok, list[128];
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'r': o->runs = (unsigned int)atoi(optarg); break;
		case 'm': o->mib = (unsigned int)atoi(optarg); break;
		case 'p': o->pings = (unsigned int)atoi(optarg); break;
		case 'k': o->kernel = optarg; break;
		case 'i': o->initrd = optarg; break;
		case 't': o->timeout_s = (unsigned int)atoi(optarg); break;
		case 'j': o->json = true; break;
		case 'v':
			o->kinds = 0;
			snprintf(list, sizeof(list), "%s", optarg);
			for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
				size_t k;

				for (k = 0; k < NR_KINDS && strcmp(tok, net_kinds[k].name); k++)
					;
				if (k == NR_KINDS) {
					fprintf(stderr, "gpmm bench net: --vmm takes "
						"gpmm,gpmm-nooffload,qemu\n");
					return 2;
				}
				o->kinds |= 1u << k;
			}
			break;
		case 'h': fputs(net_usage, stdout); return 1;
		default: fputs(net_usage, stderr); return 2;
		}
	}
	if (optind != argc || !o->kinds || o->runs < 1 || o->runs > NET_MAX_RUNS ||
	    o->mib < 1 || o->mib > 128 || o->pings < 1 || o->pings > 1000 || !o->timeout_s) {
		fputs(net_usage, stderr);
		return 2;
	}
	return 0;
}

static int net_ready(const struct net_opts *o)
{
	if (kvm_unavailable()) {
		fprintf(stderr, "gpmm bench net: no usable /dev/kvm here (%s); run it in the "
			"nested-KVM test VM:\n  tests/vm/run -- build/gpmm bench net\n",
			kvm_unavailable());
		return 1;
	}
	if (geteuid()) {
		fprintf(stderr, "gpmm bench net: makes a network namespace and a tap: run as root\n");
		return 1;
	}
	if (access(o->kernel, R_OK) || access(o->initrd, R_OK)) {
		fprintf(stderr, "gpmm bench net: %s or %s is missing: make guest-linux\n",
			o->kernel, o->initrd);
		return 1;
	}
	if ((o->kinds & 4) && system("command -v qemu-system-x86_64 >/dev/null 2>&1")) {
		fprintf(stderr, "gpmm bench net: qemu-system-x86_64 is not installed "
			"(apt-get install qemu-system-x86)\n");
		return 1;
	}
	return 0;
}

int cmd_bench_net(int argc, char **argv)
{
	static struct net_run res[NR_KINDS][NET_MAX_RUNS];
	struct net_opts o = {
		.kernel = "build/guests/linux/bzImage",
		.initrd = "build/guests/linux/initramfs.cpio.gz",
		.mib = 64, .pings = 20, .runs = 3, .timeout_s = 600,
		.kinds = (1u << NR_KINDS) - 1,
	};
	struct progress prog;
	bool failed = false;
	int ret = parse_net(argc, argv, &o);

	if (ret)
		return ret == 1 ? 0 : ret;
	ret = net_ready(&o);
	if (ret)
		return ret;
	if (net_setup(&o)) {
		fprintf(stderr, "gpmm bench net: cannot set up namespace %s (ip, busybox)\n", o.ns);
		net_teardown(&o);
		return 1;
	}
	progress_init(&prog, o.json);
	for (unsigned int run = 0; run < o.runs; run++)
		for (size_t k = 0; k < NR_KINDS; k++) {
			if (!(o.kinds & 1u << k))
				continue;
			progress_phase(&prog, "%s, run %u of %u", net_kinds[k].label, run + 1, o.runs);
			net_once(&net_kinds[k], &o, &res[k][run]);
			failed |= res[k][run].why[0] != '\0';
		}
	progress_clear(&prog);
	net_teardown(&o);
	print_results(&o, res);
	return failed ? 1 : 0;
}
