// SPDX-License-Identifier: GPL-2.0
/*
 * `gpmm bench isolation`: does a hostile neighbour slow down anyone but
 * itself? A victim VM runs memrate (a pass over its RAM, a line every 16
 * passes) on the host pool service; its rate is timed from its console
 * lines, alone and then beside two neighbours on the same service:
 *
 *   hammer - a payload that reads and writes every I/O port and the
 *            balloon's registers forever: nothing but exits;
 *   hog    - Debian's Linux running a fork bomb and a memory hog
 *            (memwork allocating, writing and freeing in a loop).
 *
 * Conditions, the same processes throughout: the victim alone; with both
 * neighbours at the victim's priority; with the neighbours' threads at
 * nice 19 (what an operator does to a VM they trust less, as libvirt's
 * <shares> would); the neighbours gone. A CPU that the three share is
 * split by the host's scheduler, not by gpmm: the equal-priority windows
 * show that share, the nice ones what is left once the scheduler is told,
 * i.e. what gpmm's shared parts (the pool service, its locks) cost the
 * victim.
 *
 * One window per condition says little on a shared, emulated machine: each
 * condition gets --windows of them, the two with neighbours alternating
 * (renicing between windows, the order swapped every round) so that drift
 * of the machine falls on both, and the claim printed is the one the
 * windows' spread allows: the difference from the victim without
 * neighbours and two standard errors of it, computed from the data.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench.h"
#include "vmm/core/vm.h"

#define HOG_RAMP_S	15
#define HOG_APPEND	"quiet gpmm.run=memwork,--mib,96,--rounds,1000000000&f(){,f|f&,};f"

struct iso_opts {
	const char *guests;	/* payloads and guests/linux */
	int window_s;
	int windows;		/* per condition */
	int boot_timeout_s;
	bool linux_hog;
};

struct iso_env {
	char dir[64];
	char self[4096];
	pid_t service, victim, hammer, hog;
};

static pid_t spawn_sh(struct iso_env *e, const char *tag, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static pid_t spawn_sh(struct iso_env *e, const char *tag, const char *fmt, ...)
{
	char cmd[2048], log[128];
	va_list ap;
	pid_t pid;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	snprintf(log, sizeof(log), "%s/%s.log", e->dir, tag);
	pid = fork();
	if (pid == 0) {
		if (!freopen(log, "w", stdout) || dup2(fileno(stdout), 2) < 0)
			_exit(127);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* The last number after @prefix in @path, whole lines only (the guest may be mid-line); or -1. */
static long long last_number(const char *path, const char *prefix)
{
	char line[512];
	long long v = -1;
	size_t plen = strlen(prefix);
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, prefix);

		if (p && strchr(p, '\n'))
			v = strtoll(p + plen, NULL, 10);
	}
	fclose(f);
	return v;
}

static long long count_lines(const char *path, const char *needle)
{
	char line[1024];
	long long n = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		n += strstr(line, needle) != NULL;
	fclose(f);
	return n;
}

/* A field of /proc/PID/status, in kB; -1 if unknown. */
static long long status_kb(pid_t pid, const char *field)
{
	char path[64], line[256];
	long long v = -1;
	size_t flen = strlen(field);
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, flen) && line[flen] == ':')
			v = strtoll(line + flen + 1, NULL, 10);
	fclose(f);
	return v;
}

static bool file_says(const char *path, const char *needle)
{
	return count_lines(path, needle) > 0;
}

/* Bounded by count: tries of 200 ms each. */
static bool wait_for(const char *path, const char *needle, int seconds)
{
	for (int i = 0; i < seconds * 5; i++) {
		if (file_says(path, needle))
			return true;
		usleep(200000);
	}
	return false;
}

