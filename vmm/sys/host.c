// SPDX-License-Identifier: GPL-2.0
/*
 * The host capability check. gpmm runs on many host kernels (Debian 12's
 * 6.1, 6.12, newer), and what differs between them changes what gpmm can
 * do, not whether it starts: without userfaultfd write-protect on shared
 * memory no guest page moves while its VM runs; without MADV_COLLAPSE on
 * shmem a 2 MiB range assembled onto one block stays mapped by 512 PTEs.
 * Each capability is tried here on a small scratch mapping, because a
 * version number says little about a distribution's backports.
 *
 * The table below is the list; each row's probe returns the level and
 * fills the detail. Probing costs a few milliseconds (one 2 MiB collapse),
 * once per process.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <linux/userfaultfd.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "mm/mm.h"
#include "vmm/sys/host.h"
#include "vmm/sys/uffd.h"
#include "vmm/core/kvm.h"

typedef enum host_level (*host_probe_fn)(char *detail, size_t len);

struct host_cap {
	const char *name;
	const char *loss;	/* what the operator loses without it */
	host_probe_fn probe;
};

static enum host_level probe_kvm(char *d, size_t len)
{
	const char *why = kvm_unavailable();

	if (why) {
		snprintf(d, len, "%s", why);
		return HOST_MISSING;
	}
	snprintf(d, len, "/dev/kvm, API %d, %d memslots", KVM_API_VERSION,
		 ioctl(kvm_fd(), KVM_CHECK_EXTENSION, KVM_CAP_NR_MEMSLOTS));
	return HOST_OK;
}

