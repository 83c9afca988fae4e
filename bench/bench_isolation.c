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
 * Phases, one run, the same processes throughout: the victim alone; with
 * both neighbours at the victim's priority; with the neighbours' threads
 * at nice 19 (what an operator does to a VM they trust less, as libvirt's
 * <shares> would); the neighbours gone. A CPU that the three share is
 * split by the host's scheduler, not by gpmm: the equal-priority phase
 * shows that share, the nice phase what is left once the scheduler is
 * told, i.e. what gpmm's shared parts (the pool service, its locks)
 * cost the victim.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
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

static int parse(int argc, char **argv, struct iso_opts *o)
{
	static const struct option opts[] = {
		{ "guests", required_argument, NULL, 'g' },
		{ "window", required_argument, NULL, 'w' },
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
		case 't': o->boot_timeout_s = atoi(optarg); break;
		case 'n': o->linux_hog = false; break;
		case 'h':
			printf("usage: gpmm bench isolation [--guests DIR] [--window S] "
			       "[--boot-timeout S] [--no-linux]\n"
			       "A victim VM's memory rate alone and beside a port-hammering guest and\n"
			       "a Linux guest running a fork bomb and a memory hog (all on one host pool\n"
			       "service), at equal priority and with the neighbours at nice 19.\n");
			return 1;
		default:
			return -1;
		}
	}
	return o->window_s > 0 && o->boot_timeout_s > 0 ? 0 : -1;
}

static void print_row(const char *phase, double rate, double alone)
{
	if (rate < 0)
		printf("  %-44s %10s\n", phase, "no figure");
	else
		printf("  %-44s %10.1f %7.1f%%\n", phase, rate, alone > 0 ? 100 * rate / alone : 0);
}

int cmd_bench_isolation(int argc, char **argv)
{
	struct iso_opts o = { .guests = "build/guests", .window_s = 20, .boot_timeout_s = 400,
			      .linux_hog = true };
	struct iso_env e = { 0 };
	double alone, equal, niced = -1, after, fair;
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
	alone = victim_rate(&e, o.window_s);
	if (start_neighbours(&e, &o, pool))
		goto out;
	equal = victim_rate(&e, o.window_s);
	hog_kb = e.hog ? status_kb(child_of(e.hog), "RssShmem") : -1;
	if (renice_all(child_of(e.hammer), 19) > 0 &&
	    (!e.hog || renice_all(child_of(e.hog), 19) > 0))
		niced = victim_rate(&e, o.window_s);
	stop(&e.hammer);
	stop(&e.hog);
	sleep(2);
	after = victim_rate(&e, o.window_s);
	printf("victim memrate passes/s over %d s windows (16 MiB guest, host pool service)\n"
	       "  %-44s %10s %8s\n", o.window_s, "phase", "passes/s", "of alone");
	print_row("alone", alone, alone);
	print_row(o.linux_hog ? "beside hammer + Linux fork bomb/memory hog" :
		  "beside hammer", equal, alone);
	print_row("the same, neighbours at nice 19", niced, alone);
	print_row("neighbours gone", after, alone);
	snprintf(con, sizeof(con), "%s/hog.con", e.dir);
	printf("  host CPUs online: %ld; the hog: %lld MiB of guest RAM touched (its process's "
	       "RssShmem), %lld memwork rounds, fork failures said: %s\n",
	       sysconf(_SC_NPROCESSORS_ONLN), hog_kb >> 10, count_lines(con, "memwork: round"),
	       count_lines(con, "fork") > 0 ? "yes" : "no");
	/* three busy VMs at one priority: the scheduler's fair share of the CPUs */
	fair = sysconf(_SC_NPROCESSORS_ONLN) >= 3 ? 1.0 :
	       (double)sysconf(_SC_NPROCESSORS_ONLN) / (o.linux_hog ? 3 : 2);
	if (alone > 0 && equal >= 0)
		printf("  at equal priority the victim kept %.1f%% of its fair share of the CPUs "
		       "(%.1f%% of alone)\n", 100 * equal / alone / fair, 100 * fair);
	ret = alone > 0 && niced >= 0.8 * alone ? 0 : 3;
	printf("  goal: >= 80%% of alone with the neighbours running (at nice 19): %s\n",
	       ret ? "MISSED" : "met");
out:
	stop(&e.hammer);
	stop(&e.hog);
	stop(&e.victim);
	stop(&e.service);
	return ret;
}