/* Passes per second over @window_s, timed from the victim's console lines. */
static double victim_rate(struct iso_env *e, int window_s)
{
	char con[128];
	struct timespec t0, t1;
	long long p0, p1;

	snprintf(con, sizeof(con), "%s/victim.con", e->dir);
	p0 = last_number(con, "memrate: pass ");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	sleep((unsigned int)window_s);
	p1 = last_number(con, "memrate: pass ");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (p0 < 0 || p1 < p0)
		return -1;
	return (double)(p1 - p0) / ((double)(t1.tv_sec - t0.tv_sec) +
				    (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
}

/* Every thread of @pid: setpriority on the process touches only its first. */
static int renice_all(pid_t pid, int nice)
{
	char path[64];
	struct dirent *d;
	DIR *dir;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return -errno;
	while ((d = readdir(dir)))
		if (d->d_name[0] != '.' && !setpriority(PRIO_PROCESS, (id_t)atoi(d->d_name), nice))
			n++;
	closedir(dir);
	return n;
}

/* The gpmm processes under a shell: sh -c's child is what to renice. */
static pid_t child_of(pid_t sh)
{
	char path[64];
	long long child = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)sh, (int)sh);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%lld", &child) != 1)
			child = -1;
		fclose(f);
	}
	return child > 0 ? (pid_t)child : sh;
}

static void stop(pid_t *pid)
{
	if (*pid <= 0)
		return;
	kill(child_of(*pid), SIGTERM);
	kill(*pid, SIGTERM);
	for (int i = 0; i < 50 && waitpid(*pid, NULL, WNOHANG) == 0; i++)
		usleep(100000);
	kill(*pid, SIGKILL);
	waitpid(*pid, NULL, 0);
	*pid = 0;
}

static int start_neighbours(struct iso_env *e, const struct iso_opts *o, const char *pool)
{
	char con[128];

	e->hammer = spawn_sh(e, "hammer", "exec %s run --host-pool=%s --kernel %s/hammer.bin "
			     "--ram 16M --name hammer --console file:%s/hammer.con", e->self, pool,
			     o->guests, e->dir);
	snprintf(con, sizeof(con), "%s/hammer.con", e->dir);
	if (!wait_for(con, "hammer: on", o->boot_timeout_s)) {
		fprintf(stderr, "bench isolation: the hammer guest did not start (%s)\n", con);
		return -1;
	}
	if (!o->linux_hog)
		return 0;
	e->hog = spawn_sh(e, "hog", "exec %s run --host-pool=%s --kernel %s/linux/bzImage "
			  "--initrd %s/linux/initramfs.cpio.gz --ram 256M --cpus 1 --name hog "
			  "--console file:%s/hog.con --append '%s'", e->self, pool, o->guests,
			  o->guests, e->dir, HOG_APPEND);
	snprintf(con, sizeof(con), "%s/hog.con", e->dir);
	if (!wait_for(con, "GPMM-LINUX-INIT", o->boot_timeout_s)) {
		fprintf(stderr, "bench isolation: the Linux hog did not boot (%s)\n", con);
		return -1;
	}
	sleep(HOG_RAMP_S);	/* the bomb and the hog get going */
	return 0;
}

/* What the victim ran beside, in a window. */
enum iso_cond { IC_ALONE, IC_EQUAL, IC_NICE, IC_GONE, NR_IC };

#define ISO_MAX_WINDOWS	100

static const char *const cond_names[NR_IC] = {
	[IC_ALONE] = "alone",
	[IC_EQUAL] = "beside the neighbours, equal priority",
	[IC_NICE] = "the same, neighbours at nice 19",
	[IC_GONE] = "neighbours gone",
};

/* The rates of a condition's windows; failed windows are not kept. */
struct iso_series {
	double rate[ISO_MAX_WINDOWS * 2];
	int n;
};

static void series_add(struct iso_series *s, double rate)
{
	if (rate >= 0 && s->n < (int)(sizeof(s->rate) / sizeof(s->rate[0])))
		s->rate[s->n++] = rate;
}

static double series_mean(const struct iso_series *s)
{
	double sum = 0;

	for (int i = 0; i < s->n; i++)
		sum += s->rate[i];
	return s->n ? sum / s->n : -1;
}