static int uffd_api(uint64_t features, uint64_t *have)
{
	struct uffdio_api api = { .api = UFFD_API, .features = features };
	int fd = uffd_create(O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return fd;
	if (ioctl(fd, UFFDIO_API, &api) < 0) {
		int ret = -errno;

		close(fd);
		return ret;
	}
	if (have)
		*have = api.features;
	return fd;
}

static enum host_level probe_uffd(char *d, size_t len)
{
	uint64_t features = 0;
	int fd = uffd_api(0, &features);

	if (fd < 0) {
		uffd_explain(fd, d, len);
		return HOST_MISSING;
	}
	close(fd);
	snprintf(d, len, "API features 0x%llx%s", (unsigned long long)features,
		 uffd_via_device() ? ", through " UFFD_DEVICE : "");
	return HOST_OK;
}

/*
 * A scratch window of @pages 4 KiB pages of a memfd, mapped one page at a
 * time from the offsets @off(i) gives, as guest RAM is.
 */
struct scratch {
	int memfd;
	uint8_t *va;
	size_t len;
};

static int scratch_map(struct scratch *s, size_t len, bool scatter)
{
	uint8_t *res;

	s->len = len;
	s->va = NULL;
	s->memfd = memfd_create("gpmm-host-check", MFD_CLOEXEC);
	if (s->memfd < 0 || ftruncate(s->memfd, (off_t)(2 * len)) < 0)
		goto fail;
	/* reserve twice the length to place the window on a 2 MiB boundary */
	res = mmap(NULL, 2 * len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (res == MAP_FAILED)
		goto fail;
	s->va = (uint8_t *)(((uintptr_t)res + len - 1) & ~(uintptr_t)(len - 1));
	if (s->va > res)
		munmap(res, (size_t)(s->va - res));
	munmap(s->va + len, (size_t)(res + 2 * len - (s->va + len)));
	for (size_t off = 0; off < len; off += scatter ? MM_PAGE_SIZE : len) {
		/* scattered: page i on page i of the file's second half, reversed */
		off_t at = scatter ? (off_t)(2 * len - MM_PAGE_SIZE - off) : 0;

		if (mmap(s->va + off, scatter ? MM_PAGE_SIZE : len, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED, s->memfd, at) == MAP_FAILED)
			goto fail;
	}
	return 0;
fail:
	if (s->va)
		munmap(s->va, len);
	if (s->memfd >= 0)
		close(s->memfd);
	return -errno;
}

static void scratch_unmap(struct scratch *s)
{
	munmap(s->va, s->len);
	close(s->memfd);
}

/*
 * Write-protect of shared memory, and of a range that spans several VMAs
 * in one call: two adjacent pages on non-adjacent offsets are two VMAs.
 */
static int uffd_wp_try(uint64_t len, bool span, char *d, size_t dlen)
{
	struct scratch s;
	int fd, ret;

	fd = uffd_api(UFFD_FEATURE_WP_HUGETLBFS_SHMEM, NULL);
	if (fd < 0) {
		snprintf(d, dlen, "UFFD_FEATURE_WP_HUGETLBFS_SHMEM: %s", strerror(-fd));
		return fd;
	}
	ret = scratch_map(&s, span ? 2 * MM_PAGE_SIZE : MM_PAGE_SIZE, span);
	if (!ret) {
		struct uffdio_register reg = {
			.range = { (uintptr_t)s.va, s.len },
			.mode = UFFDIO_REGISTER_MODE_MISSING | UFFDIO_REGISTER_MODE_WP,
		};
		struct uffdio_writeprotect wp = {
			.range = { (uintptr_t)s.va, len }, .mode = UFFDIO_WRITEPROTECT_MODE_WP,
		};

		memset(s.va, 1, s.len);		/* populated before registering */
		if (ioctl(fd, UFFDIO_REGISTER, &reg) < 0)
			ret = -errno, snprintf(d, dlen, "UFFDIO_REGISTER (WP) on shmem: %s",
					       strerror(errno));
		else if (ioctl(fd, UFFDIO_WRITEPROTECT, &wp) < 0)
			ret = -errno, snprintf(d, dlen, "UFFDIO_WRITEPROTECT %s: %s",
					       span ? "across two VMAs" : "on shmem",
					       strerror(errno));
		scratch_unmap(&s);
	} else {
		snprintf(d, dlen, "scratch mapping: %s", strerror(-ret));
	}
	close(fd);
	return ret;
}

static enum host_level probe_uffd_wp_shmem(char *d, size_t len)
{
	if (uffd_wp_try(MM_PAGE_SIZE, false, d, len))
		return HOST_MISSING;
	snprintf(d, len, "write-protect of shared memory works");
	return HOST_OK;
}

static enum host_level probe_uffd_wp_span(char *d, size_t len)
{
	int ret = uffd_wp_try(2 * MM_PAGE_SIZE, true, d, len);

	if (ret == -ENOENT)
		return HOST_LIMITED;
	if (ret)
		return HOST_MISSING;
	snprintf(d, len, "one call protects a range of many mappings");
	return HOST_OK;
}

static long smaps_pmd_kb(const uint8_t *va)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[256];
	bool in = false;
	long kb = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long a, b;
		char c;

		if (sscanf(line, "%lx-%lx %c", &a, &b, &c) == 3)
			in = a <= (uintptr_t)va && (uintptr_t)va < b;
		else if (in && sscanf(line, "ShmemPmdMapped: %ld kB", &kb) == 1)
			break;
	}
	fclose(f);
	return kb;
}

/*
 * Success is what the kernel shows afterwards: the range PMD-mapped in
 * smaps, not only madvise's return value.
 */
static enum host_level probe_collapse(char *d, size_t len)
{
	struct scratch s;
	long kb;
	int ret = scratch_map(&s, MM_PAGEBLOCK_SIZE, false);

	if (ret) {
		snprintf(d, len, "scratch mapping: %s", strerror(-ret));
		return HOST_MISSING;
	}
	memset(s.va, 1, MM_PAGEBLOCK_SIZE);
	ret = mm_host_collapse(s.va);
	kb = smaps_pmd_kb(s.va);
	scratch_unmap(&s);
	if (ret) {
		snprintf(d, len, "MADV_COLLAPSE on shmem: %s", strerror(-ret));
		return HOST_MISSING;
	}
	if (kb < 2048) {
		snprintf(d, len, "MADV_COLLAPSE succeeded but smaps shows %ld kB PMD-mapped", kb);
		return HOST_MISSING;
	}
	snprintf(d, len, "MADV_COLLAPSE on shmem gives a PMD mapping");
	return HOST_OK;
}

