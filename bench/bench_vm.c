// SPDX-License-Identifier: GPL-2.0
/*
 * `gpmm bench boot` and `gpmm bench fault`: what launching a VM and
 * backing its RAM cost. Launching is timed on the host, around vm_create
 * and to the first exit. A first touch is timed by the guest itself, with
 * its TSC around the touches: only the guest sees the whole path (the
 * trap, the userfaultfd round trip or the kernel's own fault, the
 * allocation, the zeroing, the mapping), and it sees it the same way
 * whatever backs its RAM, so gpmm and the kernel's anonymous memory are
 * compared over one interval, each from the same untouched start.
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
#include <sys/stat.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/bench.h"
#include "guests/abi.h"
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
	"The first touch of guest RAM as the guest sees it: the firsttouch payload\n"
	"(default 64 MiB, 1 vCPU) times with its own TSC one write to each 4 KiB page\n"
	"of [2 MiB, RAM), every trap, allocation, zeroing and mapping included, in\n"
	"VMs that differ only in what backs their RAM, each from the same state:\n"
	"nothing touched, nothing prepared. The host kernel's anonymous memory with\n"
	"THP and with 4 KiB pages (no pool, no userfaultfd: the baseline), and gpmm's\n"
	"pool with --fault huge and --fault 4k, on a new pool of the process's own\n"
	"(empty: no block populated or made huge) and on a new host pool service\n"
	"(a `gpmm daemon` started for each run, its pool empty too). Runs take turns.\n"
	"Then the whole `gpmm run` process time of memtest per mode (fork to exit),\n"
	"the two ways of zeroing a block that held data, and the allocator's\n"
	"metadata for a 16 GiB pool.\n";

/* What each side's figure is: the same interval on every side. */
#define TOUCH_INTERVAL	"guest TSC around its first write to each 4 KiB page of [2 MiB, RAM)"

enum touch_side { TS_THP, TS_ANON_4K, TS_HUGE, TS_4K, TS_HUGE_SVC, TS_4K_SVC, NR_TS };

static const struct {
	const char *name;
	const char *key;		/* in --json */
	enum vm_ram_backing ram;
	enum vm_fault_policy fault;
	bool service;			/* on a host pool service's pool */
} touch_sides[NR_TS] = {
	[TS_THP] = { "kernel anonymous, THP", "kernel_thp", VM_RAM_ANON_THP, VM_FAULT_AUTO },
	[TS_ANON_4K] = { "kernel anonymous, 4 KiB", "kernel_4k", VM_RAM_ANON_4K, VM_FAULT_AUTO },
	[TS_HUGE] = { "gpmm --fault huge", "gpmm_huge", VM_RAM_POOL, VM_FAULT_HUGE },
	[TS_4K] = { "gpmm --fault 4k", "gpmm_4k", VM_RAM_POOL, VM_FAULT_4K },
	[TS_HUGE_SVC] = { "  on the service: huge", "service_huge", VM_RAM_POOL, VM_FAULT_HUGE,
			  true },
	[TS_4K_SVC] = { "  on the service: 4k", "service_4k", VM_RAM_POOL, VM_FAULT_4K, true },
};

/* One side, summed over the runs. */
struct touch_sum {
	double guest_ns;	/* the guest's own timing, TSC cycles / its rate */
	uint64_t pages;		/* pages it touched */
	uint64_t faults;	/* userfaultfd faults (gpmm sides) */
	uint64_t fault_ns;	/* of guest_ns: the fault thread's handler */
	uint64_t huge_first;	/* 2 MiB ranges backed whole at their first touch */
	/* the state the clock started from, the worst of the runs */
	uint64_t resident_at_start;	/* timed pages already resident */
	uint64_t prepared_at_start;	/* pool host bytes beyond the guest's blocks */
	int runs;
};

/* What one run saw: its console (for the guest's line), its start state. */
struct touch_run {
	char con[512];
	size_t con_len;
	bool at_start;
	uint64_t resident_at_start;
	uint64_t prepared_at_start;
};

static void touch_console(void *opaque, const char *buf, size_t len)
{
	struct touch_run *t = opaque;
	size_t room = sizeof(t->con) - 1 - t->con_len;

	len = len < room ? len : room;
	memcpy(t->con + t->con_len, buf, len);
	t->con_len += len;
	t->con[t->con_len] = '\0';
}

