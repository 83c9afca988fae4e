// SPDX-License-Identifier: GPL-2.0
/*
 * `gpmm bench boot` and `gpmm bench fault`: what launching a VM and
 * backing its RAM cost on the host. Guest instructions are slow on these
 * machines (DESIGN.md), so host-side costs are measured on the host side:
 * timestamps around vm_create and the userfaultfd handler, not guest time.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/bench.h"
#include "vmm/config.h"
#include "vmm/kvm.h"
#include "vmm/samples.h"
#include "vmm/vm.h"

static char guest_dir[512] = "build/guests";

static const char *guest(const char *name)
{
	static char path[600];

	snprintf(path, sizeof(path), "%s/%s.bin", guest_dir, name);
	return path;
}

static void quiet(void *opaque, const char *buf, size_t len)
{
}

/* Run one VM to its end; stats and wall time out. */
static int run_once(struct pool *pool, const char *kernel, uint64_t ram,
		    unsigned int cpus, bool prefault, struct vm_stats *st,
		    uint64_t *create_ns, uint64_t *total_ns, int *exit_code)
{
	struct vm_config cfg = { .ram_bytes = ram, .cpus = cpus, .prefault = prefault };
	uint64_t t0 = vm_now_ns(), t1;
	char err[512];
	struct vm *vm;
	int ret;

	snprintf(cfg.name, sizeof(cfg.name), "bench");
	snprintf(cfg.kernel, sizeof(cfg.kernel), "%s", kernel);
	ret = vm_create(&cfg, pool, &vm, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "gpmm bench: %s\n", err);
		return ret;
	}
	t1 = vm_now_ns();
	vm->console = quiet;
	vm_start(vm);
	*exit_code = vm_wait(vm);
	*total_ns = vm_now_ns() - t0;
	*create_ns = t1 - t0;
	*st = vm->stats;
	vm_destroy(vm);
	return 0;
}

