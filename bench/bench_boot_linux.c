// SPDX-License-Identifier: GPL-2.0
/*
 * `gpmm bench boot --linux`: how long a real Linux guest takes from launch
 * to its userland, under gpmm and under QEMU, side by side.
 *
 * The guest is the one `make guest-linux` builds (Debian 12's stock
 * bzImage, a busybox initramfs). Its rcS prints one marker line,
 * GPMM-LINUX-INIT, as soon as init has loaded its modules; the command line
 * then has it power off at once (gpmm.run=poweroff,-f), so every run ends
 * by itself. Each VMM is a child process whose serial console is read
 * through a pipe: launch-to-marker is the wall time from just before fork
 * to the read that brings the marker's line, the figure a user waiting for
 * a shell sees. It includes everything the VMM does before the guest runs
 * (QEMU's firmware, gpmm's loader), which is the point: microvm is QEMU's
 * fastest way to boot, q35 its usual one.
 *
 * Runs are interleaved (gpmm, microvm, q35, gpmm, ...) so the drift of a
 * noisy shared machine hits all three alike; the figure is the median.
 * A run that does not reach the marker is reported with why (timed out
 * and killed, or the process exited first) and its last line of output.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/bench.h"
#include "bench/progress.h"
#include "vmm/core/config.h"
#include "vmm/core/kvm.h"
#include "vmm/core/samples.h"
#include "vmm/core/vm.h"

#define MARKER		"GPMM-LINUX-INIT "
#define MAX_RUNS	100
#define MAX_ARGS	48

struct linux_opts {
	const char *kernel;
	const char *initrd;
	const char *append;
	uint64_t ram;
	unsigned int cpus;
	int runs;
	int timeout_s;
	unsigned int vmms;	/* bit per entry of vmms[] */
	bool json;
};

/* How one VMM is launched; NULL machine is gpmm itself. */
struct vmm_kind {
	const char *name;	/* as --vmm and the table name it */
	const char *label;
	const char *machine;	/* QEMU -machine */
};

/* Policy as data: the VMMs compared, the first is the one judged. */
static const struct vmm_kind vmms[] = {
	{ "gpmm", "gpmm", NULL },
	{ "microvm", "qemu microvm", "microvm" },
	{ "q35", "qemu q35", "q35" },
};

#define NR_VMMS		(sizeof(vmms) / sizeof(vmms[0]))
#define VMM_MICROVM	1
#define VMM_Q35		2

enum boot_end {
	BOOT_OK,		/* marker seen, process ended by itself */
	BOOT_NO_EXIT,		/* marker seen, killed at the time-out */
	BOOT_TIMEOUT,		/* no marker before the time-out: killed */
	BOOT_EARLY_EXIT,	/* the process ended before the marker */
	BOOT_NO_START,		/* fork or pipe failed */
};

struct boot_run {
	enum boot_end end;
	uint64_t marker_ns;	/* launch to the marker's line, 0: none */
	uint64_t exit_ns;	/* launch to the end of the process */
	int status;		/* waitpid's */
	char last[160];		/* last line of output, for a failure */
};

struct vmm_result {
	uint64_t marker_ns[MAX_RUNS];
	uint64_t exit_ns[MAX_RUNS];
	int ok;			/* runs that reached the marker */
	int exited;		/* of those, runs that also ended by themselves */
	int runs;
	struct boot_run first_fail;
	int first_fail_run;	/* 1-based, 0: none failed */
};

static void copy_args(char **argv, const char *const *a)
{
	int n;

	for (n = 0; a[n] && n < MAX_ARGS - 1; n++)
		argv[n] = (char *)a[n];
	argv[n] = NULL;
}

/*
 * The command line of @k. Every VMM gets the same kernel, initrd, command
 * line, RAM and vCPUs, and its console on stdout. gpmm is this binary.
 */
