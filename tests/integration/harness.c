// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <CUnit/CUnit.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/integration/harness.h"
#include "vmm/memory/guest_mem.h"

const char *guest_file(const char *name)
{
	/* a few at once may be live in one call's arguments */
	static __thread char paths[4][512];
	static __thread unsigned int next;
	const char *dir = getenv("GUESTS");
	char *path = paths[next++ % 4];

	snprintf(path, sizeof(paths[0]), "%s/%s", dir ? dir : "build/guests", name);
	return path;
}

const char *guests_dir(void)
{
	static char dir[PATH_MAX];

	if (!dir[0] && !realpath(guest_file("."), dir))
		snprintf(dir, sizeof(dir), "%s", guest_file("."));
	return dir;
}

const char *payload(const char *name)
{
	char file[256];

	snprintf(file, sizeof(file), "%s.bin", name);
	return guest_file(file);
}

struct pool *test_pool(unsigned int mib)
{
	struct pool *pool = NULL;

	CU_ASSERT_EQUAL(pool_open((uint64_t)mib << 20, true, &pool), 0);
	return pool;
}

void test_config(struct vm_config *cfg, const char *name, const char *kernel,
		 unsigned int ram_mib, unsigned int cpus)
{
	memset(cfg, 0, sizeof(*cfg));
	snprintf(cfg->name, sizeof(cfg->name), "%s", name);
	snprintf(cfg->kernel, sizeof(cfg->kernel), "%s", kernel);
	cfg->ram_bytes = (uint64_t)ram_mib << 20;
	cfg->cpus = cpus;
	/* the suites test the 4 KiB paths; huge-first tests ask for it */
	cfg->fault = VM_FAULT_4K;
}

int test_vm_create(struct pool *pool, const struct vm_config *cfg,
		   struct run_result *res, struct vm **out, char *err,
		   size_t errlen)
{
	int ret;

	memset(res, 0, sizeof(*res));
	console_buf_init(&res->console);
	ret = vm_create(cfg, pool, out, err, errlen);
	if (!ret) {
		(*out)->console = console_buf_write;
		(*out)->console_opaque = &res->console;
	}
	return ret;
}

void test_vm_finish(struct vm *vm, struct run_result *res)
{
	vm_wait(vm);
	res->state = vm->state;
	res->exit_code = vm->exit_code;
	/* the fault and vCPU threads count these: read them as they write them */
#define READ_STAT(f) (res->stats.f = __atomic_load_n(&vm->stats.f, __ATOMIC_RELAXED))
	READ_STAT(populated_pages);
	READ_STAT(demand_faults);
	READ_STAT(fault_ns);
	READ_STAT(prefault_ns);
	READ_STAT(create_ns);
	READ_STAT(first_exit_ns);
	READ_STAT(exits);
	READ_STAT(huge_first);
	READ_STAT(huge_first_fallback);
	READ_STAT(huge_first_kernel_zeroed);
	READ_STAT(zero_ns);
#undef READ_STAT
	snprintf(res->report, sizeof(res->report), "%s", vm->report);
	vm_destroy(vm);
}

int run_payload(struct pool *pool, const struct vm_config *cfg,
		struct run_result *res)
{
	char err[512];
	struct vm *vm;
	int ret = test_vm_create(pool, cfg, res, &vm, err, sizeof(err));

	if (ret) {
		snprintf(res->report, sizeof(res->report), "%s", err);
		return ret;
	}
	ret = vm_start(vm);
	test_vm_finish(vm, res);
	return ret;
}

bool pool_is_whole(struct pool *pool)
{
	struct mm_stats st;

	mm_drain_all(pool->mm);
	if (mm_stats(pool->mm, &st))
		return false;
	return st.free_pages == st.frames;
}

bool console_has(struct run_result *res, const char *needle)
{
	return console_buf_has(&res->console, needle);
}

const char *gpmm_bin(void)
{
	const char *p = getenv("GPMM");

	return p ? p : "build/gpmm";
}

/*
 * Whatever a failed test left running (a VM, a daemon) is stopped on the
 * way out, so a red run does not leave guests spinning behind it.
 */
static void remove_run_dir(void)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd),
		 "d=/tmp/gpmm-test-%d; for q in $d/*.qmp; do [ -S \"$q\" ] && "
		 "%s destroy --qmp \"$q\" >/dev/null 2>&1; done; "
		 "pkill -TERM -f \"$d/\" >/dev/null 2>&1; rm -rf $d",
		 (int)getpid(), gpmm_bin());
	if (system(cmd))
		return;
}