/* Pages of [@p, @p + @len) the kernel has backed: mincore's count. */
static uint64_t resident_pages(uint8_t *p, uint64_t len)
{
	uint64_t pages = len >> MM_PAGE_SHIFT, n = 0;
	unsigned char *vec = malloc(pages);

	if (!vec || mincore(p, len, vec)) {
		free(vec);
		return UINT64_MAX;
	}
	for (uint64_t i = 0; i < pages; i++)
		n += vec[i] & 1;
	free(vec);
	return n;
}

/*
 * Host memory the pool holds beyond the 2 MiB blocks the guest's boot
 * pages came from (the payload, its tables and stacks, below the timed
 * range): memory prepared for the timed touches before the clock started.
 * A populated pool, the old bench's start, shows its whole size here.
 */
static uint64_t pool_prepared_bytes(struct vm *vm)
{
	uint64_t nr_pb = (pool_frames(vm->pool) >> MM_PAGEBLOCK_ORDER) + 1, blocks = 0;
	struct vm_region *r = &vm->regions[0];
	uint8_t *seen = calloc(nr_pb, 1);
	struct mm_stats st;
	uint64_t host;

	/* the pool's own count, from the kernel (st_blocks of its files) */
	if (!seen || pool_stats(vm->pool, &st) || st.host_bytes < 0) {
		free(seen);
		return UINT64_MAX;
	}
	host = (uint64_t)st.host_bytes;
	pthread_mutex_lock(&vm->mem_lock);
	for (uint64_t idx = 0; vm->cfg.ram == VM_RAM_POOL && idx < r->size >> MM_PAGE_SHIFT;
	     idx++) {
		uint64_t pb = (uint64_t)r->backing[idx] >> MM_PAGEBLOCK_ORDER;

		if (r->backing[idx] != NIL_FRAME && pb < nr_pb && !seen[pb]) {
			seen[pb] = 1;
			blocks++;
		}
	}
	pthread_mutex_unlock(&vm->mem_lock);
	free(seen);
	return host > (blocks << MM_PAGEBLOCK_SHIFT) ? host - (blocks << MM_PAGEBLOCK_SHIFT) : 0;
}

/* The guest's checkpoint just before it reads the clock: the VM is paused. */
static int touch_at_start(struct vm *vm, uint32_t n, void *opaque)
{
	struct touch_run *t = opaque;
	struct vm_region *r = &vm->regions[0];

	if (n != GPMM_CHECKPOINT_FIRSTTOUCH || t->at_start)
		return -EINVAL;
	t->at_start = true;
	t->resident_at_start = resident_pages(r->hva + GPMM_FIRSTTOUCH_BASE,
					      vm->cfg.ram_bytes - GPMM_FIRSTTOUCH_BASE);
	t->prepared_at_start = pool_prepared_bytes(vm);
	return 0;
}

static int touch_config(uint64_t ram, enum touch_side k, struct vm_config *cfg)
{
	config_defaults(cfg);
	cfg->ram_bytes = ram;
	cfg->cpus = 1;
	cfg->balloon = false;
	cfg->ram = touch_sides[k].ram;
	cfg->fault = touch_sides[k].fault;
	snprintf(cfg->name, sizeof(cfg->name), "bench");
	snprintf(cfg->kernel, sizeof(cfg->kernel), "%s", guest("firsttouch"));
	return 0;
}

/* "firsttouch: N pages C cycles" in @con into @pages and @cycles. */
static int touch_parse(const char *con, uint64_t *pages, uint64_t *cycles)
{
	const char *p = strstr(con, "firsttouch: ");
	unsigned long long n, c;

	if (!p || sscanf(p, "firsttouch: %llu pages %llu cycles", &n, &c) != 2 || !n)
		return -EINVAL;
	*pages = n;
	*cycles = c;
	return 0;
}