static void build_argv(const struct vmm_kind *k, const struct linux_opts *o,
		       char bufs[][PATH_MAX], char **argv)
{
	ssize_t n;

	snprintf(bufs[0], PATH_MAX, "%lluM", (unsigned long long)(o->ram >> 20));
	snprintf(bufs[1], PATH_MAX, "%u", o->cpus);
	if (!k->machine) {
		n = readlink("/proc/self/exe", bufs[2], PATH_MAX - 1);
		bufs[2][n > 0 ? n : 0] = '\0';
		/* its own QMP socket name: no clash with a VM the user runs */
		snprintf(bufs[3], PATH_MAX, "bench-linux-%d", (int)getpid());
		copy_args(argv, (const char *const[]) {
			bufs[2], "run", "--name", bufs[3], "--kernel", o->kernel, "--initrd", o->initrd,
			"--ram", bufs[0], "--cpus", bufs[1], "--console", "stdio",
			"--append", o->append, NULL });
		return;
	}
	snprintf(bufs[2], PATH_MAX, "%s,accel=kvm", k->machine);
	copy_args(argv, (const char *const[]) {
		"qemu-system-x86_64", "-machine", bufs[2], "-cpu", "host",
		"-m", bufs[0], "-smp", bufs[1], "-nodefaults", "-no-user-config",
		"-display", "none", "-no-reboot",
		"-chardev", "stdio,id=con,signal=off", "-serial", "chardev:con",
		"-kernel", o->kernel, "-initrd", o->initrd, "-append", o->append, NULL });
}

