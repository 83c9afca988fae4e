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
#include <sys/mman.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/bench.h"
#include "vmm/core/config.h"
#include "vmm/core/kvm.h"
#include "vmm/core/samples.h"
#include "vmm/core/vm.h"

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
		    unsigned int cpus, bool prefault, enum vm_fault_policy fault,
		    struct vm_stats *st, struct run_times *t, int *exit_code)
{
	uint64_t t0 = vm_now_ns(), t1;
	struct vm_config cfg;
	char err[512];
	struct vm *vm;
	int ret;

	/* what `gpmm run` starts from: 2 MiB backings on, no target */
	config_defaults(&cfg);
	cfg.ram_bytes = ram;
	cfg.cpus = cpus;
	cfg.prefault = prefault;
	cfg.fault = fault;
	cfg.balloon = false;

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

		if (run_once(pool, guest("hello"), ram, 1, false, VM_FAULT_AUTO, &st, &t, &code))
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
	"demand 4 KiB at a time (--fault 4k), on demand a 2 MiB block at a time\n"
	"(--fault huge) and up front (--prefault), in turn, and reports per 4 KiB\n"
	"of RAM the host's time to back it, beside the host kernel's own first\n"
	"touch of anonymous memory with THP and with 4 KiB pages (probed in this\n"
	"process, same size). Then the whole `gpmm run` process time of each mode\n"
	"(fork to exit), and what the vCPU pays per demand fault. The demand modes\n"
	"run twice: on a pool of this process's own and on the pool of a host pool\n"
	"service (a `gpmm daemon` started for the purpose, another process), side\n"
	"by side; and the allocator's metadata for a 16 GiB pool is measured.\n";

enum fault_kind { FK_4K, FK_HUGE, FK_PREFAULT, FK_4K_SVC, FK_HUGE_SVC, NR_FK };

static const struct {
	const char *name;
	bool prefault;
	enum vm_fault_policy fault;
	const char *arg;
	bool service;		/* on the host pool service's pool */
} fault_kinds[NR_FK] = {
	[FK_4K] = { "gpmm --fault 4k", false, VM_FAULT_4K, "4k" },
	[FK_HUGE] = { "gpmm --fault huge", false, VM_FAULT_HUGE, "huge" },
	[FK_PREFAULT] = { "gpmm --prefault", true, VM_FAULT_4K, NULL },
	[FK_4K_SVC] = { "  on the service: 4k", false, VM_FAULT_4K, "4k", true },
	[FK_HUGE_SVC] = { "  on the service: huge", false, VM_FAULT_HUGE, "huge", true },
};

/* The pool service of this benchmark: a `gpmm daemon` of its own. */
static char svc_sock[108];
static pid_t svc_pid;

static int service_start(uint64_t pool_bytes)
{
	char pool_arg[32], ctl[108];

	snprintf(svc_sock, sizeof(svc_sock), "/tmp/gpmm-bench-fault-%d.pool", (int)getpid());
	snprintf(ctl, sizeof(ctl), "/tmp/gpmm-bench-fault-%d.sock", (int)getpid());
	snprintf(pool_arg, sizeof(pool_arg), "%lluM", (unsigned long long)(pool_bytes >> 20));
	svc_pid = fork();
	if (svc_pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 2);
		execl("/proc/self/exe", "gpmm", "daemon", "--socket", ctl, "--pool", pool_arg,
		      "--pool-socket", svc_sock, "--pool-populate", NULL);
		_exit(127);
	}
	for (int i = 0; svc_pid > 0 && i < 3000; i++) {
		if (access(svc_sock, F_OK) == 0)
			return 0;
		usleep(10000);
	}
	fprintf(stderr, "gpmm bench fault: the pool service did not start\n");
	return -1;
}

static void service_stop(void)
{
	if (svc_pid > 0) {
		kill(svc_pid, SIGTERM);
		waitpid(svc_pid, NULL, 0);
	}
	svc_pid = 0;
}

