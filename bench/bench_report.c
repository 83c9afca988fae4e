// SPDX-License-Identifier: GPL-2.0
/*
 * `gpmm bench report`: what a VM process's report costs the pool service,
 * per VM, on a small pool and a large one, and what giving a VM's frames
 * back at its end costs. A VM's report reads the pool twice a second's
 * worth: its own pageblocks (POOL_WALK_OWN, the pool's list of them) and
 * the pool's statistics (POOL_STATS, one read shared by every client for
 * POOL_SERVICE_STATS_MS). Both are timed here from the client's side, the
 * service in this process on a pool of its own, nothing of KVM: the same
 * VMs (--vms of --ram MiB, their RAM taken as 4 KiB frames) on each pool
 * size, the rest of the pool held by one more client in 4 KiB frames (a
 * full pool is what a walk of all of it pays for), so that a difference
 * is the pool's size and nothing else.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/bench.h"
#include "vmm/core/vm.h"
#include "vmm/memory/pool_backend.h"
#include "vmm/pool_service/pool_client.h"
#include "vmm/pool_service/pool_proto.h"
#include "vmm/pool_service/pool_service.h"

#define MAX_VMS		32

struct report_opts {
	unsigned int vms;
	uint64_t ram_mib;
	unsigned int reports;
};

struct report_result {
	double report_us;	/* one VM's report: own pageblocks and the statistics */
	double own_us;		/* of which its own pageblocks */
	double stats_read_ms;	/* the service's read of the statistics (shared) */
	double release_ms;	/* one VM's frames back at once */
	double whole_walk_ms;	/* the whole pool's walk, what a report read before */
	uint64_t frames_released;
};

static void count_pb(void *opaque, uint64_t pb, const struct mm_pageblock_info *info)
{
	(*(uint64_t *)opaque)++;
}

static int take_ram(struct pool_client *c, uint64_t frames)
{
	static uint32_t batch[1024];

	for (uint64_t got = 0; got < frames;) {
		long n = pool_client_alloc(c, 0, frames - got < 1024 ? (unsigned int)(frames - got) : 1024,
					   POOL_ALLOC_NOWAIT, batch, NULL);

		if (n <= 0)
			return n ? (int)n : -ENOMEM;
		got += (uint64_t)n;
	}
	return 0;
}

static int measure(uint64_t pool_mib, const struct report_opts *o, struct report_result *res,
		   char *err, size_t errlen)
{
	struct pool_host host = { .huge = false };
	struct pool_client *vm[MAX_VMS] = { 0 }, *rest = NULL;
	uint64_t rest_mib = pool_mib - o->vms * (o->ram_mib + 8) - 8;
	struct pool_client_info info;
	struct pool_service *svc = NULL;
	struct pool *pool = NULL;
	struct mm_stats st;
	char path[108];
	uint64_t t0, pbs = 0;
	int ret;

	snprintf(path, sizeof(path), "/tmp/gpmm-bench-report-%d.sock", getpid());
	ret = pool_open_host(pool_mib << 20, true, &host, &pool);
	if (!ret)
		ret = pool_service_start(pool, path, 0, UNIX_NO_GROUP, &svc, err, errlen);
	for (unsigned int i = 0; !ret && i < o->vms; i++) {
		char name[16];

		snprintf(name, sizeof(name), "vm%u", i);
		ret = pool_client_connect(path, name, o->ram_mib << 20, POOL_CLIENT_VM, &vm[i], &info,
					  err, errlen);
		if (!ret)
			ret = take_ram(vm[i], (o->ram_mib << 20) >> MM_PAGE_SHIFT);
	}
	if (!ret && rest_mib >= 2) {
		ret = pool_client_connect(path, "rest", (rest_mib & ~1ULL) << 20, POOL_CLIENT_TENANT,
					  &rest, &info, err, errlen);
		if (!ret)
			ret = take_ram(rest, ((rest_mib & ~1ULL) << 20) >> MM_PAGE_SHIFT);
	}
	if (ret)
		goto out;
	/* each VM reports in turn, as they do once a second */
	t0 = vm_now_ns();
	for (unsigned int r = 0; !ret && r < o->reports; r++)
		for (unsigned int i = 0; !ret && i < o->vms; i++) {
			uint64_t t1 = vm_now_ns();

			ret = pool_client_walk_own(vm[i], count_pb, &pbs);
			res->own_us += (double)(vm_now_ns() - t1) / 1e3;
			if (!ret)
				ret = pool_client_stats(vm[i], &st);
		}
	res->report_us = (double)(vm_now_ns() - t0) / 1e3 / (o->reports * o->vms);
	res->own_us /= o->reports * o->vms;
	/* the whole pool, once (the walk budget allows a few): the old report's read */
	t0 = vm_now_ns();
	ret = ret ? ret : pool_client_walk(vm[o->vms - 1], count_pb, &pbs);
	res->whole_walk_ms = (double)(vm_now_ns() - t0) / 1e6;
	t0 = vm_now_ns();
	ret = ret ? ret : mm_stats(pool->mm, &st);
	res->stats_read_ms = (double)(vm_now_ns() - t0) / 1e6;
	t0 = vm_now_ns();
	if (!ret) {
		long n = pool_client_release(vm[0]);

		res->release_ms = (double)(vm_now_ns() - t0) / 1e6;
		ret = n < 0 ? (int)n : 0;
		res->frames_released = n < 0 ? 0 : (uint64_t)n;
	}
out:
	if (ret && !err[0])
		snprintf(err, errlen, "%s", strerror(-ret));
	for (unsigned int i = 0; i < o->vms; i++)
		if (vm[i])
			pool_client_close(vm[i]);
	if (rest)
		pool_client_close(rest);
	pool_service_stop(svc);
	pool_close(pool);
	return ret;
}