/* Sample standard deviation; 0 with fewer than two windows. */
static double series_sd(const struct iso_series *s)
{
	double m = series_mean(s), ss = 0;

	for (int i = 0; i < s->n; i++)
		ss += (s->rate[i] - m) * (s->rate[i] - m);
	return s->n > 1 ? sqrt(ss / (s->n - 1)) : 0;
}

static double series_min(const struct iso_series *s)
{
	double v = s->n ? s->rate[0] : -1;

	for (int i = 1; i < s->n; i++)
		v = s->rate[i] < v ? s->rate[i] : v;
	return v;
}

static double series_max(const struct iso_series *s)
{
	double v = s->n ? s->rate[0] : -1;

	for (int i = 1; i < s->n; i++)
		v = s->rate[i] > v ? s->rate[i] : v;
	return v;
}

static void series_join(struct iso_series *to, const struct iso_series *a,
			const struct iso_series *b)
{
	to->n = 0;
	for (int i = 0; i < a->n; i++)
		series_add(to, a->rate[i]);
	for (int i = 0; i < b->n; i++)
		series_add(to, b->rate[i]);
}

/*
 * @a against @b: the difference of their means as a share of @b's, and
 * two standard errors of that difference (about a 95% interval for
 * windows whose rates scatter normally), both in percent. -1 for the
 * error when either side has fewer than two windows: no spread known.
 */
static void series_compare(const struct iso_series *a, const struct iso_series *b,
			   double *diff_pct, double *err_pct)
{
	double mb = series_mean(b), sa = series_sd(a), sb = series_sd(b);

	*diff_pct = mb > 0 ? 100 * (series_mean(a) - mb) / mb : 0;
	*err_pct = a->n > 1 && b->n > 1 && mb > 0 ?
		   200 * sqrt(sa * sa / a->n + sb * sb / b->n) / mb : -1;
}

/*
 * The baseline moved: the victim alone before the neighbours and after
 * them differ by more than two standard errors. Then whatever else
 * differs may be the machine, not the neighbours.
 */
static bool machine_drifted(const struct iso_series *gone, const struct iso_series *alone)
{
	double d, u;

	series_compare(gone, alone, &d, &u);
	return u >= 0 && fabs(d) > u;
}

/* The neighbours' threads to @nice; false if either could not be set. */
static bool renice_neighbours(struct iso_env *e, int nice)
{
	return renice_all(child_of(e->hammer), nice) > 0 &&
	       (!e->hog || renice_all(child_of(e->hog), nice) > 0);
}

static int parse(int argc, char **argv, struct iso_opts *o)
{
	static const struct option opts[] = {
		{ "guests", required_argument, NULL, 'g' },
		{ "window", required_argument, NULL, 'w' },
		{ "windows", required_argument, NULL, 'W' },
		{ "boot-timeout", required_argument, NULL, 't' },
		{ "no-linux", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	int c;

	optind = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'g': o->guests = optarg; break;
		case 'w': o->window_s = atoi(optarg); break;
		case 'W': o->windows = atoi(optarg); break;
		case 't': o->boot_timeout_s = atoi(optarg); break;
		case 'n': o->linux_hog = false; break;
		case 'h':
			printf("usage: gpmm bench isolation [--guests DIR] [--window S] [--windows N]\n"
			       "       [--boot-timeout S] [--no-linux]\n"
			       "A victim VM's memory rate alone and beside a port-hammering guest and\n"
			       "a Linux guest running a fork bomb and a memory hog (all on one host pool\n"
			       "service), at equal priority and with the neighbours at nice 19, then\n"
			       "with the neighbours gone: N windows of S seconds per condition (default\n"
			       "5 of 10 s; the two with neighbours alternate), mean, min/max, standard\n"
			       "deviation, and the difference from the victim without neighbours with\n"
			       "two standard errors of it.\n");
			return 1;
		default:
			return -1;
		}
	}
	return o->window_s > 0 && o->boot_timeout_s > 0 && o->windows > 0 &&
	       o->windows <= ISO_MAX_WINDOWS ? 0 : -1;
}