const char *test_run_dir(void)
{
	static char dir[64];

	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/gpmm-test-%d", (int)getpid());
		mkdir(dir, 0700);
		setenv("GPMM_RUN_DIR", dir, 1);
		atexit(remove_run_dir);
	}
	return dir;
}

#define SH_TIMEOUT_S "700"

int sh(char *out, size_t outlen, const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;
	size_t len = 0;
	FILE *p;
	int status;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	test_run_dir();
	/*
	 * A command that hangs would hold the whole group until the test VM's
	 * time-out, and fail it without a word of which test hung: past
	 * SH_TIMEOUT_S (far above any command's run here, TCG included) it is
	 * killed, its group too, and the test fails saying so.
	 */
	setenv("GPMM_TEST_SH", cmd, 1);
	p = popen("exec timeout -k 10 " SH_TIMEOUT_S " /bin/sh -c \"$GPMM_TEST_SH\"", "r");
	if (!p)
		return -1;
	if (out && outlen) {
		len = fread(out, 1, outlen - 1, p);
		out[len] = '\0';
	} else {
		char sink[4096];

		while (fread(sink, 1, sizeof(sink), p) > 0)
			;
	}
	status = pclose(p);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 124)
		fprintf(stderr, "\n  sh: killed after %s s: %.200s\n", SH_TIMEOUT_S, cmd);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

long long smaps_pmd_kb(int pid)
{
	char path[64], line[256];
	long long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", pid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "ShmemPmdMapped: %lld kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

/* Add @st's file to @seen (distinct by device and inode): its size, if new. */
static long long count_memfd(struct stat *seen, int *n, int cap, const struct stat *st)
{
	for (int i = 0; i < *n; i++)
		if (seen[i].st_dev == st->st_dev && seen[i].st_ino == st->st_ino)
			return 0;
	if (*n < cap)
		seen[(*n)++] = *st;
	return st->st_size;
}

long long shared_memory_bytes(int pid, int *files)
{
	enum { CAP = 65536 };
	struct stat *seen = calloc(CAP, sizeof(*seen)), st;
	char path[256], line[512];
	long long bytes = 0;
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	if (!f || !seen) {
		free(seen);
		if (f)
			fclose(f);
		return -1;
	}
	/* what it maps: each mapping's file, through map_files (root only) */
	while (fgets(line, sizeof(line), f)) {
		char range[64];

		if (!strstr(line, "/memfd:") || sscanf(line, "%63s", range) != 1)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/map_files/%s", pid, range);
		if (stat(path, &st))
			bytes = -1;
		else if (bytes >= 0)
			bytes += count_memfd(seen, &n, CAP, &st);
	}
	fclose(f);
	/* and what it holds a descriptor of */
	for (int fd = 0; fd < 65536 && bytes >= 0; fd++) {
		char link[256];
		ssize_t len;

		snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
		len = readlink(path, link, sizeof(link) - 1);
		if (len < 0)
			continue;
		link[len] = '\0';
		if (strncmp(link, "/memfd:", 7) == 0 && !stat(path, &st))
			bytes += count_memfd(seen, &n, CAP, &st);
	}
	free(seen);
	*files = n;
	return bytes;
}

int read_pid(const char *file)
{
	FILE *f = fopen(file, "r");
	int pid = 0;

	if (f && fscanf(f, "%d", &pid) != 1)
		pid = 0;
	if (f)
		fclose(f);
	return pid;
}

int spawn_bg(const char *tag, const char *cmd)
{
	char pidfile[256];

	snprintf(pidfile, sizeof(pidfile), "%s/%s.pid", test_run_dir(), tag);
	if (sh(NULL, 0, "%s > %s/%s.log 2>&1 & echo $! > %s", cmd, test_run_dir(), tag, pidfile))
		return 0;
	return read_pid(pidfile);
}

bool log_says(const char *tag, const char *needle, int tries)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s.log", test_run_dir(), tag);
	for (int i = 0; i < tries; i++) {
		if (sh(NULL, 0, "grep -q '%s' %s", needle, path) == 0)
			return true;
		usleep(200000);
	}
	return false;
}

json_t *frag_json(const char *target)
{
	static char out[1 << 20];

	if (sh(out, sizeof(out), "%s frag %s%s --json 2>/dev/null", gpmm_bin(),
	       target[0] == '/' ? "--qmp " : "", target))
		return NULL;
	return json_loads(out, 0, NULL);
}