/* One VM of side @k on @pool, its figures added to @s. */
static int touch_once(struct pool *pool, uint64_t ram, enum touch_side k, struct touch_sum *s)
{
	struct touch_run t = { 0 };
	uint64_t pages, cycles;
	struct vm_config cfg;
	char err[512];
	struct vm *vm;
	long khz;
	int ret, code;

	touch_config(ram, k, &cfg);
	ret = vm_create(&cfg, pool, &vm, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "gpmm bench fault: %s: %s\n", touch_sides[k].name, err);
		return ret;
	}
	vm->console = touch_console;
	vm->console_opaque = &t;
	vm->checkpoint = touch_at_start;
	vm->checkpoint_opaque = &t;
	khz = vm_guest_tsc_khz(vm);
	ret = khz > 0 ? vm_start(vm) : (int)khz;
	code = ret ? -1 : vm_wait(vm);
	if (!ret && (code || !t.at_start || touch_parse(t.con, &pages, &cycles)))
		ret = -EIO;
	if (ret) {
		fprintf(stderr, "gpmm bench fault: %s: the guest's run failed (exit %d%s%s)\n",
			touch_sides[k].name, code, khz > 0 ? "" : ", no guest TSC rate: ",
			khz > 0 ? "" : strerror((int)-khz));
		vm_destroy(vm);
		return ret;
	}
	s->guest_ns += (double)cycles * 1e6 / (double)khz;
	s->pages += pages;
	s->faults += vm->stats.demand_faults;
	s->fault_ns += vm->stats.fault_ns;
	s->huge_first += vm->stats.huge_first;
	s->resident_at_start = t.resident_at_start > s->resident_at_start ?
			       t.resident_at_start : s->resident_at_start;
	s->prepared_at_start = t.prepared_at_start > s->prepared_at_start ?
			       t.prepared_at_start : s->prepared_at_start;
	s->runs++;
	vm_destroy(vm);
	return 0;
}

/* The pool service of this benchmark: a `gpmm daemon` of its own, per run. */
static char svc_sock[108];
static pid_t svc_pid;

static void service_stop(void)
{
	if (svc_pid > 0) {
		kill(svc_pid, SIGTERM);
		waitpid(svc_pid, NULL, 0);
	}
	svc_pid = 0;
}

/* An empty pool, as a daemon starts with by default: no --pool-populate. */
static int service_start(uint64_t pool_bytes)
{
	char pool_arg[32], ctl[108];

	snprintf(svc_sock, sizeof(svc_sock), "/tmp/gpmm-bench-fault-%d.pool", (int)getpid());
	snprintf(ctl, sizeof(ctl), "/tmp/gpmm-bench-fault-%d.sock", (int)getpid());
	snprintf(pool_arg, sizeof(pool_arg), "%lluM", (unsigned long long)(pool_bytes >> 20));
	unlink(svc_sock);
	svc_pid = fork();
	if (svc_pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 2);
		execl("/proc/self/exe", "gpmm", "daemon", "--socket", ctl, "--pool", pool_arg,
		      "--pool-socket", svc_sock, NULL);
		_exit(127);
	}
	for (int i = 0; svc_pid > 0 && i < 3000; i++) {
		if (access(svc_sock, F_OK) == 0)
			return 0;
		if (waitpid(svc_pid, NULL, WNOHANG) == svc_pid)
			break;
		usleep(10000);
	}
	svc_pid = 0;
	fprintf(stderr, "gpmm bench fault: the pool service did not start\n");
	return -1;
}

/*
 * One run of side @k from the state every side starts from: a new pool
 * (of this process, or of a new service), nothing of it populated or made
 * huge (page reporting off, so nothing changes under the run either).
 * The kernel sides get one too, for vm_create; their RAM never uses it.
 */
static int touch_side_run(uint64_t ram, enum touch_side k, struct touch_sum *s)
{
	struct pool_host empty = { .huge = true, .release_ms = 0 };
	uint64_t pool_bytes = ram + (64 << 20);
	struct pool *pool = NULL;
	char err[512];
	int ret;

	if (touch_sides[k].service) {
		ret = service_start(pool_bytes);
		if (!ret && (ret = pool_open_remote(svc_sock, "bench", ram, &pool, err,
						    sizeof(err))))
			fprintf(stderr, "gpmm bench fault: %s\n", err);
	} else {
		ret = pool_open_host(pool_bytes, true, &empty, &pool);
	}
	if (!ret)
		ret = touch_once(pool, ram, k, s);
	pool_close(pool);
	service_stop();
	return ret;
}

