// SPDX-License-Identifier: GPL-2.0
/*
 * `gpmm bench migrate` and `gpmm bench hugeback`: live page migration
 * under a guest that writes all the time, and how fast a running guest's
 * RAM ends up on 2 MiB host pages when the pool is fragmented, measured
 * beside QEMU's own huge coverage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/bench.h"
#include "bench/trace.h"
#include "bench/workload.h"
#include "vmm/assembler.h"
#include "vmm/config.h"
#include "vmm/console_buf.h"
#include "vmm/kvm.h"
#include "vmm/samples.h"
#include "vmm/vm.h"

static char guest_dir[512] = "build/guests";

/* A memloop guest, running, its RAM touched once all over. */
static struct vm *start_memloop(struct pool *pool, uint64_t ram, unsigned int cpus,
				struct console_buf *con)
{
	struct vm_config cfg;
	struct vm *vm;
	char err[512];

	config_defaults(&cfg);
	snprintf(cfg.name, sizeof(cfg.name), "bench");
	snprintf(cfg.kernel, sizeof(cfg.kernel), "%s/memloop.bin", guest_dir);
	cfg.ram_bytes = ram;
	cfg.cpus = cpus;
	console_buf_init(con);
	if (vm_create(&cfg, pool, &vm, err, sizeof(err))) {
		fprintf(stderr, "gpmm bench: %s\n", err);
		return NULL;
	}
	vm->console = console_buf_write;
	vm->console_opaque = con;
	vm_start(vm);
	for (int i = 0; i < 12000 && !console_buf_has(con, "touched"); i++)
		usleep(10000);
	return vm;
}

static void stop_vm(struct vm *vm)
{
	vm_request_stop(vm, VM_SHUTDOWN, 0);
	vm_wait(vm);
	vm_destroy(vm);
}

#define LAT_SAMPLES	(1 << 20)

static uint64_t next_rand(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return *s >> 33;
}

static const char migrate_usage[] =
	"usage: gpmm bench migrate [--count N] [--cycles N] [--cpus N] [--no-wp] [--json]\n"
	"4 KiB live migrations of random pages of a memloop guest (4 MiB, 2 vCPUs,\n"
	"writing and checking every page all the time): migrations/s, vCPU stall\n"
	"p50/p99, and lost writes (the guest stops on the first). Then N cycles of\n"
	"2 MiB assembly + split of a 16 MiB guest: stall p50/p99 and time per range.\n"
	"--no-wp: copy + remap without write-protect, to see what it loses.\n";

