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
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/bench.h"
#include "bench/progress.h"
#include "bench/trace.h"
#include "bench/workload.h"
#include "vmm/memory/assembler.h"
#include "vmm/core/config.h"
#include "vmm/control/console_buf.h"
#include "vmm/core/kvm.h"
#include "vmm/core/samples.h"
#include "vmm/core/vm.h"
#include "vmm/memory/guest_mem.h"
#include "vmm/memory/huge_backing.h"
#include "vmm/memory/page_move.h"

static char guest_dir[512] = "build/guests";

/*
 * A memloop guest, running, its RAM touched once all over. Touching is
 * guest work, slow on nested KVM (DESIGN.md): up to two minutes.
 */
static struct vm *start_memloop(struct pool *pool, uint64_t ram, unsigned int cpus,
				struct console_buf *con, struct progress *pr)
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
		progress_clear(pr);
		fprintf(stderr, "gpmm bench: %s\n", err);
		return NULL;
	}
	vm->console = console_buf_write;
	vm->console_opaque = con;
	progress_phase(pr, "bench migrate: memloop guest (%llu MiB) touching its RAM",
		       (unsigned long long)(ram >> 20));
	if (vm_start(vm)) {
		progress_clear(pr);
		fprintf(stderr, "gpmm bench: cannot start the guest\n");
		vm_destroy(vm);
		return NULL;
	}
	for (int i = 0; i < 12000 && !console_buf_has(con, "touched") &&
	     vm_get_state(vm) == VM_RUNNING; i++) {
		usleep(10000);
		progress_tick(pr, "%.1f of %llu MiB backed, %.1f s",
			      (double)vm_populated_pages(vm) / 256.0,
			      (unsigned long long)(ram >> 20), i / 100.0);
	}
	return vm;
}

/*
 * How a memloop guest's run ended, read before it is stopped. A VM that
 * is no longer running is not proof of a lost write: the guest may have
 * seen one (it prints it and exits), or gpmm may have failed the VM (a
 * page it could not back, an unexpected exit: vm->report), or it stopped
 * for another reason. Each calls for a different look.
 */
struct vm_end {
	enum vm_state state;
	int exit_code;
	bool lost_write;	/* the guest printed one */
	char what[600];		/* one sentence for the report */
};

/* The console line holding @needle, without its newline; false if none. */
static bool console_line(struct console_buf *con, const char *needle,
			 char *out, size_t outlen)
{
	char *hit, *eol, *bol;
	bool found = false;

	pthread_mutex_lock(&con->lock);
	hit = strstr(con->text, needle);
	if (hit) {
		for (bol = hit; bol > con->text && bol[-1] != '\n'; bol--)
			;
		eol = strchr(hit, '\n');
		snprintf(out, outlen, "%.*s", (int)(eol ? eol - bol : (long)strlen(bol)), bol);
		found = true;
	}
	pthread_mutex_unlock(&con->lock);
	return found;
}

static void vm_end_read(struct vm *vm, struct console_buf *con, struct vm_end *e)
{
	char line[300];

	e->state = vm_get_state(vm);
	e->exit_code = vm->exit_code;
	e->lost_write = console_line(con, "lost write", line, sizeof(line));
	if (e->lost_write)
		snprintf(e->what, sizeof(e->what), "YES, the guest saw one and stopped: %s", line);
	else if (e->state == VM_RUNNING)
		snprintf(e->what, sizeof(e->what), "none (the guest was still running at the end)");
	else if (e->state == VM_FAILED)
		snprintf(e->what, sizeof(e->what), "none seen, but the VM FAILED: %.*s",
			 (int)strcspn(vm->report, "\n"), vm->report);
	else
		snprintf(e->what, sizeof(e->what), "none seen, but the VM stopped early "
			 "(%s, exit code %d)", vm_state_name(e->state), e->exit_code);
}

