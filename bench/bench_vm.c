// SPDX-License-Identifier: GPL-2.0
/*
 * `gpmm bench boot` and `gpmm bench fault`: what launching a VM and
 * backing its RAM cost. Guest instructions are slow on these machines
 * (DESIGN.md), so host-side costs are measured on the host side:
 * timestamps around vm_create and the userfaultfd handler. What a vCPU
 * pays for a demand fault can only be seen in the guest's run time; it
 * is taken as a difference of two runs of the same guest, so the slow
 * guest instructions cancel out and only the faults remain.
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

struct run_times {
	uint64_t create_ns;	/* vm_create: with --prefault, all RAM backed here */
	uint64_t guest_ns;	/* vm_start to the last vCPU's exit: the guest's run */
	uint64_t total_ns;
};

/* Run one VM to its end; stats and times out. */
static int run_once(struct pool *pool, const char *kernel, uint64_t ram,
		    unsigned int cpus, bool prefault, struct vm_stats *st,
		    struct run_times *t, int *exit_code)
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
	ret = vm_start(vm);
	if (ret) {
		fprintf(stderr, "gpmm bench: cannot start the VM: %s\n", strerror(-ret));
		vm_destroy(vm);
		return ret;
	}
	*exit_code = vm_wait(vm);
	t->total_ns = vm_now_ns() - t0;
	t->create_ns = t1 - t0;
	t->guest_ns = t->total_ns - t->create_ns;
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
	"       gpmm bench boot --linux [...]  (a Linux guest vs QEMU: --linux --help)\n"
	"Launch-to-first-instruction of the hello payload (16 MiB, 1 vCPU):\n"
	"vm_create to the first VM exit (the payload's first instruction is an\n"
	"out to port 0x80), and a whole `gpmm run` process, median of N runs.\n";

