// SPDX-License-Identifier: GPL-2.0
/*
 * `gpmm bench pool-fds`: what a pool served with a file per pageblock
 * costs in descriptors and mappings, per VM process and in the service,
 * read from /proc against the host's limits. The service runs in this
 * process on a pool of --pool MiB; --vms client processes, forked before
 * the pool exists (so they inherit none of it), each take --ram MiB as
 * 4 KiB frames, as a VM's first touches would, without writing them (the
 * counts do not depend on it). Each client's view then maps its own
 * pageblocks' files: what /proc says it holds is what a VM process holds
 * of the pool, guest windows aside (those are the VM's own mappings of
 * the same files, bounded by vm.max_map_count as before).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/bench.h"
#include "vmm/memory/pool_backend.h"
#include "vmm/pool_service/pool_client.h"
#include "vmm/pool_service/pool_proto.h"
#include "vmm/pool_service/pool_service.h"
#include "vmm/sys/host.h"

#define MAX_CLIENTS	256

/* What /proc says one process holds. */
struct proc_count {
	unsigned long fds, memfd_fds;
	unsigned long maps, memfd_maps;
	uint64_t memfd_fd_bytes;	/* sizes of the memfds it holds descriptors of */
	uint64_t memfd_map_bytes;	/* lengths of its mappings of memfds */
};

static int count_proc(pid_t pid, struct proc_count *pc)
{
	char path[64], link[256], line[512];
	struct dirent *d;
	struct stat st;
	DIR *dir;
	FILE *f;

	*pc = (struct proc_count){ 0 };
	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	dir = opendir(path);
	if (!dir)
		return -errno;
	while ((d = readdir(dir))) {
		char fdp[320];
		ssize_t n;

		if (d->d_name[0] == '.')
			continue;
		snprintf(fdp, sizeof(fdp), "%s/%s", path, d->d_name);
		pc->fds++;
		n = readlink(fdp, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		if (!strncmp(link, "/memfd:", 7) && !stat(fdp, &st)) {
			pc->memfd_fds++;
			pc->memfd_fd_bytes += (uint64_t)st.st_size;
		}
	}
	closedir(dir);
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi;

		pc->maps++;
		if (strstr(line, "/memfd:") && sscanf(line, "%llx-%llx", &lo, &hi) == 2) {
			pc->memfd_maps++;
			pc->memfd_map_bytes += hi - lo;
		}
	}
	fclose(f);
	return 0;
}

/* A client process: waits for the service, takes its RAM, says so, waits to end. */
static void client_main(const char *path, unsigned int i, uint64_t ram_mib, int go, int ready,
			int end)
{
	static uint32_t batch[1024];
	struct pool_client_info info;
	struct pool_client *c;
	char name[16], err[256], b = 0;
	uint64_t frames = (ram_mib << 20) >> MM_PAGE_SHIFT;

	snprintf(name, sizeof(name), "vm%u", i);
	if (read(go, &b, 1) != 1)
		_exit(2);
	if (pool_client_connect(path, name, ram_mib << 20, POOL_CLIENT_VM, &c, &info, err,
				sizeof(err))) {
		fprintf(stderr, "gpmm bench pool-fds: %s: %s\n", name, err);
		_exit(2);
	}
	for (uint64_t got = 0; got < frames;) {
		long n = pool_client_alloc(c, 0, frames - got < 1024 ? (unsigned int)(frames - got) : 1024,
					   POOL_ALLOC_NOWAIT, batch, NULL);

		if (n <= 0)
			_exit(3);
		got += (uint64_t)n;
	}
	b = 1;
	if (write(ready, &b, 1) != 1)
		_exit(4);
	/* held until the parent has counted: its end of the pipe closes */
	(void)read(end, &b, 1);
	pool_client_close(c);
	_exit(0);
}

static void print_row(const char *who, const struct proc_count *lo, const struct proc_count *hi)
{
	printf("  %-22s %6lu-%-6lu %6lu-%-6lu %7lu-%-7lu %6lu-%-6lu %7.0f-%-7.0f\n", who,
	       lo->fds, hi->fds, lo->memfd_fds, hi->memfd_fds, lo->maps, hi->maps,
	       lo->memfd_maps, hi->memfd_maps, (double)lo->memfd_fd_bytes / (1 << 20),
	       (double)hi->memfd_fd_bytes / (1 << 20));
}

static void keep_range(struct proc_count *lo, struct proc_count *hi, const struct proc_count *c,
		       bool first)
{
	if (first) {
		*lo = *hi = *c;
		return;
	}
#define RANGE(f) do { if (c->f < lo->f) lo->f = c->f; if (c->f > hi->f) hi->f = c->f; } while (0)
	RANGE(fds);
	RANGE(memfd_fds);
	RANGE(maps);
	RANGE(memfd_maps);
	RANGE(memfd_fd_bytes);
	RANGE(memfd_map_bytes);
#undef RANGE
}

/*
 * One more client's "ready", or a client that ended first: its exit status
 * (2 no connection, 3 no frames) says where it stopped.
 */