static void print_row(const char *name, const struct iso_series *s, double alone)
{
	double m = series_mean(s);

	if (!s->n) {
		printf("  %-40s %3s %10s\n", name, "0", "no figure");
		return;
	}
	printf("  %-40s %3d %10.1f %7.1f%% %9.1f %9.1f %7.1f%%\n", name, s->n, m,
	       alone > 0 ? 100 * m / alone : 0, series_min(s), series_max(s),
	       m > 0 ? 100 * series_sd(s) / m : 0);
}

/*
 * What the windows allow one to say of @a against @b (the victim without
 * neighbours): never more than the spread of the windows supports.
 */
static void print_claim(const char *what, const struct iso_series *a, const char *against,
			const struct iso_series *b)
{
	double d, u;

	series_compare(a, b, &d, &u);
	if (!a->n || !b->n) {
		printf("  %s: no figure\n", what);
	} else if (u < 0) {
		printf("  %s: %+.1f%% against %s; too few windows for a spread (--windows 2 or "
		       "more)\n", what, d, against);
	} else if (fabs(d) <= u) {
		printf("  %s: %+.1f%% against %s, within +-%.1f%% (2 standard errors, %d and %d "
		       "windows): no difference this spread can show; one smaller than %.1f%% "
		       "is not measurable here\n", what, d, against, u, a->n, b->n, u);
	} else {
		printf("  %s: %+.1f%% +-%.1f%% against %s (2 standard errors, %d and %d windows): "
		       "a difference beyond the spread\n", what, d, u, against, a->n, b->n);
	}
}

/* Windows of the two conditions with neighbours, alternating; per round the order swaps. */
static void measure_with_neighbours(struct iso_env *e, const struct iso_opts *o,
				    struct iso_series *ser, long long *hog_kb)
{
	bool niced = false;

	for (int i = 0; i < o->windows; i++) {
		for (int j = 0; j < 2; j++) {
			bool want_nice = (i + j) & 1;

			if (want_nice != niced && renice_neighbours(e, want_nice ? 19 : 0))
				niced = want_nice;
			else if (want_nice != niced)
				fprintf(stderr, "bench isolation: could not renice the neighbours "
					"to %d; the window counts as nice %d\n", want_nice ? 19 : 0,
					niced ? 19 : 0);
			series_add(&ser[niced ? IC_NICE : IC_EQUAL], victim_rate(e, o->window_s));
			if (*hog_kb < 0 && e->hog)
				*hog_kb = status_kb(child_of(e->hog), "RssShmem");
		}
	}
}