/* fork+exec of `gpmm run` itself: what a user or libvirt waits for. */
static uint64_t run_process(const char *kernel)
{
	uint64_t t0 = vm_now_ns();
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		int null = open("/dev/null", 1);

		dup2(null, 1);
		execl("/proc/self/exe", "gpmm", "run", "--kernel", kernel, "--ram", "16M",
		      "--pool", "64M", "--qmp", "/tmp/gpmm-bench-boot.qmp", NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		return 0;
	return vm_now_ns() - t0;
}

static int parse_common(int argc, char **argv, const char *usage, int *runs,
			uint64_t *ram, bool *json)
{
	static const struct option opts[] = {
		{ "runs", required_argument, NULL, 'r' },
		{ "ram", required_argument, NULL, 'm' },
		{ "guests", required_argument, NULL, 'g' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'r': *runs = atoi(optarg); break;
		case 'm':
			if (config_parse_size(optarg, ram)) {
				fprintf(stderr, "gpmm bench: bad size '%s'\n", optarg);
				return 2;
			}
			break;
		case 'g': snprintf(guest_dir, sizeof(guest_dir), "%s", optarg); break;
		case 'j': *json = true; break;
		case 'h': fputs(usage, stdout); return 1;
		default: fputs(usage, stderr); return 2;
		}
	}
	if (*runs < 1 || *runs > 1000) {
		fprintf(stderr, "gpmm bench: --runs must be 1..1000\n");
		return 2;
	}
	if (kvm_unavailable()) {
		fprintf(stderr, "gpmm bench: KVM is not available: %s\n", kvm_unavailable());
		return 1;
	}
	return 0;
}

static const char boot_usage[] =
	"usage: gpmm bench boot [--runs N] [--guests DIR] [--json]\n"
	"Launch-to-first-instruction of the hello payload (16 MiB, 1 vCPU):\n"
	"vm_create to the first VM exit (the payload's first instruction is an\n"
	"out to port 0x80), and a whole `gpmm run` process, median of N runs.\n";

int cmd_bench_boot(int argc, char **argv)
{
	uint64_t first[1000], create[1000], proc[1000], ram = 16 << 20;
	int runs = 20, ret, code;
	bool json = false;
	struct pool *pool;

	ret = parse_common(argc, argv, boot_usage, &runs, &ram, &json);
	if (ret)
		return ret == 1 ? 0 : ret;
	if (pool_open(64 << 20, true, &pool))
		return 1;
	for (int i = 0; i < runs; i++) {
		struct vm_stats st;
		uint64_t total;

		if (run_once(pool, guest("hello"), ram, 1, false, &st, &create[i], &total, &code))
			return 1;
		first[i] = st.first_exit_ns - st.create_ns;
		proc[i] = run_process(guest("hello"));
	}
	pool_close(pool);
	qsort(first, runs, sizeof(uint64_t), cmp_u64);
	qsort(create, runs, sizeof(uint64_t), cmp_u64);
	qsort(proc, runs, sizeof(uint64_t), cmp_u64);
	if (json) {
		printf("{\"runs\":%d,\"create_us\":%.1f,\"first_instruction_us\":%.1f,"
		       "\"process_run_ms\":%.2f}\n", runs, create[runs / 2] / 1e3,
		       first[runs / 2] / 1e3, proc[runs / 2] / 1e6);
		return 0;
	}
	printf("gpmm bench boot: hello payload, 16 MiB, 1 vCPU, median of %d runs\n\n", runs);
	printf("  vm_create (KVM VM, memslots, userfaultfd, load, page tables): %8.1f us\n",
	       create[runs / 2] / 1e3);
	printf("  vm_create -> first guest instruction (first exit):            %8.1f us\n",
	       first[runs / 2] / 1e3);
	printf("  whole `gpmm run hello` process, exec to exit:                 %8.2f ms%s\n",
	       proc[runs / 2] / 1e6, proc[0] ? "" : " (some runs failed)");
	return 0;
}

static const char fault_usage[] =
	"usage: gpmm bench fault [--ram SIZE] [--runs N] [--guests DIR] [--json]\n"
	"Backs the memtest payload's RAM (default 64 MiB, 1 vCPU) on demand\n"
	"(userfaultfd) and up front (--prefault) and reports the host cost per\n"
	"page of each, and the run time of each (guest time dominates it here).\n";

int cmd_bench_fault(int argc, char **argv)
{
	uint64_t ram = 64 << 20, dem_total = 0, pre_total = 0;
	double dem_us = 0, pre_us = 0;
	uint64_t faults = 0, pages = 0;
	int runs = 3, ret, code;
	bool json = false;
	struct pool *pool;

	ret = parse_common(argc, argv, fault_usage, &runs, &ram, &json);
	if (ret)
		return ret == 1 ? 0 : ret;
	if (pool_open(ram + (64 << 20), true, &pool))
		return 1;
	for (int i = 0; i < runs; i++) {
		struct vm_stats st;
		uint64_t create, total;

		if (run_once(pool, guest("memtest"), ram, 1, false, &st, &create, &total, &code) || code)
			return 1;
		dem_us += (double)st.fault_ns / 1e3 / (double)st.demand_faults;
		dem_total += total;
		faults = st.demand_faults;
		if (run_once(pool, guest("memtest"), ram, 1, true, &st, &create, &total, &code) || code)
			return 1;
		pre_us += (double)st.prefault_ns / 1e3 / (double)st.populated_pages;
		pre_total += total;
		pages = st.populated_pages;
	}
	pool_close(pool);
	dem_us /= runs;
	pre_us /= runs;
	if (json) {
		printf("{\"ram_mib\":%llu,\"demand_faults\":%llu,\"demand_us_per_page\":%.3f,"
		       "\"prefault_pages\":%llu,\"prefault_us_per_page\":%.3f,"
		       "\"demand_run_ms\":%.1f,\"prefault_run_ms\":%.1f}\n",
		       (unsigned long long)(ram >> 20), (unsigned long long)faults, dem_us,
		       (unsigned long long)pages, pre_us, dem_total / 1e6 / runs,
		       pre_total / 1e6 / runs);
		return 0;
	}
	printf("gpmm bench fault: memtest, %llu MiB, 1 vCPU, mean of %d runs\n\n",
	       (unsigned long long)(ram >> 20), runs);
	printf("%-10s %10s %14s %12s\n", "mode", "pages", "host us/page", "run ms");
	printf("%-10s %10llu %14.3f %12.1f\n", "demand", (unsigned long long)faults, dem_us,
	       dem_total / 1e6 / runs);
	printf("%-10s %10llu %14.3f %12.1f\n", "prefault", (unsigned long long)pages, pre_us,
	       pre_total / 1e6 / runs);
	printf("\nhost us/page: demand = userfaultfd handler (alloc, zero, mmap, wake);\n"
	       "prefault = the same work done up front for every page of RAM.\n");
	return 0;
}