/* Anything but a guest still running at the end spoils the figures. */
static bool vm_end_bad(const struct vm_end *e)
{
	return e->lost_write || e->state != VM_RUNNING;
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
	"usage: gpmm bench migrate [--count N] [--cycles N] [--ranges N] [--cpus N] [--no-wp]\n"
	"                          [--json]\n"
	"4 KiB live migrations of random pages of a memloop guest (4 MiB, 2 vCPUs,\n"
	"writing and checking every page all the time): migrations/s, vCPU stall\n"
	"p50/p99, and lost writes (the guest stops on the first). Then, on a pool of\n"
	"4 KiB host pages and on one whose blocks are host huge pages: the --ranges\n"
	"(24) ranges of a guest assembled once each onto blocks that served 4 KiB\n"
	"pages before (a tenant touched all free memory), and --cycles (200) of\n"
	"assembly + split of its first seven ranges: time per range, stall p50/p99\n"
	"and the kernel's count of the 2 MiB copies it made (thp_collapse_alloc).\n"
	"--no-wp: copy + remap without write-protect, to see what it loses.\n";

struct mig_result {
	uint64_t done;		/* 4 KiB migrations, or 2 MiB assemblies */
	uint64_t ns;
	uint64_t lat_p50, lat_p99;	/* one 4 KiB migration, ns */
	uint64_t stalls;
	double stall_p50_us, stall_p99_us;
	struct vm_end end;
};

static void mig_finish(struct vm *vm, struct console_buf *con, struct mig_result *r)
{
	vm_end_read(vm, con, &r->end);
	r->stall_p50_us = vm_stall_percentile(vm, 50) / 1e3;
	r->stall_p99_us = vm_stall_percentile(vm, 99) / 1e3;
	r->stalls = vm->mig.nr_stalls;
}

/* @count migrations of random pages in [2 MiB, 4 MiB) while the guest runs. */
static void migrate_4k(struct pool *pool, struct vm *vm, uint64_t count,
		       struct progress *pr, struct mig_result *r)
{
	static uint64_t lat[LAT_SAMPLES];
	uint64_t seed = 1, t0 = vm_now_ns(), n;

	progress_phase(pr, "bench migrate 4 KiB");
	while (r->done < count && vm_get_state(vm) == VM_RUNNING) {
		long frame = mm_alloc(pool->mm, NULL, 0, MIGRATE_MOVABLE, vm->owner);
		uint64_t old, page = 0x200000 + ((next_rand(&seed) % 0x200000) & ~4095ULL);
		uint64_t m0 = vm_now_ns();

		if (frame < 0)
			break;
		if (vm_migrate_page(vm, page, frame, &old) == 0) {
			lat[r->done % LAT_SAMPLES] = vm_now_ns() - m0;
			r->done++;
			frame = (long)old;
		}
		if (mm_free(pool->mm, NULL, (uint64_t)frame))
			break;	/* the pool's bookkeeping disagrees: stop measuring */
		progress_tick(pr, "%llu/%llu (%.0f%%), %.0f/s so far",
			      (unsigned long long)r->done, (unsigned long long)count,
			      100.0 * (double)r->done / (double)count,
			      r->done / ((vm_now_ns() - t0) / 1e9));
	}
	r->ns = vm_now_ns() - t0;
	n = r->done < LAT_SAMPLES ? r->done : LAT_SAMPLES;
	qsort(lat, n, sizeof(lat[0]), cmp_u64);
	r->lat_p50 = n ? lat[n / 2] : 0;
	r->lat_p99 = n ? lat[(uint64_t)((double)n * 0.99)] : 0;
}

/* @cycles 2 MiB assemblies and splits of the guest's first seven ranges. */
static void assemble_2m(struct vm *vm, uint64_t cycles, struct progress *pr,
			struct mig_result *r)
{
	uint64_t t0 = vm_now_ns();

	progress_phase(pr, "bench migrate 2 MiB");
	for (uint64_t i = 0; i < cycles && vm_get_state(vm) == VM_RUNNING; i++) {
		uint64_t gpa = 0x200000 + (i % 7) * 0x200000;

		if (vm_assemble_range(vm, gpa) == 0 && vm_split_range(vm, gpa) == 0)
			r->done++;
		progress_tick(pr, "cycle %llu/%llu, %llu assembled, %.3f ms each so far",
			      (unsigned long long)i + 1, (unsigned long long)cycles,
			      (unsigned long long)r->done,
			      r->done ? (vm_now_ns() - t0) / 1e6 / r->done : 0.0);
	}
	r->ns = vm_now_ns() - t0;
}

/* A /proc/vmstat counter, or -1: the kernel's own count of what it did. */
static long long vmstat_read(const char *name)
{
	FILE *f = fopen("/proc/vmstat", "r");
	char key[64];
	long long v, found = -1;

	if (!f)
		return -1;
	while (fscanf(f, "%63s %lld", key, &v) == 2)
		if (!strcmp(key, name))
			found = v;
	fclose(f);
	return found;
}

/*
 * The 2 MiB phase, once per way the pool treats host memory: today's
 * (4 KiB host pages, every assembly's MADV_COLLAPSE copies the range) and
 * pool blocks made host huge pages on first use. The kernel counts the
 * huge pages it builds by copying (thp_collapse_alloc): read around the
 * phase, it shows the copies the assembly made the kernel do.
 */
struct pool_mode {
	const char *name;
	struct pool_host host;
};

static const struct pool_mode pool_modes[] = {
	{ "--pool-huge off (4 KiB host pages)", { .huge = false, .release_ms = 0 } },
	{ "--pool-huge on (default)", POOL_HOST_DEFAULTS },
};

#define NR_POOL_MODES	(sizeof(pool_modes) / sizeof(pool_modes[0]))

struct asm_result {
	struct mig_result r;
	long long kernel_copies;	/* thp_collapse_alloc over the phase */
	uint64_t pool_made_huge;	/* of those, the pool making fresh blocks huge */
	uint64_t onto_huge;		/* assemblies onto blocks already huge */
	/* once each onto blocks that served 4 KiB pages before */
	uint64_t aged_ranges;
	double aged_ms_per_range;
	long long aged_kernel_copies;
	uint64_t aged_onto_huge;
};

/*
 * A tenant's past: every free frame of the pool allocated 4 KiB at a time,
 * written, and freed. Blocks the assembler takes afterwards have served
 * 4 KiB pages, as on a host that ran for a while; on a pool of 4 KiB host
 * pages their memory is then 512 small pages that a collapse must copy.
 */
static void age_pool(struct pool *pool)
{
	uint64_t n = mm_pool_frames(pool->mm), got = 0;
	long *frames = calloc(n, sizeof(*frames));
	long f;

	if (!frames)
		return;
	while (got < n && (f = mm_alloc(pool->mm, NULL, 0, MIGRATE_MOVABLE, MM_NO_OWNER)) >= 0) {
		*(volatile uint8_t *)pool_frame_ptr(pool, (uint64_t)f) = 1;
		frames[got++] = f;
	}
	while (got)
		if (mm_free(pool->mm, NULL, (uint64_t)frames[--got]))
			break;
	free(frames);
}

/* Every range above the first assembled once, onto aged blocks; then split back. */
static void assemble_aged(struct pool *pool, struct vm *vm, uint64_t ranges,
			  struct progress *pr, struct asm_result *a)
{
	uint64_t t0, onto0 = vm->migstats.ranges_onto_huge;
	long long k0;

	progress_phase(pr, "bench migrate 2 MiB onto aged blocks");
	age_pool(pool);
	k0 = vmstat_read("thp_collapse_alloc");
	t0 = vm_now_ns();
	for (uint64_t i = 1; i <= ranges && vm_get_state(vm) == VM_RUNNING; i++)
		a->aged_ranges += vm_assemble_range(vm, i << MM_PAGEBLOCK_SHIFT) == 0;
	a->aged_ms_per_range = a->aged_ranges ?
		(vm_now_ns() - t0) / 1e6 / (double)a->aged_ranges : 0;
	a->aged_kernel_copies = k0 < 0 ? -1 : vmstat_read("thp_collapse_alloc") - k0;
	a->aged_onto_huge = vm->migstats.ranges_onto_huge - onto0;
	for (uint64_t i = 1; i <= ranges; i++)
		if (vm_split_range(vm, i << MM_PAGEBLOCK_SHIFT) && i <= a->aged_ranges)
			break;	/* not assembled, or busy: the cycles below still run */
}

static int assemble_mode(const struct pool_mode *m, uint64_t cycles, uint64_t ranges,
			 unsigned int cpus, struct progress *pr, struct asm_result *a)
{
	struct console_buf con;
	struct mm_stats st0, st1;
	struct pool *pool;
	struct vm *vm;
	long long k0;

	if (pool_open_host(256 << 20, true, &m->host, &pool))
		return -1;
	vm = start_memloop(pool, (2 + 2 * ranges) << 20, cpus, &con, pr);
	if (!vm) {
		pool_close(pool);
		return -1;
	}
	assemble_aged(pool, vm, ranges, pr, a);
	k0 = vmstat_read("thp_collapse_alloc");
	if (mm_stats(pool->mm, &st0))
		memset(&st0, 0, sizeof(st0));
	assemble_2m(vm, cycles, pr, &a->r);
	a->kernel_copies = k0 < 0 ? -1 : vmstat_read("thp_collapse_alloc") - k0;
	if (mm_stats(pool->mm, &st1) == 0)
		a->pool_made_huge = st1.counters.host_huge - st0.counters.host_huge;
	a->onto_huge = vm->migstats.ranges_onto_huge - a->aged_onto_huge;
	mig_finish(vm, &con, &a->r);
	stop_vm(vm);
	pool_close(pool);
	return 0;
}

static json_t *assemble_json(const struct asm_result *a)
{
	const struct mig_result *r2 = &a->r;

	return json_pack("{s:I, s:f, s:I, s:I, s:I, s:f, s:I, s:f, s:f, s:I, s:I, s:I, s:s}",
		"aged_ranges", (json_int_t)a->aged_ranges,
		"aged_ms_per_range", a->aged_ms_per_range,
		"aged_kernel_thp_copies", (json_int_t)a->aged_kernel_copies,
		"aged_onto_host_huge", (json_int_t)a->aged_onto_huge,
		"ranges", (json_int_t)r2->done,
		"ms_per_range", r2->done ? r2->ns / 1e6 / r2->done : 0.0,
		"stalls_2m", (json_int_t)r2->stalls,
		"stall_2m_p50_us", r2->stall_p50_us, "stall_2m_p99_us", r2->stall_p99_us,
		"kernel_thp_copies", (json_int_t)a->kernel_copies,
		"pool_blocks_made_huge", (json_int_t)a->pool_made_huge,
		"assembled_onto_host_huge", (json_int_t)a->onto_huge,
		"vm_state_2m", vm_state_name(r2->end.state));
}

static void print_migrate_json(const struct mig_result *r4, const struct asm_result *a,
			       bool no_wp)
{
	const struct mig_result *r2 = &a[NR_POOL_MODES - 1].r;
	json_t *modes = json_object();
	json_t *o = json_pack("{s:I, s:f, s:I, s:f, s:f, s:I, s:f, s:f, s:f, s:I, s:f, s:f,"
			      " s:b, s:b, s:s, s:s, s:s, s:s}",
		"migrations", (json_int_t)r4->done,
		"migrations_per_sec", r4->ns ? r4->done / (r4->ns / 1e9) : 0.0,
		"stalls_4k", (json_int_t)r4->stalls,
		"stall_p50_us", r4->stall_p50_us, "stall_p99_us", r4->stall_p99_us,
		"ranges", (json_int_t)r2->done,
		"migration_p50_us", r4->lat_p50 / 1e3, "migration_p99_us", r4->lat_p99 / 1e3,
		"ms_per_range", r2->done ? r2->ns / 1e6 / r2->done : 0.0,
		"stalls_2m", (json_int_t)r2->stalls,
		"stall_2m_p50_us", r2->stall_p50_us, "stall_2m_p99_us", r2->stall_p99_us,
		"lost_writes", r4->end.lost_write || a[0].r.end.lost_write ||
			       a[1].r.end.lost_write,
		"write_protect", !no_wp,
		"vm_state_4k", vm_state_name(r4->end.state),
		"vm_state_2m", vm_state_name(r2->end.state),
		"guest_4k", r4->end.what, "guest_2m", r2->end.what);

	for (size_t i = 0; i < NR_POOL_MODES; i++)
		json_object_set_new(modes, pool_modes[i].host.huge ? "pool_huge_on" : "pool_huge_off",
				    assemble_json(&a[i]));
	json_object_set_new(o, "assembly_by_pool", modes);
	json_dumpf(o, stdout, JSON_COMPACT);
	putchar('\n');
	json_decref(o);
}

static void print_migrate(const struct mig_result *r4, const struct asm_result *a,
			  unsigned int cpus, bool no_wp)
{
	printf("gpmm bench migrate: memloop guest writing all its pages, %u vCPUs%s\n\n",
	       cpus, no_wp ? ", NO write-protect (copy + remap only)" : "");
	printf("4 KiB: %llu migrations in %.2f s = %.0f/s; one migration p50 %.1f us, p99 %.1f us;\n"
	       "       %llu vCPU stalls (a write hit a protected page), p50 %.1f us, p99 %.1f us\n",
	       (unsigned long long)r4->done, r4->ns / 1e9,
	       r4->ns ? r4->done / (r4->ns / 1e9) : 0.0, r4->lat_p50 / 1e3, r4->lat_p99 / 1e3,
	       (unsigned long long)r4->stalls, r4->stall_p50_us, r4->stall_p99_us);
	printf("2 MiB assembly, by what the pool does with host memory (k_copies: the\n"
	       "kernel's count of huge pages it built by copying, /proc/vmstat\n"
	       "thp_collapse_alloc, over the phase; pb_huge: pool blocks gpmm made huge on\n"
	       "first use meanwhile, part of k_copies; onto_huge: assemblies onto blocks\n"
	       "already huge)\n");
	printf("once per range, onto blocks that served 4 KiB pages before:\n");
	printf("  %-36s %6s %9s %8s %9s\n", "pool", "ranges", "ms/range", "k_copies", "onto_huge");
	for (size_t i = 0; i < NR_POOL_MODES; i++)
		printf("  %-36s %6llu %9.3f %8lld %9llu\n", pool_modes[i].name,
		       (unsigned long long)a[i].aged_ranges, a[i].aged_ms_per_range,
		       a[i].aged_kernel_copies, (unsigned long long)a[i].aged_onto_huge);
	printf("assembly + split cycles of seven ranges (blocks recycled):\n");
	printf("  %-36s %6s %9s %7s %8s %8s %8s %8s %9s\n", "pool", "ranges", "ms/range",
	       "stalls", "p50_us", "p99_us", "k_copies", "pb_huge", "onto_huge");
	for (size_t i = 0; i < NR_POOL_MODES; i++) {
		const struct mig_result *r2 = &a[i].r;

		printf("  %-36s %6llu %9.3f %7llu %8.1f %8.1f %8lld %8llu %9llu\n",
		       pool_modes[i].name, (unsigned long long)r2->done,
		       r2->done ? r2->ns / 1e6 / r2->done : 0.0,
		       (unsigned long long)r2->stalls, r2->stall_p50_us, r2->stall_p99_us,
		       a[i].kernel_copies, (unsigned long long)a[i].pool_made_huge,
		       (unsigned long long)a[i].onto_huge);
	}
	if (a[0].r.done && a[1].r.done)
		printf("  time per range, huge on / off: %.2fx\n",
		       ((double)a[1].r.ns / a[1].r.done) / ((double)a[0].r.ns / a[0].r.done));
	printf("lost writes, 4 KiB guest: %s\n", r4->end.what);
	for (size_t i = 0; i < NR_POOL_MODES; i++)
		printf("lost writes, 2 MiB guest, %s: %s\n", pool_modes[i].name, a[i].r.end.what);
}

int cmd_bench_migrate(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "count", required_argument, NULL, 'n' },
		{ "cycles", required_argument, NULL, 'c' },
		{ "ranges", required_argument, NULL, 'r' },
		{ "no-wp", no_argument, NULL, 'w' },
		{ "cpus", required_argument, NULL, 'C' },
		{ "guests", required_argument, NULL, 'g' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	uint64_t count = 1000000, cycles = 200, ranges = 24;
	struct mig_result r4 = { 0 };
	struct asm_result a[NR_POOL_MODES] = { 0 };
	bool no_wp = false, json = false, bad;
	struct progress progress;
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
		case 'r': ranges = strtoull(optarg, NULL, 0); break;
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
	progress_init(&progress, json);
	vm = start_memloop(pool, 4 << 20, cpus, &con, &progress);
	if (!vm)
		return 1;
	vm->mig.unsafe_no_wp = no_wp;
	migrate_4k(pool, vm, count, &progress, &r4);
	mig_finish(vm, &con, &r4);
	stop_vm(vm);
	pool_close(pool);

	bad = vm_end_bad(&r4.end);
	for (size_t i = 0; i < NR_POOL_MODES; i++) {
		if (assemble_mode(&pool_modes[i], cycles, ranges, cpus, &progress, &a[i]))
			return 1;
		bad = bad || vm_end_bad(&a[i].r.end);
	}
	progress_clear(&progress);
	if (json)
		print_migrate_json(&r4, a, no_wp);
	else
		print_migrate(&r4, a, cpus, no_wp);
	return bad && !no_wp ? 1 : 0;
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

struct tenant_ctx {
	struct replay *r;
	struct progress *progress;
	char *err;
	size_t errlen;
};

static int tenant_sink(void *opaque, const struct trace_event *ev)
{
	struct tenant_ctx *ctx = opaque;

	progress_tick(ctx->progress, "%llu events",
		      (unsigned long long)replay_counts(ctx->r)->events);
	return replay_event(ctx->r, ev, ctx->err, ctx->errlen);
}

/*
 * Fragment the pool the way other tenants would: the default workload
 * fills it, then a random share of the movable and reclaimable memory
 * goes, leaving room for the guest in scattered 4 KiB holes.
 */
static struct replay *prefragment(struct pool *pool, struct mm_pcp *pcp,
				  uint64_t need_pages, struct progress *pr,
				  char *err, size_t errlen)
{
	const struct wl_profile *p = wl_profile_find("default");
	struct replay *r;

	if (replay_create(pool->mm, pcp, true, &r))
		return NULL;
	progress_phase(pr, "bench hugeback: pre-fragmenting the %llu MiB pool",
		       (unsigned long long)(mm_pool_frames(pool->mm) >> 8));
	{
	struct tenant_ctx ctx = { r, pr, err, errlen };

	if (wl_generate(p, mm_pool_frames(pool->mm), 1, tenant_sink, NULL, &ctx, NULL)) {
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

/*
 * The host's free memory in blocks of 2 MiB or more, by /proc/buddyinfo:
 * what a THP fault can take without compacting first.
 */
static double host_free_huge_mib(void)
{
	FILE *f = fopen("/proc/buddyinfo", "r");
	char line[512];
	double mib = 0;

	while (f && fgets(line, sizeof(line), f)) {
		char *p = strstr(line, "zone");
		unsigned long long n;
		int used, order = 0;

		if (!p)
			continue;
		p += 4;
		while (*p == ' ')
			p++;
		while (*p && *p != ' ')
			p++;		/* the zone's name */
		while (sscanf(p, "%llu%n", &n, &used) == 1) {
			if (order >= MM_PAGEBLOCK_ORDER)
				mib += (double)(n << order) / 256.0;
			order++;
			p += used;
		}
	}
	if (f)
		fclose(f);
	return mib;
}

static uint64_t mem_available_mib(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	unsigned long long kb = 0;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb >> 10;
}

/*
 * A long-running host's free memory: a process touches 4 KiB anonymous
 * pages, 32 MiB at a time, until the host has less than @floor_mib MiB
 * free in blocks of 2 MiB or more, or it touched @cap_mib, or little is
 * left for anyone (MemAvailable at 4 x @floor_mib + 256); then it frees
 * every other page and stays alive, so what it freed is 4 KiB holes.
 * Returns its pid once it is done (*@touched_mib: how much it touched),
 * or -1.
 */
#define FRAG_CHUNK_MIB	32

static void fragmenter_child(int fd, uint64_t cap_mib, uint64_t floor_mib)
{
	size_t len = cap_mib << 20, done = 0;
	uint8_t *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	uint64_t mib;

	if (m == MAP_FAILED)
		_exit(1);
	madvise(m, len, MADV_NOHUGEPAGE);
	/* never into the last of the host's memory: the OOM killer would end it */
	while (done < len && host_free_huge_mib() >= (double)floor_mib &&
	       mem_available_mib() > 4 * floor_mib + 256) {
		for (size_t off = done; off < done + ((size_t)FRAG_CHUNK_MIB << 20) && off < len;
		     off += MM_PAGE_SIZE)
			m[off] = 1;
		done += (size_t)FRAG_CHUNK_MIB << 20;
	}
	done = done < len ? done : len;
	for (size_t off = MM_PAGE_SIZE; off < done; off += 2 * MM_PAGE_SIZE)
		madvise(m + off, MM_PAGE_SIZE, MADV_DONTNEED);
	mib = done >> 20;
	if (write(fd, &mib, sizeof(mib)) != sizeof(mib))
		_exit(1);
	pause();
	_exit(0);
}

static pid_t host_fragment(uint64_t cap_mib, uint64_t floor_mib, uint64_t *touched_mib)
{
	int fds[2];
	pid_t pid;

	if (pipe(fds))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		fragmenter_child(fds[1], cap_mib, floor_mib);
	}
	close(fds[1]);
	if (pid < 0 || read(fds[0], touched_mib, sizeof(*touched_mib)) != sizeof(*touched_mib)) {
		if (pid > 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
		}
		close(fds[0]);
		return -1;
	}
	close(fds[0]);
	return pid;
}

struct host_frag {
	pid_t pid;
	uint64_t mib;
	double free_huge_before, free_huge_after;
	char defrag[96];	/* what a THP fault may do to find a huge page */
};

static int host_fragment_start(struct host_frag *hf, uint64_t mib, uint64_t floor_mib,
			       struct progress *pr)
{
	progress_phase(pr, "bench hugeback: fragmenting the host's free memory (%llu MiB)",
		       (unsigned long long)mib);
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/defrag", "r");

	snprintf(hf->defrag, sizeof(hf->defrag), "unknown");
	if (f) {
		if (fgets(hf->defrag, sizeof(hf->defrag), f))
			hf->defrag[strcspn(hf->defrag, "\n")] = '\0';
		fclose(f);
	}
	hf->free_huge_before = host_free_huge_mib();
	hf->pid = host_fragment(mib, floor_mib, &hf->mib);
	hf->free_huge_after = host_free_huge_mib();
	return hf->pid < 0 ? -1 : 0;
}

static void host_fragment_stop(struct host_frag *hf)
{
	if (hf->pid <= 0)
		return;
	kill(hf->pid, SIGKILL);
	waitpid(hf->pid, NULL, 0);
	hf->pid = -1;
}

static const char hugeback_usage[] =
	"usage: gpmm bench hugeback [--pool-mib N] [--mib N] [--seconds N] [--no-qemu]\n"
	"                           [--unfragmented] [--host-fragmented[=MIB]] [--json]\n"
	"Pre-fragments the pool (the default workload of other tenants, then a\n"
	"random share of it freed), boots a memloop guest touching N MiB (default\n"
	"256) and samples its huge-backed share (kernel smaps) every 100 ms for\n"
	"10 s. QEMU runs beside it with the same RAM (memfd and anonymous\n"
	"backends, touched by -mem-prealloc: QEMU cannot boot gpmm's flat payload).\n"
	"--unfragmented: no tenants; first touches then get whole 2 MiB blocks and\n"
	"nothing is left to assemble.\n"
	"The pool's host RSS (the memfd, by the kernel) is shown while the guest\n"
	"runs and how far it falls once the guest ended. --host-fragmented[=MIB]: the pool is made of host\n"
	"huge pages first (--pool-populate); then a helper touches 4 KiB pages\n"
	"until the host has less than half the guest's RAM free in 2 MiB blocks\n"
	"(or it touched MIB, default 8192, or MemAvailable is down to twice the\n"
	"guest's RAM + 256 MiB), frees\n"
	"every other one, and stays alive while gpmm's guest and QEMU (started\n"
	"after it) run.\n";

/* What the sampling saw of the guest's huge-backed share. */
struct hb_result {
	double pct;		/* at the end */
	double t98;		/* first time >= 98% with all RAM touched, -1: never */
	double best_pct, best_t;	/* highest share seen, and when */
	double t_end;		/* sampling took this long: smaps reads are slow too */
	uint64_t samples;
	uint64_t touched;	/* bytes backed at the end */
	int64_t rss_running;	/* the pool's host RSS with the guest running */
	uint64_t allocated;	/* the pool's allocated bytes then */
	int64_t rss_after;	/* after the guest ended and its frames went back */
	uint64_t freed;		/* the pool's allocated bytes that went with it */
	uint64_t huge_first;	/* ranges backed whole by their first fault */
	uint64_t assembled;	/* ranges the assembler moved onto a block */
	double rss_after_s;	/* how long that took to be seen */
	bool touched_all;	/* memloop finished its first pass */
	struct vm_end end;
};

/*
 * The guest has ended and its frames went back to the pool (the tenants
 * stay): how far does the pool's host RSS fall, and how soon? It cannot
 * fall below what is still allocated. Bounded by count (100 looks, 100 ms
 * apart), not by speed.
 */
static void watch_rss_fall(struct pool *pool, struct progress *pr, struct hb_result *r)
{
	uint64_t t0 = vm_now_ns(), alloc = 0;
	struct mm_stats st;

	progress_phase(pr, "bench hugeback: the pool giving memory back");
	mm_drain_all(pool->mm);
	if (mm_stats(pool->mm, &st) == 0)
		for (int t = 0; t < MIGRATE_TYPES; t++)
			alloc += st.allocated_pages[t] << MM_PAGE_SHIFT;
	r->freed = r->allocated > alloc ? r->allocated - alloc : 0;
	r->rss_after = mm_pool_host_bytes(pool->mm);
	for (int i = 0; i < 100 && pool->host.release_ms &&
	     r->rss_running - r->rss_after < (int64_t)(r->freed * 9 / 10); i++) {
		usleep(100000);
		r->rss_after = mm_pool_host_bytes(pool->mm);
	}
	r->rss_after_s = (vm_now_ns() - t0) / 1e9;
}

/*
 * The share is huge-backed bytes (the kernel's ShmemPmdMapped) over the
 * bytes backed so far, so it can be high while the guest is still
 * touching its RAM: 98% counts only once the guest has touched it all.
 */
static void sample_huge(struct vm *vm, struct console_buf *con, uint64_t seconds,
			bool json, struct progress *pr, struct hb_result *r)
{
	uint64_t t0 = vm_now_ns();

	r->t98 = -1;
	progress_phase(pr, "bench hugeback: sampling");
	for (uint64_t i = 1; i <= seconds * 10; i++) {
		double t;
		int64_t huge;

		usleep(100000);
		r->touched = vm_populated_pages(vm) << MM_PAGE_SHIFT;
		huge = vm_huge_bytes_kernel(vm, NULL);
		huge = huge > 0 ? huge : 0;
		r->pct = r->touched ? 100.0 * (double)huge / (double)r->touched : 0;
		r->touched_all = console_buf_has(con, "touched");
		t = (vm_now_ns() - t0) / 1e9;
		if (r->pct > r->best_pct) {
			r->best_pct = r->pct;
			r->best_t = t;
		}
		if (r->t98 < 0 && r->pct >= 98.0 && r->touched_all)
			r->t98 = t;
		if (!json && (i % 5 == 0 || i == 1)) {
			progress_clear(pr);
			printf("%6.1f %12.1f %12.1f %8.2f\n", t, r->touched / 1048576.0,
			       huge / 1048576.0, r->pct);
			fflush(stdout);
		}
		r->t_end = t;
		r->samples = i;
		progress_tick(pr, "sample %llu/%llu at %.1f s, %.0f MiB touched, %.2f%% huge",
			      (unsigned long long)i, (unsigned long long)seconds * 10, t,
			      r->touched / 1048576.0, r->pct);
	}
}

static void print_hugeback_json(uint64_t mib, const struct hb_result *r, double q_memfd,
				double q_anon, const struct mm_stats *st,
				const struct host_frag *hf)
{
	json_t *o = json_pack("{s:I, s:f, s:f, s:f, s:f, s:f, s:b, s:f, s:f, s:I, s:I,"
			      " s:b, s:s, s:s}",
		"guest_mib", (json_int_t)mib, "gpmm_huge_pct", r->pct,
		"seconds_to_98pct", r->t98, "max_huge_pct", r->best_pct,
		"max_huge_at_s", r->best_t, "touched_mib", r->touched / 1048576.0,
		"touched_all", r->touched_all,
		"qemu_memfd_huge_pct", q_memfd, "qemu_anon_huge_pct", q_anon,
		"compact_stall", (json_int_t)st->counters.compact_stall,
		"pgmigrate", (json_int_t)st->counters.pgmigrate_success,
		"lost_writes", r->end.lost_write,
		"vm_state", vm_state_name(r->end.state), "guest", r->end.what);

	json_object_set_new(o, "ranges_huge_first", json_integer((json_int_t)r->huge_first));
	json_object_set_new(o, "ranges_assembled", json_integer((json_int_t)r->assembled));
	json_object_set_new(o, "pool_host_rss", json_pack("{s:I, s:I, s:I, s:I, s:f}",
		"running_bytes", (json_int_t)r->rss_running,
		"allocated_bytes", (json_int_t)r->allocated,
		"guest_freed_bytes", (json_int_t)r->freed,
		"after_end_bytes", (json_int_t)r->rss_after,
		"after_end_seconds", r->rss_after_s));
	if (hf->mib)
		json_object_set_new(o, "host_fragmented", json_pack("{s:I, s:s, s:f, s:f}",
			"helper_mib", (json_int_t)hf->mib, "thp_defrag", hf->defrag,
			"host_free_huge_mib_before", hf->free_huge_before,
			"host_free_huge_mib_after", hf->free_huge_after));
	json_dumpf(o, stdout, JSON_COMPACT);
	putchar('\n');
	json_decref(o);
}

static void print_hugeback(uint64_t mib, const struct hb_result *r,
			   const struct host_frag *hf, uint64_t pool_mib)
{
	if (hf->mib)
		printf("\nhost fragmented: a helper touched %llu MiB of 4 KiB pages and freed every "
		       "other one (alive throughout);\nhost free memory in blocks >= 2 MiB "
		       "(/proc/buddyinfo): %.0f MiB before, %.0f MiB after; host THP defrag: %s\n",
		       (unsigned long long)hf->mib, hf->free_huge_before, hf->free_huge_after,
		       hf->defrag);
	printf("\npool host RSS (memfd st_blocks): %.1f MiB with the guest running, for %.1f MiB "
	       "allocated (pool %llu MiB);\n", r->rss_running / 1048576.0,
	       r->allocated / 1048576.0, (unsigned long long)pool_mib);
	if (hf->mib)
		printf("  after the guest ended (%.1f MiB freed, tenants stay): %.1f MiB "
		       "(--pool-populate: a reservation, kept)\n", r->freed / 1048576.0,
		       r->rss_after / 1048576.0);
	else
		printf("  after the guest ended (%.1f MiB freed, tenants stay): %.1f MiB, fell "
		       "%.1f MiB in %.1f s\n", r->freed / 1048576.0, r->rss_after / 1048576.0,
		       (r->rss_running - r->rss_after) / 1048576.0, r->rss_after_s);
	printf("\n%-44s %8s\n", "", "huge%");
	printf("%-44s %8.2f  ", hf->mib ? "gpmm, pool made host huge pages before" :
	       "gpmm, pool memfd, grouping + compaction", r->pct);
	if (r->t98 >= 0)
		printf("(98%% reached after %.1f s)\n", r->t98);
	else
		printf("(98%% not reached in %llu samples over %.1f s: highest %.2f%% at %.1f s)\n",
		       (unsigned long long)r->samples, r->t_end, r->best_pct, r->best_t);
	printf("%-44s %llu ranges huge from their first touch, %llu assembled\n", "",
	       (unsigned long long)r->huge_first, (unsigned long long)r->assembled);
	printf("%-44s %s\n", "", r->touched_all ?
	       "the guest touched all its RAM" : "the guest had NOT finished touching its RAM:");
	if (!r->touched_all)
		printf("%-44s %.1f of its %llu MiB of RAM backed at the end\n", "",
		       r->touched / 1048576.0, (unsigned long long)mib + 2);
}

int cmd_bench_hugeback(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pool-mib", required_argument, NULL, 'p' },
		{ "mib", required_argument, NULL, 'm' },
		{ "seconds", required_argument, NULL, 's' },
		{ "no-qemu", no_argument, NULL, 'q' },
		{ "guests", required_argument, NULL, 'g' },
		{ "host-fragmented", optional_argument, NULL, 'F' },
		{ "unfragmented", no_argument, NULL, 'U' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	uint64_t pool_mib = 1024, mib = 256, seconds = 10, frag_mib = 0;
	struct pool_host host = POOL_HOST_DEFAULTS;
	struct host_frag hf = { .pid = -1 };
	double q_memfd = -1, q_anon = -1, unusable;
	bool qemu = true, json = false, unfragmented = false;
	struct hb_result res = { 0 };
	struct progress progress;
	struct assembler *as;
	struct console_buf con;
	struct vm_config cfg;
	struct mm_stats st;
	struct replay *tenant;
	struct mm_pcp *pcp;
	struct pool *pool;
	struct vm *vm;
	char err[512], why[128];
	uint64_t free0;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'p': pool_mib = strtoull(optarg, NULL, 0); break;
		case 'm': mib = strtoull(optarg, NULL, 0); break;
		case 's': seconds = strtoull(optarg, NULL, 0); break;
		case 'q': qemu = false; break;
		case 'g': snprintf(guest_dir, sizeof(guest_dir), "%s", optarg); break;
		case 'F':
			host.populate = true;
			frag_mib = optarg ? strtoull(optarg, NULL, 0) : 0;
			if (!frag_mib)
				frag_mib = 8192;
			break;
		case 'U': unfragmented = true; break;
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
	progress_init(&progress, json);
	if (host.populate)
		progress_phase(&progress, "bench hugeback: making the %llu MiB pool host huge pages",
			       (unsigned long long)pool_mib);
	if (pool_open_host(pool_mib << 20, true, &host, &pool) || mm_pcp_create(pool->mm, &pcp))
		return 1;
	if (frag_mib && host_fragment_start(&hf, frag_mib, mib / 2, &progress)) {
		progress_clear(&progress);
		fprintf(stderr, "gpmm bench hugeback: the host fragmenter did not start (out of memory? give --host-fragmented=MIB)\n");
		return 1;
	}
	tenant = unfragmented ? NULL :
		 prefragment(pool, pcp, (mib + 32) << 8, &progress, err, sizeof(err));
	if (!tenant && !unfragmented) {
		progress_clear(&progress);
		fprintf(stderr, "gpmm bench hugeback: pre-fragmenting failed: %s\n", err);
		return 1;
	}
	mm_drain_all(pool->mm);
	if (mm_stats(pool->mm, &st)) {
		progress_clear(&progress);
		fprintf(stderr, "gpmm bench hugeback: cannot read the pool's statistics\n");
		return 1;
	}
	free0 = st.free_pages;
	unusable = mm_unusable_index(&st, MM_PAGEBLOCK_ORDER);

	config_defaults(&cfg);
	snprintf(cfg.name, sizeof(cfg.name), "hugeback");
	snprintf(cfg.kernel, sizeof(cfg.kernel), "%s/memloop.bin", guest_dir);
	cfg.ram_bytes = (mib + 2) << 20;	/* memloop touches all above 2 MiB */
	cfg.cpus = 2;
	console_buf_init(&con);
	if (vm_create(&cfg, pool, &vm, err, sizeof(err))) {
		progress_clear(&progress);
		fprintf(stderr, "gpmm bench hugeback: %s\n", err);
		return 1;
	}
	vm->console = console_buf_write;
	vm->console_opaque = &con;
	if (assembler_start(&as, 20) || assembler_add(as, vm))
		return 1;
	progress_clear(&progress);
	if (!json)
		printf("gpmm bench hugeback: pool %llu MiB %s (%.0f MiB free, unusable "
		       "index(9) %.3f), memloop guest touching %llu MiB, 2 vCPUs\n\n%6s %12s %12s %8s\n",
		       (unsigned long long)pool_mib, unfragmented ? "unfragmented" :
		       "pre-fragmented", free0 / 256.0, unusable,
		       (unsigned long long)mib, "t(s)", "touched_MiB", "huge_MiB", "huge%");
	if (vm_start(vm))
		fprintf(stderr, "gpmm bench hugeback: cannot start the guest\n");
	else
		sample_huge(vm, &con, seconds, json, &progress, &res);
	vm_end_read(vm, &con, &res.end);
	assembler_remove(as, vm);
	assembler_stop(as);
	if (mm_stats(pool->mm, &st))
		memset(&st, 0, sizeof(st));	/* the figures below then read 0 */
	res.rss_running = st.host_bytes;
	res.huge_first = vm->stats.huge_first;
	res.assembled = vm->migstats.ranges_assembled;
	for (int t = 0; t < MIGRATE_TYPES; t++)
		res.allocated += st.allocated_pages[t] << MM_PAGE_SHIFT;
	stop_vm(vm);
	watch_rss_fall(pool, &progress, &res);
	replay_destroy(tenant);
	mm_pcp_destroy(pcp);
	pool_close(pool);
	why[0] = '\0';
	if (qemu) {
		progress_phase(&progress, "bench hugeback: QEMU, memfd backend (%llu MiB)",
			       (unsigned long long)mib);
		q_memfd = qemu_huge_pct(mib, true, why, sizeof(why));
		progress_phase(&progress, "bench hugeback: QEMU, anonymous RAM (%llu MiB)",
			       (unsigned long long)mib);
		q_anon = qemu_huge_pct(mib, false, why, sizeof(why));
	}
	host_fragment_stop(&hf);
	progress_clear(&progress);
	if (json) {
		print_hugeback_json(mib, &res, q_memfd, q_anon, &st, &hf);
		return vm_end_bad(&res.end) ? 1 : 0;
	}
	print_hugeback(mib, &res, &hf, pool_mib);
	if (qemu && q_memfd >= 0) {
		printf("%-44s %8.2f\n", "QEMU memory-backend-memfd (-mem-prealloc)", q_memfd);
		printf("%-44s %8.2f%s\n", "QEMU plain anonymous RAM (-mem-prealloc)", q_anon,
		       hf.mib ? "  (started after the host was fragmented)" : "");
	} else if (qemu) {
		printf("QEMU: %s\n", why);
	}
	printf("\ncompaction stalls %llu, pages migrated %llu\nguest lost writes: %s\n",
	       (unsigned long long)st.counters.compact_stall,
	       (unsigned long long)st.counters.pgmigrate_success, res.end.what);
	return vm_end_bad(&res.end) ? 1 : 0;
}