/* The whole `gpmm run` process of memtest, per mode: fork to exit. */
enum proc_mode { PM_4K, PM_HUGE, PM_PREFAULT, NR_PM };

/* The mode as `gpmm run` options: one or two words. */
static const char *const proc_args[NR_PM][2] = {
	[PM_4K] = { "--fault", "4k" }, [PM_HUGE] = { "--fault", "huge" },
	[PM_PREFAULT] = { "--prefault", NULL },
};

/*
 * memtest exits non-zero on any error it sees: 0 errors is exit status 0.
 * A pool of its own (--own-pool), as `gpmm run` makes it by default.
 */
static int fault_process(uint64_t ram, enum proc_mode k, double *ms)
{
	char ram_arg[32], pool_arg[32];
	uint64_t t0 = vm_now_ns();
	int status;
	pid_t pid;

	snprintf(ram_arg, sizeof(ram_arg), "%lluM", (unsigned long long)(ram >> 20));
	snprintf(pool_arg, sizeof(pool_arg), "%lluM", (unsigned long long)((ram >> 20) + 64));
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		dup2(null, 2);
		execl("/proc/self/exe", "gpmm", "run", "--kernel", guest("memtest"), "--ram",
		      ram_arg, "--pool", pool_arg, "--console", "none", "--own-pool",
		      "--qmp", "/tmp/gpmm-bench-fault.qmp", proc_args[k][0], proc_args[k][1],
		      NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		fprintf(stderr, "gpmm bench fault: `gpmm run` of memtest (%s%s%s) failed\n",
			proc_args[k][0], proc_args[k][1] ? " " : "", proc_args[k][1] ? proc_args[k][1] : "");
		return -1;
	}
	*ms += (vm_now_ns() - t0) / 1e6;
	return 0;
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

/* Mean guest time per 4 KiB page touched, in µs. */
static double touch_us(const struct touch_sum *s)
{
	return s->pages ? s->guest_ns / 1e3 / (double)s->pages : 0;
}

static double ratio(double a, double b)
{
	return b > 0 ? a / b : 0;
}

static void print_fault(uint64_t ram, int runs, const struct touch_sum *s,
			const double *proc_ms)
{
	double thp = touch_us(&s[TS_THP]);

	printf("gpmm bench fault: firsttouch, %llu MiB, 1 vCPU, mean of %d runs per side\n"
	       "measured on every side: %s;\n"
	       "every side starts with the timed range untouched and nothing prepared for it\n\n",
	       (unsigned long long)(ram >> 20), runs, TOUCH_INTERVAL);
	printf("%-26s %8s %11s %9s %8s %9s %11s %11s\n", "RAM backed by", "pages", "guest us/4K",
	       "/ THP", "faults", "2M first", "handler %", "start: res");
	for (int k = 0; k < NR_TS; k++)
		printf("%-26s %8llu %11.3f %8.2fx %8llu %9llu %10.1f%% %5llu+%lluM\n",
		       touch_sides[k].name, (unsigned long long)(s[k].pages / runs),
		       touch_us(&s[k]), ratio(touch_us(&s[k]), thp),
		       (unsigned long long)(s[k].faults / runs),
		       (unsigned long long)(s[k].huge_first / runs),
		       s[k].guest_ns > 0 ? 100.0 * (double)s[k].fault_ns / s[k].guest_ns : 0,
		       (unsigned long long)s[k].resident_at_start,
		       (unsigned long long)(s[k].prepared_at_start >> 20));
	printf("\nguest us/4K: the guest's time for its first touches over the pages touched;\n"
	       "  / THP: that over the kernel's anonymous memory with THP. faults: userfaultfd\n"
	       "  faults per run (the kernel sides have none: the kernel backs the touch in\n"
	       "  its own fault path); 2M first: 2 MiB ranges backed whole by their first\n"
	       "  touch; handler %%: the share of the guest's time spent in gpmm's fault\n"
	       "  handler (the rest: the trap, the userfaultfd round trip, KVM, the guest).\n"
	       "  start: timed pages resident when the clock started + pool host memory\n"
	       "  prepared beyond the guest's boot blocks (both 0: nothing done ahead).\n");
	printf("whole `gpmm run` of memtest (own pool, fork to exit, memtest exit 0), mean:\n"
	       "  --fault 4k %.1f ms, --fault huge %.1f ms, --prefault %.1f ms\n",
	       proc_ms[PM_4K], proc_ms[PM_HUGE], proc_ms[PM_PREFAULT]);
	printf("allocator metadata for a 16 GiB pool: %.1f MiB by its own count (%.3f%% of the\n"
	       "  pool); the process's RSS grew %.1f MiB creating it (%.3f%%)\n",
	       meta_count / 1048576.0, 100.0 * meta_count / (16.0 * (1 << 30)),
	       meta_rss / 1048576.0, 100.0 * meta_rss / (16.0 * (1 << 30)));
	printf("zeroing a 2 MiB block that held data (mean of 16): memset %.1f us; punching it\n"
	       "  and making it a huge page again (the kernel zeroes) %.1f us. A block without\n"
	       "  host memory reads zero and needs neither: gpmm memsets only blocks that held data.\n",
	       zero_memset_us, zero_kernel_us);
}

static void print_fault_json(uint64_t ram, int runs, const struct touch_sum *s,
			     const double *proc_ms)
{
	json_t *sides = json_object();
	json_t *o = json_pack("{s:I, s:i, s:s, s:f, s:f, s:{s:f, s:f, s:f}}",
			      "ram_mib", (json_int_t)(ram >> 20), "runs", runs,
			      "interval", TOUCH_INTERVAL,
			      "zero_block_memset_us", zero_memset_us,
			      "zero_block_kernel_us", zero_kernel_us,
			      "process_ms", "fault_4k", proc_ms[PM_4K], "fault_huge",
			      proc_ms[PM_HUGE], "prefault", proc_ms[PM_PREFAULT]);

	for (int k = 0; k < NR_TS; k++)
		json_object_set_new(sides, touch_sides[k].key, json_pack(
			"{s:s, s:I, s:f, s:f, s:I, s:I, s:I, s:I}",
			"interval", TOUCH_INTERVAL,
			"pages", (json_int_t)(s[k].pages / runs),
			"guest_us_per_page", touch_us(&s[k]),
			"over_kernel_thp", ratio(touch_us(&s[k]), touch_us(&s[TS_THP])),
			"faults", (json_int_t)(s[k].faults / runs),
			"huge_first", (json_int_t)(s[k].huge_first / runs),
			"resident_pages_at_start", (json_int_t)s[k].resident_at_start,
			"pool_prepared_bytes_at_start", (json_int_t)s[k].prepared_at_start));
	json_object_set_new(o, "sides", sides);
	json_dumpf(o, stdout, JSON_COMPACT);
	putchar('\n');
	json_decref(o);
}

int cmd_bench_fault(int argc, char **argv)
{
	struct touch_sum s[NR_TS] = { 0 };
	double proc_ms[NR_PM] = { 0 };
	uint64_t ram = 64 << 20;
	bool json = false;
	int runs = 3, ret;

	ret = parse_common(argc, argv, fault_usage, &runs, &ram, &json);
	if (ret)
		return ret == 1 ? 0 : ret;
	if (ram <= GPMM_FIRSTTOUCH_BASE || ram > VM_PCI_HOLE_START) {
		fprintf(stderr, "gpmm bench fault: --ram must be above 2 MiB and at most 3 GiB\n");
		return 2;
	}
	if (zeroing_costs(16, &zero_memset_us, &zero_kernel_us) || metadata_16g())
		return 1;
	/* take turns: drift of this noisy machine hits every side alike */
	for (int i = 0; i < runs && !ret; i++)
		for (int k = 0; k < NR_TS && !ret; k++)
			ret = touch_side_run(ram, k, &s[k]);
	for (int i = 0; i < runs && !ret; i++)
		for (int k = 0; k < NR_PM && !ret; k++)
			ret = fault_process(ram, k, &proc_ms[k]);
	if (ret)
		return 1;
	for (int k = 0; k < NR_PM; k++)
		proc_ms[k] /= runs;
	if (json)
		print_fault_json(ram, runs, s, proc_ms);
	else
		print_fault(ram, runs, s, proc_ms);
	return 0;
}