static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	int ret = 0;

	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f))
		ret = -EIO;
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return ret;
}

/* gpmm reads these, never writes them (DESIGN.md). */
static enum host_level probe_thp(char *d, size_t len)
{
	char anon[96], shmem[96];

	if (read_line("/sys/kernel/mm/transparent_hugepage/enabled", anon, sizeof(anon)) ||
	    read_line("/sys/kernel/mm/transparent_hugepage/shmem_enabled", shmem, sizeof(shmem))) {
		snprintf(d, len, "no /sys/kernel/mm/transparent_hugepage: kernel built without THP");
		return HOST_MISSING;
	}
	snprintf(d, len, "enabled: %.80s; shmem_enabled: %.80s", anon, shmem);
	return strstr(shmem, "[deny]") ? HOST_MISSING : HOST_OK;
}

uint64_t host_max_map_count(void)
{
	char v[32];
	unsigned long long n;

	if (read_line("/proc/sys/vm/max_map_count", v, sizeof(v)) || sscanf(v, "%llu", &n) != 1)
		return 0;
	return n;
}

static enum host_level probe_max_map_count(char *d, size_t len)
{
	uint64_t n = host_max_map_count();

	if (!n) {
		snprintf(d, len, "cannot read /proc/sys/vm/max_map_count");
		return HOST_LIMITED;
	}
	snprintf(d, len, "%llu: a process holds at most ~%llu MiB of guest RAM on scattered "
		 "4 KiB frames (a 2 MiB backing is one mapping)", (unsigned long long)n,
		 (unsigned long long)(n * MM_PAGE_SIZE >> 20));
	return HOST_OK;
}

static enum host_level probe_sched_fifo(char *d, size_t len)
{
	struct sched_param sp = { .sched_priority = 1 }, old_sp;
	int policy, ret;

	/* 0, the calling thread: what the sandbox allows (sandbox.c) */
	policy = sched_getscheduler(0);
	if (policy < 0 || sched_getparam(0, &old_sp)) {
		policy = SCHED_OTHER;
		old_sp.sched_priority = 0;
	}
	ret = sched_setscheduler(0, SCHED_FIFO, &sp) ? errno : 0;
	if (ret) {
		snprintf(d, len, "SCHED_FIFO: %s", strerror(ret));
		return HOST_LIMITED;
	}
	sched_setscheduler(0, policy, &old_sp);
	snprintf(d, len, "the migration window may run SCHED_FIFO");
	return HOST_OK;
}

static const struct host_cap host_cap_table[HOST_NR_CAPS] = {
	[HOST_KVM] = { "kvm", "no VM can run on this host (the test suites use tests/vm/run)",
		       probe_kvm },
	[HOST_UFFD] = { "userfaultfd", "no VM can run: guest RAM is backed through userfaultfd",
			probe_uffd },
	[HOST_UFFD_WP_SHMEM] = { "uffd-wp-shmem",
		"no guest page moves while its VM runs: no live compaction of guest RAM, "
		"no 2 MiB assembly",
		probe_uffd_wp_shmem },
	[HOST_UFFD_WP_SPAN] = { "uffd-wp-span",
		"write-protect goes page by page (512 calls per 2 MiB assembly): a longer "
		"window in which vCPU writes to the range wait",
		probe_uffd_wp_span },
	[HOST_COLLAPSE_SHMEM] = { "madv-collapse-shmem",
		"guest RAM stays on 4 KiB host pages: assembled 2 MiB ranges sit on one "
		"block but are mapped by 512 PTEs, not one PMD, and pool blocks cannot be "
		"made host huge pages (--pool-huge does nothing)",
		probe_collapse },
	[HOST_THP] = { "thp",
		"no 2 MiB host pages for guest RAM", probe_thp },
	[HOST_MAX_MAP_COUNT] = { "max-map-count",
		"guest RAM beyond the limit cannot be backed until it is assembled "
		"(raise it: sysctl vm.max_map_count)",
		probe_max_map_count },
	[HOST_SCHED_FIFO] = { "sched-fifo",
		"the migration window can be preempted: longer vCPU write stalls",
		probe_sched_fifo },
};