int cmd_bench_migrate(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "count", required_argument, NULL, 'n' },
		{ "cycles", required_argument, NULL, 'c' },
		{ "no-wp", no_argument, NULL, 'w' },
		{ "cpus", required_argument, NULL, 'C' },
		{ "guests", required_argument, NULL, 'g' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	uint64_t count = 1000000, cycles = 200, moved = 0, seed = 1, t0, t4k, t2m;
	double p50_4k, p99_4k, p50_2m, p99_2m;
	uint64_t stalls_4k, stalls_2m, ranges = 0, lat_p50, lat_p99;
	static uint64_t lat[LAT_SAMPLES];
	bool no_wp = false, json = false, lost;
	unsigned int cpus = 2;
	struct console_buf con;
	struct pool *pool;
	struct vm *vm;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'n': count = strtoull(optarg, NULL, 0); break;
		case 'c': cycles = strtoull(optarg, NULL, 0); break;
		case 'w': no_wp = true; break;
		case 'C': cpus = (unsigned int)atoi(optarg); break;
		case 'g': snprintf(guest_dir, sizeof(guest_dir), "%s", optarg); break;
		case 'j': json = true; break;
		case 'h': fputs(migrate_usage, stdout); return 0;
		default: fputs(migrate_usage, stderr); return 2;
		}
	}
	if (kvm_unavailable()) {
		fprintf(stderr, "gpmm bench migrate: KVM is not available: %s\n", kvm_unavailable());
		return 1;
	}
	if (pool_open(256 << 20, true, &pool))
		return 1;
	vm = start_memloop(pool, 4 << 20, cpus, &con);
	if (!vm)
		return 1;
	vm->mig.unsafe_no_wp = no_wp;
	t0 = vm_now_ns();
	while (moved < count && vm_get_state(vm) == VM_RUNNING) {
		long frame = mm_alloc(pool->mm, NULL, 0, MIGRATE_MOVABLE, vm->owner);
		uint64_t old, page = 0x200000 + ((next_rand(&seed) % 0x200000) & ~4095ULL);
		uint64_t m0 = vm_now_ns();

		if (frame < 0)
			break;
		if (vm_migrate_page(vm, page, frame, &old) == 0) {
			lat[moved % LAT_SAMPLES] = vm_now_ns() - m0;
			mm_free(pool->mm, NULL, old);
			moved++;
		} else {
			mm_free(pool->mm, NULL, frame);
		}
	}
	t4k = vm_now_ns() - t0;
	lost = vm_get_state(vm) != VM_RUNNING || console_buf_has(&con, "lost write");
	qsort(lat, moved < LAT_SAMPLES ? moved : LAT_SAMPLES, sizeof(lat[0]), cmp_u64);
	lat_p50 = lat[(moved < LAT_SAMPLES ? moved : LAT_SAMPLES) / 2];
	lat_p99 = lat[(uint64_t)((moved < LAT_SAMPLES ? moved : LAT_SAMPLES) * 0.99)];
	p50_4k = vm_stall_percentile(vm, 50) / 1e3;
	p99_4k = vm_stall_percentile(vm, 99) / 1e3;
	stalls_4k = vm->mig.nr_stalls;
	stop_vm(vm);

	vm = start_memloop(pool, 16 << 20, cpus, &con);
	if (!vm)
		return 1;
	t0 = vm_now_ns();
	for (uint64_t i = 0; i < cycles && vm_get_state(vm) == VM_RUNNING; i++) {
		uint64_t gpa = 0x200000 + (i % 7) * 0x200000;

		if (vm_assemble_range(vm, gpa) == 0) {
			ranges++;
			vm_split_range(vm, gpa);
		}
	}
	t2m = vm_now_ns() - t0;
	lost = lost || vm_get_state(vm) != VM_RUNNING;
	p50_2m = vm_stall_percentile(vm, 50) / 1e3;
	p99_2m = vm_stall_percentile(vm, 99) / 1e3;
	stalls_2m = vm->mig.nr_stalls;
	stop_vm(vm);
	pool_close(pool);

	if (json) {
		printf("{\"migrations\":%llu,\"migrations_per_sec\":%.0f,\"stalls_4k\":%llu,"
		       "\"stall_p50_us\":%.1f,\"stall_p99_us\":%.1f,\"ranges\":%llu,"
		       "\"migration_p50_us\":%.1f,\"migration_p99_us\":%.1f,\"ms_per_range\":%.3f,\"stalls_2m\":%llu,\"stall_2m_p50_us\":%.1f,"
		       "\"stall_2m_p99_us\":%.1f,\"lost_writes\":%s,\"write_protect\":%s}\n",
		       (unsigned long long)moved, moved / (t4k / 1e9), (unsigned long long)stalls_4k,
		       p50_4k, p99_4k, (unsigned long long)ranges, lat_p50 / 1e3, lat_p99 / 1e3,
		       ranges ? t2m / 1e6 / ranges : 0.0, (unsigned long long)stalls_2m,
		       p50_2m, p99_2m, lost ? "true" : "false", no_wp ? "false" : "true");
		return lost && !no_wp ? 1 : 0;
	}
	printf("gpmm bench migrate: memloop guest writing all its pages, %u vCPUs%s\n\n",
	       cpus, no_wp ? ", NO write-protect (copy + remap only)" : "");
	printf("4 KiB: %llu migrations in %.2f s = %.0f/s; one migration p50 %.1f us, p99 %.1f us;\n"
	       "       %llu vCPU stalls (a write hit a protected page), p50 %.1f us, p99 %.1f us\n",
	       (unsigned long long)moved, t4k / 1e9, moved / (t4k / 1e9),
	       lat_p50 / 1e3, lat_p99 / 1e3,
	       (unsigned long long)stalls_4k, p50_4k, p99_4k);
	printf("2 MiB: %llu assemblies (+ splits) in %.2f s = %.3f ms each; %llu stalls, p50 %.1f us, p99 %.1f us\n",
	       (unsigned long long)ranges, t2m / 1e9, ranges ? t2m / 1e6 / ranges : 0.0,
	       (unsigned long long)stalls_2m, p50_2m, p99_2m);
	printf("lost writes: %s\n", lost ? "YES (the guest saw one and stopped)" : "none");
	return lost && !no_wp ? 1 : 0;
}