/* One backing mode, summed over the runs. */
struct fault_mode {
	uint64_t faults;	/* demand faults */
	uint64_t pages;		/* 4 KiB pages backed */
	uint64_t host_ns;	/* fault handler, or prefault in vm_create */
	uint64_t guest_ns;
	uint64_t create_ns;
	uint64_t process_ns;	/* the whole `gpmm run` process */
	uint64_t zero_ns;	/* of host_ns: clearing blocks that held data */
	uint64_t kernel_zeroed;	/* 2 MiB first touches that needed no clearing */
	int process_runs;
	int runs;
};

static int fault_run(struct pool *pool, uint64_t ram, enum fault_kind k,
		     struct fault_mode *m)
{
	struct run_times t;
	struct vm_stats st;
	int code;

	if (run_once(pool, guest("memtest"), ram, 1, fault_kinds[k].prefault,
		     fault_kinds[k].fault, &st, &t, &code))
		return -1;
	if (code) {
		fprintf(stderr, "gpmm bench fault: memtest exited with %d\n", code);
		return -1;
	}
	m->faults += st.demand_faults;
	m->pages += st.populated_pages;
	m->host_ns += fault_kinds[k].prefault ? st.prefault_ns : st.fault_ns;
	m->zero_ns += st.zero_ns;
	m->kernel_zeroed += st.huge_first_kernel_zeroed;
	m->guest_ns += t.guest_ns;
	m->create_ns += t.create_ns;
	m->runs++;
	return 0;
}

/*
 * The whole `gpmm run` process of memtest: fork to exit, what a user
 * waits for. memtest exits non-zero on any error it sees: 0 errors is
 * exit status 0.
 */
static int fault_process(uint64_t ram, enum fault_kind k, struct fault_mode *m)
{
	char ram_arg[32], pool_arg[32], host_pool[128];
	uint64_t t0 = vm_now_ns();
	int status;
	pid_t pid;

	snprintf(ram_arg, sizeof(ram_arg), "%lluM", (unsigned long long)(ram >> 20));
	snprintf(pool_arg, sizeof(pool_arg), "%lluM", (unsigned long long)((ram >> 20) + 64));
	snprintf(host_pool, sizeof(host_pool), fault_kinds[k].service ? "--host-pool=%s" :
		 "--own-pool", svc_sock);
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		dup2(null, 2);
		if (fault_kinds[k].prefault)
			execl("/proc/self/exe", "gpmm", "run", "--kernel", guest("memtest"), "--ram",
			      ram_arg, "--pool", pool_arg, "--console", "none", "--prefault",
			      "--qmp", "/tmp/gpmm-bench-fault.qmp", host_pool, NULL);
		else
			execl("/proc/self/exe", "gpmm", "run", "--kernel", guest("memtest"), "--ram",
			      ram_arg, "--pool", pool_arg, "--console", "none", "--fault",
			      fault_kinds[k].arg, "--qmp", "/tmp/gpmm-bench-fault.qmp", host_pool,
			      NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		fprintf(stderr, "gpmm bench fault: `gpmm run` of memtest (%s) failed\n",
			fault_kinds[k].name);
		return -1;
	}
	m->process_ns += vm_now_ns() - t0;
	m->process_runs++;
	return 0;
}

/*
 * The peer baseline: what the host kernel charges a first touch of
 * anonymous memory, one byte per 4 KiB, with THP (one fault per 2 MiB,
 * the kernel zeroes the huge page) and without (one fault per 4 KiB).
 */