int cmd_bench_isolation(int argc, char **argv)
{
	struct iso_opts o = { .guests = "build/guests", .window_s = 10, .windows = 5,
			      .boot_timeout_s = 400, .linux_hog = true };
	static struct iso_series ser[NR_IC], without;
	struct iso_env e = { 0 };
	double alone, fair;
	long long hog_kb = -1;
	char pool[128], con[128];
	ssize_t n;
	int ret = parse(argc, argv, &o);

	if (ret)
		return ret > 0 ? 0 : 2;
	n = readlink("/proc/self/exe", e.self, sizeof(e.self) - 1);
	if (n <= 0)
		return 1;
	e.self[n] = '\0';
	snprintf(e.dir, sizeof(e.dir), "/tmp/gpmm-isolation-%d", (int)getpid());
	if (mkdir(e.dir, 0700) && errno != EEXIST)
		return 1;
	snprintf(pool, sizeof(pool), "%s/pool.sock", e.dir);
	e.service = spawn_sh(&e, "service", "exec %s daemon --socket %s/ctl.sock --pool-socket %s "
			     "--pool 1024M", e.self, e.dir, pool);
	snprintf(con, sizeof(con), "%s/service.log", e.dir);
	if (!wait_for(con, "lending the pool", 60)) {
		fprintf(stderr, "bench isolation: the pool service did not start (%s)\n", con);
		return 1;
	}
	e.victim = spawn_sh(&e, "victim", "exec %s run --host-pool=%s --kernel %s/memrate.bin "
			    "--ram 16M --name victim --console file:%s/victim.con", e.self, pool,
			    o.guests, e.dir);
	snprintf(con, sizeof(con), "%s/victim.con", e.dir);
	ret = 1;
	if (!wait_for(con, "memrate: pass 32", o.boot_timeout_s)) {
		fprintf(stderr, "bench isolation: the victim did not start (%s)\n", con);
		goto out;
	}
	for (int i = 0; i < o.windows; i++)
		series_add(&ser[IC_ALONE], victim_rate(&e, o.window_s));
	if (start_neighbours(&e, &o, pool))
		goto out;
	measure_with_neighbours(&e, &o, ser, &hog_kb);
	stop(&e.hammer);
	stop(&e.hog);
	sleep(2);
	for (int i = 0; i < o.windows; i++)
		series_add(&ser[IC_GONE], victim_rate(&e, o.window_s));

	alone = series_mean(&ser[IC_ALONE]);
	printf("victim memrate passes/s, %d windows of %d s per condition (16 MiB guest, host pool "
	       "service;\nthe two conditions with neighbours alternate)\n"
	       "  %-40s %3s %10s %8s %9s %9s %8s\n", o.windows, o.window_s, "condition", "n",
	       "mean", "of alone", "min", "max", "sd");
	for (int c = 0; c < NR_IC; c++)
		print_row(c == IC_EQUAL && o.linux_hog ? "beside hammer + Linux bomb/hog, equal" :
			  c == IC_EQUAL ? "beside hammer, equal priority" : cond_names[c],
			  &ser[c], alone);
	snprintf(con, sizeof(con), "%s/hog.con", e.dir);
	printf("  host CPUs online: %ld; the hog: %lld MiB of guest RAM touched (its process's "
	       "RssShmem), %lld memwork rounds, fork failures said: %s\n",
	       sysconf(_SC_NPROCESSORS_ONLN), hog_kb < 0 ? -1 : hog_kb >> 10,
	       count_lines(con, "memwork: round"), count_lines(con, "fork") > 0 ? "yes" : "no");
	/* three busy VMs at one priority: the scheduler's fair share of the CPUs */
	fair = sysconf(_SC_NPROCESSORS_ONLN) >= 3 ? 1.0 :
	       (double)sysconf(_SC_NPROCESSORS_ONLN) / (o.linux_hog ? 3 : 2);
	if (alone > 0 && ser[IC_EQUAL].n)
		printf("  at equal priority the victim kept %.1f%% of its fair share of the CPUs "
		       "(%.1f%% of alone)\n", 100 * series_mean(&ser[IC_EQUAL]) / alone / fair,
		       100 * fair);
	/* the victim without neighbours: before they came and after they went */
	series_join(&without, &ser[IC_ALONE], &ser[IC_GONE]);
	print_claim("drift of the machine, gone vs alone", &ser[IC_GONE], "alone",
		    &ser[IC_ALONE]);
	print_claim("neighbours at nice 19", &ser[IC_NICE], "the victim without neighbours "
		    "(alone and gone)", &without);
	if (machine_drifted(&ser[IC_GONE], &ser[IC_ALONE]))
		printf("  the victim's rate without neighbours changed beyond its spread between "
		       "before and after:\n  the machine's load moved during the run, so no "
		       "cost of the neighbours can be told from this run\n");
	ret = alone > 0 && ser[IC_NICE].n && series_mean(&ser[IC_NICE]) >= 0.8 * alone ? 0 : 3;
	printf("  goal: mean >= 80%% of alone with the neighbours running (at nice 19): %s\n",
	       ret ? "MISSED" : "met");
out:
	stop(&e.hammer);
	stop(&e.hog);
	stop(&e.victim);
	stop(&e.service);
	return ret;
}