/* QEMU's huge coverage of the same amount of RAM, from its smaps_rollup. */
static double qemu_huge_pct(uint64_t mib, bool memfd, char *why, size_t whylen)
{
	char cmd[1024], path[64], line[256];
	uint64_t anon = 0, shmem = 0, v;
	FILE *f;
	int pid = 0;

	snprintf(cmd, sizeof(cmd),
		 "qemu-system-x86_64 -machine microvm,accel=kvm -m %llu -object "
		 "memory-backend-%s,id=m,size=%lluM -machine memory-backend=m -mem-prealloc "
		 "-S -display none -nodefaults -daemonize -pidfile /tmp/gpmm-bench-qemu.pid "
		 ">/dev/null 2>&1", (unsigned long long)mib, memfd ? "memfd" : "ram",
		 (unsigned long long)mib);
	if (system("command -v qemu-system-x86_64 >/dev/null 2>&1")) {
		snprintf(why, whylen, "not installed (apt-get install qemu-system-x86)");
		return -1;
	}
	if (system(cmd)) {
		snprintf(why, whylen, "qemu-system-x86_64 did not start");
		return -1;
	}
	f = fopen("/tmp/gpmm-bench-qemu.pid", "r");
	if (!f || fscanf(f, "%d", &pid) != 1) {
		if (f)
			fclose(f);
		return -1;
	}
	fclose(f);
	sleep(1);
	snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", pid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "AnonHugePages: %llu kB", (unsigned long long *)&v) == 1)
			anon = v;
		if (sscanf(line, "ShmemPmdMapped: %llu kB", (unsigned long long *)&v) == 1)
			shmem = v;
	}
	if (f)
		fclose(f);
	kill(pid, SIGTERM);
	return 100.0 * (double)(anon + shmem) / (double)(mib * 1024);
}

static int tenant_sink(void *opaque, const struct trace_event *ev)
{
	struct { struct replay *r; char *err; size_t errlen; } *ctx = opaque;

	return replay_event(ctx->r, ev, ctx->err, ctx->errlen);
}

/*
 * Fragment the pool the way other tenants would: the default workload
 * fills it, then a random share of the movable and reclaimable memory
 * goes, leaving room for the guest in scattered 4 KiB holes.
 */