static struct host_report report;
static pthread_once_t report_once = PTHREAD_ONCE_INIT;

static void host_probe_all(void)
{
	struct utsname u;

	snprintf(report.kernel, sizeof(report.kernel), "%s",
		 uname(&u) == 0 ? u.release : "unknown");
	for (int i = 0; i < HOST_NR_CAPS; i++)
		report.cap[i].level = host_cap_table[i].probe(report.cap[i].detail,
							     sizeof(report.cap[i].detail));
}

const struct host_report *host_caps(void)
{
	pthread_once(&report_once, host_probe_all);
	return &report;
}

bool host_has(enum host_cap_id id)
{
	return host_caps()->cap[id].level != HOST_MISSING;
}

const char *host_cap_name(enum host_cap_id id)
{
	return host_cap_table[id].name;
}

const char *host_cap_loss(enum host_cap_id id)
{
	return host_cap_table[id].loss;
}

static const char *level_name(enum host_level l)
{
	return l == HOST_OK ? "ok" : l == HOST_LIMITED ? "limited" : "missing";
}

void host_caps_print_missing(FILE *f, const char *prefix)
{
	const struct host_report *rep = host_caps();

	for (int i = 0; i < HOST_NR_CAPS; i++)
		if (rep->cap[i].level != HOST_OK)
			fprintf(f, "%s%s %s (%s): %s\n", prefix, host_cap_table[i].name,
				level_name(rep->cap[i].level), rep->cap[i].detail,
				host_cap_table[i].loss);
}

void host_caps_print(FILE *f, const struct host_report *rep)
{
	int missing = 0;

	fprintf(f, "host-check: Linux %s\n", rep->kernel);
	for (int i = 0; i < HOST_NR_CAPS; i++) {
		const struct host_cap_state *c = &rep->cap[i];

		fprintf(f, "  %-20s %-8s %s\n", host_cap_table[i].name,
			level_name(c->level), c->detail);
		if (c->level != HOST_OK) {
			fprintf(f, "  %-20s %-8s -> %s\n", "", "", host_cap_table[i].loss);
			missing++;
		}
	}
	fprintf(f, "host-check: %d of %d capabilities limited or missing\n", missing,
		HOST_NR_CAPS);
}

json_t *host_caps_json(const struct host_report *rep)
{
	json_t *caps = json_object();

	for (int i = 0; i < HOST_NR_CAPS; i++) {
		const struct host_cap_state *c = &rep->cap[i];
		json_t *o = json_pack("{s:s, s:s}", "level", level_name(c->level),
				      "detail", c->detail);

		if (c->level != HOST_OK)
			json_object_set_new(o, "loss", json_string(host_cap_table[i].loss));
		json_object_set_new(caps, host_cap_table[i].name, o);
	}
	return json_pack("{s:s, s:o}", "kernel", rep->kernel, "capabilities", caps);
}

/*
 * The soft limit on descriptors raised to the hard one if @need (plus
 * room for sockets and the rest) does not fit under it: a pool served
 * with a file per pageblock holds one per 2 MiB. -EMFILE with what to
 * raise if even the hard limit is too low.
 */
int host_raise_nofile(uint64_t need, char *err, size_t errlen)
{
	struct rlimit rl;

	need += HOST_NOFILE_ROOM;
	if (getrlimit(RLIMIT_NOFILE, &rl))
		return -errno;
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need) {
		if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need) {
			snprintf(err, errlen, "%llu descriptors needed (a file per 2 MiB of pool), "
				 "the hard limit is %llu: raise it (ulimit -Hn, LimitNOFILE=)",
				 (unsigned long long)need, (unsigned long long)rl.rlim_max);
			return -EMFILE;
		}
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl))
			return -errno;
	}
	return 0;
}