int cmd_bench_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "vms", required_argument, NULL, 'v' },
		{ "ram", required_argument, NULL, 'r' },
		{ "reports", required_argument, NULL, 'n' },
		{ 0 }
	};
	struct report_opts o = { .vms = 8, .ram_mib = 64, .reports = 20 };
	static const uint64_t sizes[] = { 1024, 16384 };
	struct report_result res[2] = { 0 };
	char err[256] = "";
	int c;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'v':
			o.vms = (unsigned int)strtoul(optarg, NULL, 10);
			break;
		case 'r':
			o.ram_mib = strtoull(optarg, NULL, 10);
			break;
		case 'n':
			o.reports = (unsigned int)strtoul(optarg, NULL, 10);
			break;
		default:
			fprintf(stderr, "usage: gpmm bench report [--vms N] [--ram MIB] [--reports K]\n");
			return 2;
		}
	}
	/* the service lets a client read POOL_SERVICE_WALKS_PER_S pools' worth at once */
	if (!o.vms || o.vms > MAX_VMS || !o.ram_mib || o.ram_mib % 2 || !o.reports ||
	    o.vms * (o.ram_mib + 8) > sizes[0] ||
	    o.reports * (o.ram_mib / 2 + 4) > POOL_SERVICE_WALKS_PER_S * (sizes[0] / 2)) {
		fprintf(stderr, "gpmm bench report: 1..%d VMs of an even number of MiB, together"
			" (with 8 MiB of slack each) within %llu MiB, and no more reports than the"
			" service's walk budget lets a VM make at once\n", MAX_VMS,
			(unsigned long long)sizes[0]);
		return 2;
	}
	printf("%u VMs of %llu MiB on the pool service, %u reports each; per VM report: its own "
	       "pageblocks and the pool's statistics\n", o.vms, (unsigned long long)o.ram_mib,
	       o.reports);
	printf("%10s %12s %10s %16s %16s %18s %10s\n", "pool_MiB", "report_us", "own_us",
	       "whole_walk_ms", "stats_read_ms", "release_1_VM_ms", "frames");
	for (int i = 0; i < 2; i++) {
		if (measure(sizes[i], &o, &res[i], err, sizeof(err))) {
			fprintf(stderr, "gpmm bench report: %llu MiB: %s\n",
				(unsigned long long)sizes[i], err);
			return 1;
		}
		printf("%10llu %12.1f %10.1f %16.2f %16.2f %18.2f %10llu\n",
		       (unsigned long long)sizes[i], res[i].report_us, res[i].own_us,
		       res[i].whole_walk_ms, res[i].stats_read_ms,
		       res[i].release_ms, (unsigned long long)res[i].frames_released);
	}
	printf("ratio 16 GiB / 1 GiB: report %.2fx, its own pageblocks %.2fx; the whole pool's walk"
	       " %.1fx; the statistics read, shared by all VMs every %d ms, %.1fx\n",
	       res[1].report_us / res[0].report_us, res[1].own_us / res[0].own_us,
	       res[1].whole_walk_ms / res[0].whole_walk_ms, POOL_SERVICE_STATS_MS,
	       res[1].stats_read_ms / res[0].stats_read_ms);
	return 0;
}