static double kernel_touch_ns_per_page(uint64_t bytes, bool thp)
{
	uint8_t *m = mmap(NULL, bytes + MM_PAGEBLOCK_SIZE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	uint8_t *a;
	uint64_t t0, ns;

	if (m == MAP_FAILED)
		return -1;
	a = (uint8_t *)(((uintptr_t)m + MM_PAGEBLOCK_SIZE - 1) & ~(uintptr_t)(MM_PAGEBLOCK_SIZE - 1));
	madvise(a, bytes, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
	t0 = vm_now_ns();
	for (uint64_t off = 0; off < bytes; off += MM_PAGE_SIZE)
		a[off] = 1;
	ns = vm_now_ns() - t0;
	munmap(m, bytes + MM_PAGEBLOCK_SIZE);
	return (double)ns / (double)(bytes >> MM_PAGE_SHIFT);
}

/*
 * The two ways a block that held data can reach a guest zeroed, timed on
 * a pool of its own: memset, or punching it (page reporting) and taking
 * it again, when the kernel fills it with zero pages and the pool makes
 * it one huge page. Means of @n blocks.
 */
static int zeroing_costs(unsigned int n, double *memset_us, double *kernel_us)
{
	struct pool_host host = { .huge = true, .release_ms = 0 };
	uint64_t ms = 0, ks = 0;
	struct pool *pool;

	if (pool_open_host((uint64_t)(n + 2) << MM_PAGEBLOCK_SHIFT, true, &host, &pool))
		return -1;
	for (unsigned int i = 0; i < n; i++) {
		uint64_t t0 = vm_now_ns(), t1;
		long b = mm_alloc(pool->mm, NULL, MM_PAGEBLOCK_ORDER, MIGRATE_MOVABLE, MM_NO_OWNER);

		if (b < 0 || !mm_pageblock_take_zeroed(pool->mm, (uint64_t)b))
			break;
		t1 = vm_now_ns();
		memset(pool_frame_ptr(pool, (uint64_t)b), 0xa5, MM_PAGEBLOCK_SIZE);
		memset(pool_frame_ptr(pool, (uint64_t)b), 0, MM_PAGEBLOCK_SIZE);
		ms += (vm_now_ns() - t1) / 2;
		ks += t1 - t0;
		if (mm_free(pool->mm, NULL, (uint64_t)b))
			break;
		(void)mm_release_free(pool->mm);
	}
	pool_close(pool);
	*memset_us = ms / 1e3 / n;
	*kernel_us = ks / 1e3 / n;
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

	return dem->faults ? delta / 1e3 / ((double)dem->faults / dem->runs) : 0;
}

static double process_ms(const struct fault_mode *m)
{
	return m->process_runs ? (double)m->process_ns / 1e6 / m->process_runs : 0;
}

static double zero_memset_us = -1, zero_kernel_us = -1;
static double meta_count = -1, meta_rss = -1;

static double rss_bytes(void)
{
	long long pages = -1, rss = -1;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f && fscanf(f, "%lld %lld", &pages, &rss) != 2)
		rss = -1;
	if (f)
		fclose(f);
	return (double)rss * (double)sysconf(_SC_PAGESIZE);
}

/*
 * What the allocator keeps for a 16 GiB pool, two ways: its own count
 * (mm_metadata_bytes_per_frame) and what creating the pool adds to this
 * process's RSS (the memfd itself reserves nothing: no frame is touched).
 */
static int metadata_16g(void)
{
	struct mm_pool_config cfg = { .size = 16ULL << 30, .grouping = true };
	double before = rss_bytes();
	struct mm_pool *pool;

	if (mm_pool_create(&cfg, &pool))
		return -1;
	meta_rss = rss_bytes() - before;
	meta_count = mm_metadata_bytes_per_frame(pool) * (double)mm_pool_frames(pool);
	mm_pool_destroy(pool);
	return 0;
}

static void print_fault(uint64_t ram, int runs, const struct fault_mode *m,
			double thp_ns, double small_ns)
{
	const struct fault_mode *pre = &m[FK_PREFAULT];

	printf("gpmm bench fault: memtest, %llu MiB, 1 vCPU, mean of %d runs\n\n",
	       (unsigned long long)(ram >> 20), runs);
	printf("%-26s %8s %10s %12s %12s %12s %12s\n", "first touch", "faults", "pages",
	       "host us/4K", "vCPU us/flt", "guest ms", "process ms");
	for (int k = 0; k < NR_FK; k++)
		printf("%-26s %8llu %10llu %12.3f %12s %12.1f %12.1f\n", fault_kinds[k].name,
		       (unsigned long long)(m[k].faults / runs),
		       (unsigned long long)(m[k].pages / runs),
		       per_page_us(m[k].host_ns, m[k].pages),
		       k == FK_PREFAULT ? "(baseline)" : "", m[k].guest_ns / 1e6 / runs,
		       process_ms(&m[k]));
	printf("%-26s %8s %10llu %12.3f\n", "kernel anonymous, THP", "",
	       (unsigned long long)(ram >> MM_PAGE_SHIFT), thp_ns / 1e3);
	printf("%-26s %8s %10llu %12.3f\n", "kernel anonymous, 4 KiB", "",
	       (unsigned long long)(ram >> MM_PAGE_SHIFT), small_ns / 1e3);
	printf("\nvCPU us per fault: --fault 4k %.1f, --fault huge %.1f\n",
	       vcpu_us_per_fault(&m[FK_4K], pre), vcpu_us_per_fault(&m[FK_HUGE], pre));
	if (thp_ns > 0)
		printf("host cost per 4 KiB, gpmm --fault huge / kernel THP: %.2fx; "
		       "--fault 4k / kernel THP: %.1fx\n",
		       per_page_us(m[FK_HUGE].host_ns, m[FK_HUGE].pages) * 1e3 / thp_ns,
		       per_page_us(m[FK_4K].host_ns, m[FK_4K].pages) * 1e3 / thp_ns);
	if (process_ms(pre) > 0)
		printf("whole process, over --prefault: --fault huge %.2fx, --fault 4k %.2fx\n",
		       process_ms(&m[FK_HUGE]) / process_ms(pre),
		       process_ms(&m[FK_4K]) / process_ms(pre));
	printf("VM process on the host pool service / on a pool of its own (both populated\n"
	       "up front), host us per 4 KiB:\n"
	       "  --fault 4k %.2fx, --fault huge %.2fx; whole process: 4k %.2fx, huge %.2fx\n",
	       per_page_us(m[FK_4K_SVC].host_ns, m[FK_4K_SVC].pages) /
	       per_page_us(m[FK_4K].host_ns, m[FK_4K].pages),
	       per_page_us(m[FK_HUGE_SVC].host_ns, m[FK_HUGE_SVC].pages) /
	       per_page_us(m[FK_HUGE].host_ns, m[FK_HUGE].pages),
	       process_ms(&m[FK_4K_SVC]) / process_ms(&m[FK_4K]),
	       process_ms(&m[FK_HUGE_SVC]) / process_ms(&m[FK_HUGE]));
	printf("  the same without clearing 2 MiB blocks that held data (which blocks a run\n"
	       "  gets differs: %llu vs %llu of the huge runs' blocks were kernel-zeroed):\n"
	       "  --fault huge %.2fx\n",
	       (unsigned long long)m[FK_HUGE_SVC].kernel_zeroed,
	       (unsigned long long)m[FK_HUGE].kernel_zeroed,
	       per_page_us(m[FK_HUGE_SVC].host_ns - m[FK_HUGE_SVC].zero_ns, m[FK_HUGE_SVC].pages) /
	       per_page_us(m[FK_HUGE].host_ns - m[FK_HUGE].zero_ns, m[FK_HUGE].pages));
	printf("allocator metadata for a 16 GiB pool: %.1f MiB by its own count (%.3f%% of the\n"
	       "  pool); the process's RSS grew %.1f MiB creating it (%.3f%%)\n",
	       meta_count / 1048576.0, 100.0 * meta_count / (16.0 * (1 << 30)),
	       meta_rss / 1048576.0, 100.0 * meta_rss / (16.0 * (1 << 30)));
	printf("zeroing a 2 MiB block that held data (mean of 16): memset %.1f us; punching it\n"
	       "  and making it a huge page again (the kernel zeroes) %.1f us. A block without\n"
	       "  host memory reads zero and needs neither: gpmm memsets only blocks that held data.\n",
	       zero_memset_us, zero_kernel_us);
	printf("\nhost us/4K: host time to back the RAM over the 4 KiB pages backed: the\n"
	       "  userfaultfd handler (alloc, zero, mmap, wake; for huge one 2 MiB block per\n"
	       "  fault), or prefault's work up front in vm_create; the kernel rows time a\n"
	       "  first write to each 4 KiB of an anonymous mapping in this process.\n"
	       "vCPU us/flt: (demand guest run - prefault guest run) / faults: the round trip\n"
	       "  plus handling. process ms: fork of `gpmm run` to its exit, memtest exit 0.\n");
}

static void print_fault_json(uint64_t ram, int runs, const struct fault_mode *m,
			     double thp_ns, double small_ns)
{
	json_t *o = json_pack("{s:I, s:i, s:f, s:f, s:f, s:f}", "ram_mib", (json_int_t)(ram >> 20),
			      "runs", runs, "kernel_thp_us_per_page", thp_ns / 1e3,
			      "kernel_4k_us_per_page", small_ns / 1e3,
			      "zero_block_memset_us", zero_memset_us,
			      "zero_block_kernel_us", zero_kernel_us);

	for (int k = 0; k < NR_FK; k++)
		json_object_set_new(o, k == FK_PREFAULT ? "prefault" : k == FK_HUGE ?
				    "fault_huge" : "fault_4k", json_pack(
			"{s:I, s:I, s:f, s:f, s:f, s:f}",
			"faults", (json_int_t)(m[k].faults / runs),
			"pages", (json_int_t)(m[k].pages / runs),
			"host_us_per_page", per_page_us(m[k].host_ns, m[k].pages),
			"vcpu_us_per_fault", k == FK_PREFAULT ? 0.0 :
				vcpu_us_per_fault(&m[k], &m[FK_PREFAULT]),
			"guest_ms", m[k].guest_ns / 1e6 / runs,
			"process_ms", process_ms(&m[k])));
	json_dumpf(o, stdout, JSON_COMPACT);
	putchar('\n');
	json_decref(o);
}

int cmd_bench_fault(int argc, char **argv)
{
	struct fault_mode m[NR_FK] = { 0 };
	double thp_ns, small_ns;
	uint64_t ram = 64 << 20;
	bool json = false;
	struct pool_host populated = { .huge = true, .populate = true };
	struct pool *pool = NULL, *remote = NULL;
	char err[512];
	int runs = 3, ret;

	ret = parse_common(argc, argv, fault_usage, &runs, &ram, &json);
	if (ret)
		return ret == 1 ? 0 : ret;
	thp_ns = kernel_touch_ns_per_page(ram, true);
	small_ns = kernel_touch_ns_per_page(ram, false);
	if (zeroing_costs(16, &zero_memset_us, &zero_kernel_us))
		return 1;
	if (metadata_16g() || service_start(ram + (64 << 20)))
		return 1;
	/*
	 * Both pools populated up front, as huge pages: a first use of a block
	 * would otherwise cost making it huge in one and not the other,
	 * depending only on which blocks earlier runs happened to leave.
	 */
	if (pool_open_host(ram + (64 << 20), true, &populated, &pool) ||
	    pool_open_remote(svc_sock, "bench", ram, &remote, err, sizeof(err))) {
		fprintf(stderr, "gpmm bench fault: %s\n", pool ? err : "no pool");
		pool_close(pool);
		service_stop();
		return 1;
	}
	/* take turns: drift of this noisy machine hits every mode alike */
	for (int i = 0; i < runs && !ret; i++)
		for (int k = 0; k < NR_FK && !ret; k++)
			ret = fault_run(fault_kinds[k].service ? remote : pool, ram, k, &m[k]);
	pool_close(pool);
	pool_close(remote);
	for (int i = 0; i < runs && !ret; i++)
		for (int k = 0; k < NR_FK && !ret; k++)
			ret = fault_process(ram, k, &m[k]);
	service_stop();
	if (ret)
		return 1;
	if (json)
		print_fault_json(ram, runs, m, thp_ns, small_ns);
	else
		print_fault(ram, runs, m, thp_ns, small_ns);
	return 0;
}