static struct replay *prefragment(struct pool *pool, struct mm_pcp *pcp,
				  uint64_t need_pages, char *err, size_t errlen)
{
	const struct wl_profile *p = wl_profile_find("default");
	struct replay *r;

	if (replay_create(pool->mm, pcp, true, &r))
		return NULL;
	{
	struct { struct replay *r; char *err; size_t errlen; } ctx = { r, err, errlen };

	if (wl_generate(p, mm_pool_frames(pool->mm), 1, tenant_sink, &ctx)) {
		replay_destroy(r);
		return NULL;
	}
	/* the load leaves whole free blocks: fill them with tenant pages too */
	{
		struct trace_event ev = { .op = TRACE_ALLOC, .mt = MIGRATE_MOVABLE };
		const struct replay_counts *rc = replay_counts(r);
		uint64_t failed = rc->alloc_failed;

		for (ev.id = 1ULL << 40; rc->alloc_failed == failed; ev.id++)
			if (replay_event(r, &ev, err, errlen))
				break;
	}
	for (unsigned int permille = 100; permille <= 1000; permille += 100) {
		struct mm_stats st;

		mm_drain_all(pool->mm);
		if (mm_stats(pool->mm, &st) || st.free_pages >= need_pages)
			break;
		replay_free_some(r, 1U << MIGRATE_MOVABLE | 1U << MIGRATE_RECLAIMABLE,
				 permille / 4, permille);
	}
	}
	return r;
}

static const char hugeback_usage[] =
	"usage: gpmm bench hugeback [--pool-mib N] [--mib N] [--seconds N] [--no-qemu] [--json]\n"
	"Pre-fragments the pool (the default workload of other tenants, then a\n"
	"random share of it freed), boots a memloop guest touching N MiB (default\n"
	"256) and samples its huge-backed share (kernel smaps) every 100 ms for\n"
	"10 s. QEMU runs beside it with the same RAM (memfd and anonymous\n"
	"backends, touched by -mem-prealloc: QEMU cannot boot gpmm's flat payload).\n";