/* Child: its own process group (killed whole), console output into @out. */
static pid_t spawn(char **argv, int out)
{
	pid_t pid = fork();
	int null;

	if (pid)
		return pid;
	setpgid(0, 0);
	null = open("/dev/null", O_RDONLY);
	dup2(null, 0);
	dup2(out, 1);
	dup2(out, 2);
	execvp(argv[0], argv);
	fprintf(stderr, "cannot exec %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

/*
 * One line of output is complete: is it the marker? The last non-empty
 * line is kept for the report of a run that fails.
 */
static bool line_done(struct boot_run *r, const char *line, size_t len)
{
	while (len && (line[len - 1] == '\r' || line[len - 1] == '\n'))
		len--;
	if (!len)
		return false;
	snprintf(r->last, sizeof(r->last), "%.*s", (int)len, line);
	for (char *c = r->last; *c; c++)	/* the report stays one readable line */
		if (*c < ' ' || *c > '~')
			*c = '?';
	return memmem(line, len, MARKER, strlen(MARKER)) != NULL;
}

/* Read @fd until EOF or @deadline; the marker's time, once, into @r. */
static void read_console(int fd, uint64_t t0, uint64_t deadline, struct boot_run *r)
{
	char line[4096], buf[4096];
	size_t len = 0;

	for (;;) {
		uint64_t now = vm_now_ns();
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (now >= deadline)
			return;
		if (poll(&pfd, 1, (int)((deadline - now) / 1000000) + 1) <= 0)
			continue;
		n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		now = vm_now_ns();
		for (ssize_t i = 0; i < n; i++) {
			if (len < sizeof(line))
				line[len++] = buf[i];
			if (buf[i] != '\n')
				continue;
			if (line_done(r, line, len) && !r->marker_ns)
				r->marker_ns = now - t0;
			len = 0;
		}
	}
}

static void boot_once(const struct vmm_kind *k, const struct linux_opts *o,
		      struct boot_run *r)
{
	static char bufs[4][PATH_MAX];
	char *argv[MAX_ARGS];
	uint64_t t0, deadline;
	int fds[2];
	pid_t pid;

	memset(r, 0, sizeof(*r));
	build_argv(k, o, bufs, argv);
	if (pipe2(fds, O_CLOEXEC)) {
		r->end = BOOT_NO_START;
		snprintf(r->last, sizeof(r->last), "pipe: %s", strerror(errno));
		return;
	}
	t0 = vm_now_ns();
	deadline = t0 + (uint64_t)o->timeout_s * 1000000000ULL;
	pid = spawn(argv, fds[1]);
	if (pid > 0)
		setpgid(pid, pid);	/* as the child does: whichever runs first */
	close(fds[1]);
	if (pid < 0) {
		r->end = BOOT_NO_START;
		snprintf(r->last, sizeof(r->last), "fork: %s", strerror(errno));
		close(fds[0]);
		return;
	}
	read_console(fds[0], t0, deadline, r);
	if (waitpid(pid, &r->status, WNOHANG) == 0) {
		/* EOF with the process alive, or the deadline: give it a moment */
		while (vm_now_ns() < deadline && waitpid(pid, &r->status, WNOHANG) == 0)
			usleep(10000);
		if (vm_now_ns() >= deadline) {
			kill(-pid, SIGKILL);
			waitpid(pid, &r->status, 0);
			r->end = r->marker_ns ? BOOT_NO_EXIT : BOOT_TIMEOUT;
			close(fds[0]);
			return;
		}
	}
	r->exit_ns = vm_now_ns() - t0;
	close(fds[0]);
	r->end = r->marker_ns ? BOOT_OK : BOOT_EARLY_EXIT;
}

static void describe(const struct boot_run *r, const struct linux_opts *o,
		     char *buf, size_t len)
{
	char how[64] = "";

	if (WIFEXITED(r->status))
		snprintf(how, sizeof(how), "exit status %d", WEXITSTATUS(r->status));
	else if (WIFSIGNALED(r->status))
		snprintf(how, sizeof(how), "killed by signal %d", WTERMSIG(r->status));
	switch (r->end) {
	case BOOT_OK:
		snprintf(buf, len, "ok");
		break;
	case BOOT_NO_EXIT:
		snprintf(buf, len, "reached the marker but did not power off within %d s: killed",
			 o->timeout_s);
		break;
	case BOOT_TIMEOUT:
		snprintf(buf, len, "no marker within %d s: killed", o->timeout_s);
		break;
	case BOOT_EARLY_EXIT:
		snprintf(buf, len, "ended before the marker, after %.2f s (%s)",
			 r->exit_ns / 1e9, how);
		break;
	case BOOT_NO_START:
		snprintf(buf, len, "could not start");
		break;
	}
}

static void record(struct vmm_result *res, const struct boot_run *r, int run)
{
	res->runs++;
	if (r->marker_ns)
		res->marker_ns[res->ok++] = r->marker_ns;
	if (r->end == BOOT_OK)
		res->exit_ns[res->exited++] = r->exit_ns;
	if (r->end != BOOT_OK && !res->first_fail_run) {
		res->first_fail = *r;
		res->first_fail_run = run;
	}
}

static double median_ms(uint64_t *v, int n)
{
	if (!n)
		return -1;
	qsort(v, n, sizeof(*v), cmp_u64);
	return v[n / 2] / 1e6;
}

static void print_ms(double ms)
{
	if (ms < 0)
		printf(" %14s", "-");
	else
		printf(" %14.1f", ms);
}

static void print_results(const struct linux_opts *o, struct vmm_result *res)
{
	double marker[NR_VMMS], exit_ms[NR_VMMS];
	char why[256];

	for (size_t i = 0; i < NR_VMMS; i++) {
		marker[i] = median_ms(res[i].marker_ns, res[i].ok);
		exit_ms[i] = median_ms(res[i].exit_ns, res[i].exited);
	}
	if (o->json) {
		printf("{\"runs\":%d,\"ram_mib\":%llu,\"cpus\":%u", o->runs,
		       (unsigned long long)(o->ram >> 20), o->cpus);
		for (size_t i = 0; i < NR_VMMS; i++)
			if (o->vmms & 1u << i)
				printf(",\"%s\":{\"ok\":%d,\"marker_ms\":%.1f,\"exit_ms\":%.1f}",
				       vmms[i].name, res[i].ok, marker[i], exit_ms[i]);
		if (marker[0] > 0 && marker[VMM_MICROVM] > 0)
			printf(",\"gpmm_over_microvm\":%.3f", marker[0] / marker[VMM_MICROVM]);
		if (marker[VMM_Q35] > 0 && marker[VMM_MICROVM] > 0)
			printf(",\"q35_over_microvm\":%.3f", marker[VMM_Q35] / marker[VMM_MICROVM]);
		printf("}\n");
		return;
	}
	printf("gpmm bench boot --linux: %s + %s\n", o->kernel, o->initrd);
	printf("%llu MiB, %u vCPUs, median of %d runs, append \"%s\"\n\n",
	       (unsigned long long)(o->ram >> 20), o->cpus, o->runs, o->append);
	printf("%-14s %14s %14s %8s\n", "vmm", "to marker ms", "to exit ms", "ok/runs");
	for (size_t i = 0; i < NR_VMMS; i++) {
		if (!(o->vmms & 1u << i))
			continue;
		printf("%-14s", vmms[i].label);
		print_ms(marker[i]);
		print_ms(exit_ms[i]);
		printf(" %5d/%d\n", res[i].ok, res[i].runs);
	}
	printf("\nto marker: launch (fork) to the guest's GPMM-LINUX-INIT line on its serial\n"
	       "console; to exit: to the end of the process after the guest powered off.\n");
	if (marker[0] > 0 && marker[VMM_MICROVM] > 0)
		printf("gpmm/microvm (to marker): %.2f\n", marker[0] / marker[VMM_MICROVM]);
	if (marker[VMM_Q35] > 0 && marker[VMM_MICROVM] > 0)
		printf("q35/microvm (to marker):  %.2f\n", marker[VMM_Q35] / marker[VMM_MICROVM]);
	for (size_t i = 0; i < NR_VMMS; i++) {
		if (!res[i].first_fail_run)
			continue;
		describe(&res[i].first_fail, o, why, sizeof(why));
		printf("%s, run %d: %s; last output: \"%s\"\n", vmms[i].label,
		       res[i].first_fail_run, why, res[i].first_fail.last);
	}
}

static const char linux_usage[] =
	"usage: gpmm bench boot --linux [--runs N] [--vmm gpmm,microvm,q35]\n"
	"         [--kernel BZIMAGE] [--initrd FILE] [--ram SIZE] [--cpus N]\n"
	"         [--append CMDLINE] [--timeout SECONDS] [--json]\n"
	"Launch to Linux userland, gpmm beside QEMU (-machine microvm and q35, KVM):\n"
	"the same bzImage and initramfs (make guest-linux), RAM (128M) and vCPUs (2);\n"
	"wall time from fork to the init's GPMM-LINUX-INIT line on the serial\n"
	"console, and to the process's end (the guest powers off: gpmm.run=poweroff,-f\n"
	"on the command line). Median of N runs (3), interleaved; gpmm/microvm ratio.\n"
	"A run that does not reach the marker within the time-out (300 s) is killed\n"
	"and reported, as is one that ends early. Needs /dev/kvm (else run it in the\n"
	"test VM: tests/vm/run -- build/gpmm bench boot --linux) and qemu-system-x86.\n";

static int parse_vmms(const char *list, unsigned int *mask)
{
	char copy[128], *save, *tok;

	snprintf(copy, sizeof(copy), "%s", list);
	*mask = 0;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		size_t i;

		for (i = 0; i < NR_VMMS && strcmp(tok, vmms[i].name); i++)
			;
		if (i == NR_VMMS)
			return -EINVAL;
		*mask |= 1u << i;
	}
	return *mask ? 0 : -EINVAL;
}

static int parse_linux(int argc, char **argv, struct linux_opts *o)
{
	static const struct option opts[] = {
		{ "linux", no_argument, NULL, 'L' },
		{ "runs", required_argument, NULL, 'r' },
		{ "vmm", required_argument, NULL, 'v' },
		{ "kernel", required_argument, NULL, 'k' },
		{ "initrd", required_argument, NULL, 'i' },
		{ "ram", required_argument, NULL, 'm' },
		{ "cpus", required_argument, NULL, 'c' },
		{ "append", required_argument, NULL, 'a' },
		{ "timeout", required_argument, NULL, 't' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'L': break;
		case 'r': o->runs = atoi(optarg); break;
		case 'v':
			if (parse_vmms(optarg, &o->vmms)) {
				fprintf(stderr, "gpmm bench: --vmm takes gpmm,microvm,q35\n");
				return 2;
			}
			break;
		case 'k': o->kernel = optarg; break;
		case 'i': o->initrd = optarg; break;
		case 'm':
			if (config_parse_size(optarg, &o->ram) || o->ram < (16 << 20)) {
				fprintf(stderr, "gpmm bench: bad size '%s'\n", optarg);
				return 2;
			}
			break;
		case 'c': o->cpus = atoi(optarg); break;
		case 'a': o->append = optarg; break;
		case 't': o->timeout_s = atoi(optarg); break;
		case 'j': o->json = true; break;
		case 'h': fputs(linux_usage, stdout); return 1;
		default: fputs(linux_usage, stderr); return 2;
		}
	}
	if (optind != argc || o->runs < 1 || o->runs > MAX_RUNS || o->cpus < 1 ||
	    o->cpus > 64 || o->timeout_s < 1) {
		fputs(linux_usage, stderr);
		return 2;
	}
	return 0;
}

/* What must be there before the first run; says what is missing. */
static int check_ready(const struct linux_opts *o)
{
	if (kvm_unavailable()) {
		fprintf(stderr, "gpmm bench boot --linux: no usable /dev/kvm here (%s): gpmm and\n"
			"QEMU -enable-kvm cannot run; run it in the nested-KVM test VM:\n"
			"  tests/vm/run -- build/gpmm bench boot --linux\n", kvm_unavailable());
		return 1;
	}
	if (access(o->kernel, R_OK) || access(o->initrd, R_OK)) {
		fprintf(stderr, "gpmm bench boot --linux: %s or %s is missing: make guest-linux\n",
			o->kernel, o->initrd);
		return 1;
	}
	if ((o->vmms & ~1u) && system("command -v qemu-system-x86_64 >/dev/null 2>&1")) {
		fprintf(stderr, "gpmm bench boot --linux: qemu-system-x86_64 is not installed "
			"(apt-get install qemu-system-x86)\n");
		return 1;
	}
	return 0;
}

int cmd_bench_boot_linux(int argc, char **argv)
{
	struct linux_opts o = {
		.kernel = "build/guests/linux/bzImage",
		.initrd = "build/guests/linux/initramfs.cpio.gz",
		.append = "console=ttyS0 quiet panic=-1 gpmm.run=poweroff,-f",
		.ram = 128 << 20,
		.cpus = 2,
		.runs = 3,
		.timeout_s = 300,
		.vmms = (1u << NR_VMMS) - 1,
	};
	static struct vmm_result res[NR_VMMS];
	struct progress prog;
	bool failed = false;
	int ret;

	ret = parse_linux(argc, argv, &o);
	if (ret)
		return ret == 1 ? 0 : ret;
	ret = check_ready(&o);
	if (ret)
		return ret;
	progress_init(&prog, o.json);
	for (int run = 1; run <= o.runs; run++) {
		for (size_t i = 0; i < NR_VMMS; i++) {
			struct boot_run r;

			if (!(o.vmms & 1u << i))
				continue;
			progress_phase(&prog, "%s, run %d of %d", vmms[i].label, run, o.runs);
			boot_once(&vmms[i], &o, &r);
			record(&res[i], &r, run);
			failed |= r.end != BOOT_OK;
		}
	}
	progress_clear(&prog);
	print_results(&o, res);
	return failed ? 1 : 0;
}