int cmd_bench_boot(int argc, char **argv)
{
	uint64_t first[1000], create[1000], proc[1000], ram = 16 << 20;
	int runs = 20, ret, code;
	bool json = false;
	struct pool *pool;

	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--linux"))
			return cmd_bench_boot_linux(argc, argv);
	ret = parse_common(argc, argv, boot_usage, &runs, &ram, &json);
	if (ret)
		return ret == 1 ? 0 : ret;
	if (pool_open(64 << 20, true, &pool))
		return 1;
	for (int i = 0; i < runs; i++) {
		struct run_times t;
		struct vm_stats st;

		if (run_once(pool, guest("hello"), ram, 1, false, &st, &t, &code))
			return 1;
		create[i] = t.create_ns;
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
	"Runs the memtest payload (default 64 MiB, 1 vCPU) with its RAM backed on\n"
	"demand (userfaultfd) and up front (--prefault), alternately, and reports\n"
	"per page: the host handler's time, and what the vCPU pays for a demand\n"
	"fault (the guest's run time with demand faults minus its run time\n"
	"prefaulted, over the pages faulted).\n";

/* One backing mode, summed over the runs. */
struct fault_mode {
	uint64_t pages;		/* demand faults, or pages prefaulted */
	uint64_t host_ns;	/* fault handler, or prefault in vm_create */
	uint64_t guest_ns;
	uint64_t create_ns;
	int runs;
};

static int fault_run(struct pool *pool, uint64_t ram, bool prefault,
		     struct fault_mode *m)
{
	struct run_times t;
	struct vm_stats st;
	int code;

	if (run_once(pool, guest("memtest"), ram, 1, prefault, &st, &t, &code))
		return -1;
	if (code) {
		fprintf(stderr, "gpmm bench fault: memtest exited with %d\n", code);
		return -1;
	}
	m->pages += prefault ? st.populated_pages : st.demand_faults;
	m->host_ns += prefault ? st.prefault_ns : st.fault_ns;
	m->guest_ns += t.guest_ns;
	m->create_ns += t.create_ns;
	m->runs++;
	return 0;
}

static double per_page_us(uint64_t ns, uint64_t pages)
{
	return pages ? (double)ns / 1e3 / (double)pages : 0;
}

/*
 * What a vCPU pays per demand fault: a prefaulted guest does the same
 * work minus the faults, so the difference of the guest's run times is
 * the userfaultfd round trip (block, wake the fault thread, resolve, wake
 * the vCPU) plus the handler itself. KVM's own EPT/NPT fault on first
 * touch happens in both runs and cancels out.
 */
static double vcpu_us_per_fault(const struct fault_mode *dem,
				const struct fault_mode *pre)
{
	double delta = (double)dem->guest_ns / dem->runs - (double)pre->guest_ns / pre->runs;

	return dem->pages ? delta / 1e3 / ((double)dem->pages / dem->runs) : 0;
}

static void print_fault(uint64_t ram, int runs, const struct fault_mode *dem,
			const struct fault_mode *pre)
{
	printf("gpmm bench fault: memtest, %llu MiB, 1 vCPU, mean of %d runs\n\n",
	       (unsigned long long)(ram >> 20), runs);
	printf("%-9s %8s %13s %13s %13s %13s\n", "mode", "pages", "host us/page",
	       "vCPU us/page", "guest run ms", "vm_create ms");
	printf("%-9s %8llu %13.3f %13.3f %13.1f %13.1f\n", "demand",
	       (unsigned long long)(dem->pages / runs), per_page_us(dem->host_ns, dem->pages),
	       vcpu_us_per_fault(dem, pre), dem->guest_ns / 1e6 / runs,
	       dem->create_ns / 1e6 / runs);
	printf("%-9s %8llu %13.3f %13s %13.1f %13.1f\n", "prefault",
	       (unsigned long long)(pre->pages / runs), per_page_us(pre->host_ns, pre->pages),
	       "(baseline)", pre->guest_ns / 1e6 / runs, pre->create_ns / 1e6 / runs);
	printf("\nhost us/page: timed on the host around the work itself. demand = the\n"
	       "  userfaultfd handler per fault (alloc, zero, mmap, wake); prefault = the\n"
	       "  same work for every page of RAM, up front in vm_create.\n"
	       "vCPU us/page: what the guest pays per demand-faulted page = (demand guest\n"
	       "  run - prefault guest run) / pages faulted: the userfaultfd round trip\n"
	       "  plus the handling. guest run = vm_start to the last vCPU's exit; guest\n"
	       "  code is slow on nested KVM, so it is noisy: use --runs to average.\n");
}

int cmd_bench_fault(int argc, char **argv)
{
	struct fault_mode dem = { 0 }, pre = { 0 };
	uint64_t ram = 64 << 20;
	bool json = false;
	struct pool *pool;
	int runs = 3, ret;

	ret = parse_common(argc, argv, fault_usage, &runs, &ram, &json);
	if (ret)
		return ret == 1 ? 0 : ret;
	if (pool_open(ram + (64 << 20), true, &pool))
		return 1;
	/* alternate the modes: drift of this noisy machine hits both alike */
	for (int i = 0; i < runs; i++) {
		if (fault_run(pool, ram, false, &dem) || fault_run(pool, ram, true, &pre)) {
			pool_close(pool);
			return 1;
		}
	}
	pool_close(pool);
	if (json) {
		printf("{\"ram_mib\":%llu,\"runs\":%d,\"demand_faults\":%llu,"
		       "\"demand_us_per_page\":%.3f,\"vcpu_us_per_fault\":%.3f,"
		       "\"prefault_pages\":%llu,\"prefault_us_per_page\":%.3f,"
		       "\"demand_guest_ms\":%.1f,\"prefault_guest_ms\":%.1f,"
		       "\"demand_run_ms\":%.1f,\"prefault_run_ms\":%.1f}\n",
		       (unsigned long long)(ram >> 20), runs,
		       (unsigned long long)(dem.pages / runs), per_page_us(dem.host_ns, dem.pages),
		       vcpu_us_per_fault(&dem, &pre), (unsigned long long)(pre.pages / runs),
		       per_page_us(pre.host_ns, pre.pages), dem.guest_ns / 1e6 / runs,
		       pre.guest_ns / 1e6 / runs, (dem.guest_ns + dem.create_ns) / 1e6 / runs,
		       (pre.guest_ns + pre.create_ns) / 1e6 / runs);
		return 0;
	}
	print_fault(ram, runs, &dem, &pre);
	return 0;
}