int cmd_bench_hugeback(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pool-mib", required_argument, NULL, 'p' },
		{ "mib", required_argument, NULL, 'm' },
		{ "seconds", required_argument, NULL, 's' },
		{ "no-qemu", no_argument, NULL, 'q' },
		{ "guests", required_argument, NULL, 'g' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	uint64_t pool_mib = 1024, mib = 256, seconds = 10;
	double pct = 0, t98 = -1, q_memfd = -1, q_anon = -1, unusable;
	bool qemu = true, json = false, lost;
	struct assembler *as;
	struct console_buf con;
	struct vm_config cfg;
	struct mm_stats st;
	struct replay *tenant;
	struct mm_pcp *pcp;
	struct pool *pool;
	struct vm *vm;
	char err[512], why[128];
	uint64_t t0, free0;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'p': pool_mib = strtoull(optarg, NULL, 0); break;
		case 'm': mib = strtoull(optarg, NULL, 0); break;
		case 's': seconds = strtoull(optarg, NULL, 0); break;
		case 'q': qemu = false; break;
		case 'g': snprintf(guest_dir, sizeof(guest_dir), "%s", optarg); break;
		case 'j': json = true; break;
		case 'h': fputs(hugeback_usage, stdout); return 0;
		default: fputs(hugeback_usage, stderr); return 2;
		}
	}
	if (!mib || mib % 2 || pool_mib % 2 || mib + 64 > pool_mib || !seconds) {
		fprintf(stderr, "gpmm bench hugeback: --mib and --pool-mib must be even, "
			"and the pool at least 64 MiB larger than the guest\n");
		return 2;
	}
	if (kvm_unavailable()) {
		fprintf(stderr, "gpmm bench hugeback: KVM is not available: %s\n", kvm_unavailable());
		return 1;
	}
	if (pool_open(pool_mib << 20, true, &pool) || mm_pcp_create(pool->mm, &pcp))
		return 1;
	tenant = prefragment(pool, pcp, (mib + 32) << 8, err, sizeof(err));
	if (!tenant) {
		fprintf(stderr, "gpmm bench hugeback: pre-fragmenting failed: %s\n", err);
		return 1;
	}
	mm_drain_all(pool->mm);
	mm_stats(pool->mm, &st);
	free0 = st.free_pages;
	unusable = mm_unusable_index(&st, MM_PAGEBLOCK_ORDER);

	config_defaults(&cfg);
	snprintf(cfg.name, sizeof(cfg.name), "hugeback");
	snprintf(cfg.kernel, sizeof(cfg.kernel), "%s/memloop.bin", guest_dir);
	cfg.ram_bytes = (mib + 2) << 20;	/* memloop touches all above 2 MiB */
	cfg.cpus = 2;
	console_buf_init(&con);
	if (vm_create(&cfg, pool, &vm, err, sizeof(err))) {
		fprintf(stderr, "gpmm bench hugeback: %s\n", err);
		return 1;
	}
	vm->console = console_buf_write;
	vm->console_opaque = &con;
	if (assembler_start(&as, 20) || assembler_add(as, vm))
		return 1;
	if (!json)
		printf("gpmm bench hugeback: pool %llu MiB pre-fragmented (%.0f MiB free, unusable "
		       "index(9) %.3f), memloop guest touching %llu MiB, 2 vCPUs\n\n%6s %12s %12s %8s\n",
		       (unsigned long long)pool_mib, free0 / 256.0, unusable,
		       (unsigned long long)mib, "t(s)", "touched_MiB", "huge_MiB", "huge%");
	vm_start(vm);
	t0 = vm_now_ns();
	for (uint64_t i = 1; i <= seconds * 10; i++) {
		uint64_t pop;
		int64_t huge;

		usleep(100000);
		pop = vm_populated_pages(vm) << MM_PAGE_SHIFT;
		huge = vm_huge_bytes_kernel(vm, NULL);
		pct = pop ? 100.0 * (double)(huge > 0 ? huge : 0) / (double)pop : 0;
		if (t98 < 0 && pct >= 98.0 && console_buf_has(&con, "touched"))
			t98 = (vm_now_ns() - t0) / 1e9;
		if (!json && (i % 5 == 0 || i == 1))
			printf("%6.1f %12.1f %12.1f %8.2f\n", (vm_now_ns() - t0) / 1e9,
			       pop / 1048576.0, (huge > 0 ? huge : 0) / 1048576.0, pct);
	}
	lost = vm_get_state(vm) != VM_RUNNING;
	assembler_remove(as, vm);
	assembler_stop(as);
	mm_stats(pool->mm, &st);
	stop_vm(vm);
	replay_destroy(tenant);
	mm_pcp_destroy(pcp);
	pool_close(pool);
	why[0] = '\0';
	if (qemu) {
		q_memfd = qemu_huge_pct(mib, true, why, sizeof(why));
		q_anon = qemu_huge_pct(mib, false, why, sizeof(why));
	}
	if (json) {
		printf("{\"guest_mib\":%llu,\"gpmm_huge_pct\":%.2f,\"seconds_to_98pct\":%.2f,"
		       "\"qemu_memfd_huge_pct\":%.2f,\"qemu_anon_huge_pct\":%.2f,"
		       "\"compact_stall\":%llu,\"pgmigrate\":%llu,\"lost_writes\":%s}\n",
		       (unsigned long long)mib, pct, t98, q_memfd, q_anon,
		       (unsigned long long)st.counters.compact_stall,
		       (unsigned long long)st.counters.pgmigrate_success, lost ? "true" : "false");
		return 0;
	}
	printf("\n%-44s %8s\n", "", "huge%");
	printf("%-44s %8.2f  (98%% reached after %.1f s)\n", "gpmm, pool memfd, grouping + compaction",
	       pct, t98);
	if (qemu && q_memfd >= 0) {
		printf("%-44s %8.2f\n", "QEMU memory-backend-memfd (-mem-prealloc)", q_memfd);
		printf("%-44s %8.2f\n", "QEMU plain anonymous RAM (-mem-prealloc)", q_anon);
	} else if (qemu) {
		printf("QEMU: %s\n", why);
	}
	printf("\ncompaction stalls %llu, pages migrated %llu; guest lost writes: %s\n",
	       (unsigned long long)st.counters.compact_stall,
	       (unsigned long long)st.counters.pgmigrate_success, lost ? "YES" : "none");
	return lost ? 1 : 0;
}