static int wait_ready(int fd, pid_t *pids, unsigned int n, char *err, size_t errlen)
{
	char b;

	for (;;) {
		int status;

		if (pool_wire_wait(fd, 100) > 0)
			return read(fd, &b, 1) == 1 ? 0 : -EPIPE;
		for (unsigned int i = 0; i < n; i++)
			if (pids[i] > 0 && waitpid(pids[i], &status, WNOHANG) == pids[i]) {
				snprintf(err, errlen, "client %u ended first (exit %d)", i,
					 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
				pids[i] = 0;
				return -ECHILD;
			}
	}
}

static int run(unsigned int vms, uint64_t ram_mib, uint64_t pool_mib)
{
	struct pool_host host = { .huge = false };
	struct proc_count c, lo = { 0 }, hi = { 0 }, svc_count;
	pid_t pids[MAX_CLIENTS] = { 0 };
	struct pool_service *svc = NULL;
	struct pool *pool = NULL;
	int go[2], ready[2], end[2], ret = 0;
	char path[108], err[256] = "", b;
	struct rlimit rl;
	unsigned int started = 0;

	snprintf(path, sizeof(path), "/tmp/gpmm-bench-pool-fds-%d.sock", getpid());
	if (pipe(go) || pipe(ready) || pipe(end))
		return -errno;
	/* the clients first: they inherit nothing of the pool */
	for (; started < vms; started++) {
		pids[started] = fork();
		if (pids[started] < 0)
			break;
		if (pids[started] == 0) {
			close(go[1]);
			close(ready[0]);
			close(end[1]);
			client_main(path, started, ram_mib, go[0], ready[1], end[0]);
		}
	}
	close(go[0]);
	close(ready[1]);
	close(end[0]);
	ret = started == vms ? pool_open_host(pool_mib << 20, true, &host, &pool) : -EAGAIN;
	if (!ret)
		ret = pool_service_start(pool, path, 0, UNIX_NO_GROUP, &svc, err, sizeof(err));
	b = 1;
	for (unsigned int i = 0; !ret && i < vms; i++)
		if (write(go[1], &b, 1) != 1)
			ret = -EPIPE;
	for (unsigned int i = 0; !ret && i < vms; i++)
		ret = wait_ready(ready[0], pids, vms, err, sizeof(err));
	for (unsigned int i = 0; !ret && i < vms; i++) {
		ret = count_proc(pids[i], &c);
		keep_range(&lo, &hi, &c, i == 0);
	}
	if (!ret)
		ret = count_proc(getpid(), &svc_count);
	if (!ret) {
		getrlimit(RLIMIT_NOFILE, &rl);
		printf("gpmm bench pool-fds: %u VM processes of %llu MiB (4 KiB frames) on a %llu MiB"
		       " pool service; by /proc, lowest-highest\n", vms, (unsigned long long)ram_mib,
		       (unsigned long long)pool_mib);
		printf("  %-22s %13s %13s %15s %13s %15s\n", "", "fds", "memfd fds", "mappings",
		       "memfd maps", "memfd MiB");
		print_row("each VM process", &lo, &hi);
		print_row("the service (daemon)", &svc_count, &svc_count);
		printf("  a VM process maps %.1f-%.1f MiB of memfds for %llu MiB of RAM; limits here: "
		       "RLIMIT_NOFILE %llu (soft, after gpmm raised it) / %llu, vm.max_map_count %llu\n",
		       (double)lo.memfd_map_bytes / (1 << 20), (double)hi.memfd_map_bytes / (1 << 20),
		       (unsigned long long)ram_mib, (unsigned long long)rl.rlim_cur,
		       (unsigned long long)rl.rlim_max, (unsigned long long)host_max_map_count());
	} else if (!err[0]) {
		snprintf(err, sizeof(err), "%s", strerror(-ret));
	}
	close(go[1]);
	close(ready[0]);
	close(end[1]);
	for (unsigned int i = 0; i < started; i++)
		if (pids[i] > 0)
			waitpid(pids[i], NULL, 0);
	pool_service_stop(svc);
	pool_close(pool);
	if (ret)
		fprintf(stderr, "gpmm bench pool-fds: %s\n", err);
	return ret;
}

int cmd_bench_pool_fds(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "vms", required_argument, NULL, 'v' },
		{ "ram", required_argument, NULL, 'r' },
		{ "pool", required_argument, NULL, 'p' },
		{ 0 }
	};
	unsigned int vms = 64;
	uint64_t ram_mib = 256, pool_mib = 16384;
	int c;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'v':
			vms = (unsigned int)strtoul(optarg, NULL, 10);
			break;
		case 'r':
			ram_mib = strtoull(optarg, NULL, 10);
			break;
		case 'p':
			pool_mib = strtoull(optarg, NULL, 10);
			break;
		default:
			fprintf(stderr, "usage: gpmm bench pool-fds [--vms N] [--ram MIB] [--pool MIB]\n");
			return 2;
		}
	}
	if (!vms || vms > MAX_CLIENTS || !ram_mib || ram_mib % 2 || pool_mib % 2 ||
	    vms * ram_mib > pool_mib || vms > POOL_SERVICE_MAX_CLIENTS) {
		fprintf(stderr, "gpmm bench pool-fds: 1..%d VMs of an even number of MiB whose"
			" RAM fits in the pool (admission)\n", POOL_SERVICE_MAX_CLIENTS);
		return 2;
	}
	return run(vms, ram_mib, pool_mib) ? 1 : 0;
}
