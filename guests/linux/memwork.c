// SPDX-License-Identifier: GPL-2.0
/*
 * memwork: a workload for the Linux guest (static, in its initramfs) that
 * makes guest memory the host can see: it allocates N MiB, writes every
 * page, checks it, and gives it back to the guest's page allocator in a
 * chosen pattern, so the host can watch its backing grow and shrink and
 * see whether free page reporting hands back whole 2 MiB blocks.
 *
 *   memwork [--mib N] [--rounds R] [--free half|all|alternate|none] [--hold]
 *           [--cold C]
 *
 * --cold C first writes C MiB more once (a cold set, left alone while the
 * rounds rewrite the N MiB hot set) and checks it after the last round.
 *
 * Every 4 KiB page holds a tag naming its page index and round, words
 * derived from the tag, and a checksum of all of them in its last word: a
 * page that lost a write, was swapped with another, or still holds an
 * older round fails its check. Memory is freed with munmap in 2 MiB chunks
 * of a 2 MiB-aligned mapping, so a chunk backed by a guest huge page goes
 * back to the guest's buddy allocator as one whole order-9 block.
 *
 * Output, one line each: "memwork: round R N MiB ok" per round (or
 * "memwork: CHECKSUM ERRORS n" and exit 1), with --hold "memwork: holding
 * N MiB", then "memwork: freed X MiB" and "memwork: done errors=0".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGE_SIZE	4096UL
#define WORDS		(PAGE_SIZE / sizeof(uint64_t))
#define CHUNK_SIZE	(2UL << 20)
#define MIB		(1UL << 20)

enum free_mode { FREE_ALL, FREE_HALF, FREE_ALTERNATE, FREE_NONE };

static const char *const free_names[] = {
	[FREE_ALL] = "all",
	[FREE_HALF] = "half",
	[FREE_ALTERNATE] = "alternate",
	[FREE_NONE] = "none",
};

struct work {
	uint8_t *base;		/* 2 MiB aligned */
	size_t bytes;
	size_t pages;
};

static volatile sig_atomic_t got_usr1;

static void on_usr1(int sig)
{
	got_usr1 = 1;
}

/* A different tag for every (page, round): stale or misplaced pages show. */
static uint64_t page_tag(size_t page, unsigned int round)
{
	return ((uint64_t)page << 20 | round) * 0x9e3779b97f4a7c15ULL ^ 0x6d656d776f726b21ULL;
}

/* Order matters (multiply after xor): a swap of two words changes it. */
static uint64_t checksum(const uint64_t *w, size_t n)
{
	uint64_t c = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < n; i++)
		c = (c ^ w[i]) * 0x100000001b3ULL;
	return c;
}

static void fill_page(uint64_t *w, uint64_t tag)
{
	w[0] = tag;
	for (size_t i = 1; i < WORDS - 1; i++)
		w[i] = tag ^ (i * 0xff51afd7ed558ccdULL);
	w[WORDS - 1] = checksum(w, WORDS - 1);
}

static bool page_ok(const uint64_t *w, uint64_t tag)
{
	return w[0] == tag && w[WORDS - 1] == checksum(w, WORDS - 1);
}

static void fill(struct work *wk, unsigned int round)
{
	for (size_t p = 0; p < wk->pages; p++)
		fill_page((uint64_t *)(wk->base + p * PAGE_SIZE), page_tag(p, round));
}

/* Pages whose content is not what round @round wrote. */
static size_t verify(const struct work *wk, unsigned int round)
{
	size_t bad = 0;

	for (size_t p = 0; p < wk->pages; p++)
		if (!page_ok((const uint64_t *)(wk->base + p * PAGE_SIZE), page_tag(p, round)))
			bad++;
	return bad;
}

/*
 * A 2 MiB-aligned anonymous mapping: reserve 2 MiB more, trim both ends.
 * MADV_HUGEPAGE asks the guest for huge pages where its THP allows it;
 * without them the mapping still works, page by page.
 */
static int work_map(struct work *wk, size_t mib)
{
	size_t bytes = mib * MIB, head;
	uint8_t *p;

	p = mmap(NULL, bytes + CHUNK_SIZE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	head = (CHUNK_SIZE - (uintptr_t)p % CHUNK_SIZE) % CHUNK_SIZE;
	if (head)
		munmap(p, head);
	munmap(p + head + bytes, CHUNK_SIZE - head);
	wk->base = p + head;
	wk->bytes = bytes;
	wk->pages = bytes / PAGE_SIZE;
	madvise(wk->base, bytes, MADV_HUGEPAGE);
	return 0;
}

static bool chunk_freed(enum free_mode mode, size_t chunk, size_t chunks)
{
	switch (mode) {
	case FREE_ALL: return true;
	case FREE_HALF: return chunk < chunks / 2;
	case FREE_ALTERNATE: return chunk % 2 == 0;
	case FREE_NONE: break;
	}
	return false;
}

/* munmap the chosen 2 MiB chunks (the last may be 1 MiB); bytes freed. */
static size_t work_free(struct work *wk, enum free_mode mode)
{
	size_t chunks = (wk->bytes + CHUNK_SIZE - 1) / CHUNK_SIZE, freed = 0;

	for (size_t c = 0; c < chunks; c++) {
		size_t off = c * CHUNK_SIZE;
		size_t len = wk->bytes - off < CHUNK_SIZE ? wk->bytes - off : CHUNK_SIZE;

		if (chunk_freed(mode, c, chunks) && !munmap(wk->base + off, len))
			freed += len;
	}
	return freed;
}

/*
 * Hold until a line arrives on stdin or SIGUSR1 does. SIGUSR1 is blocked
 * except inside ppoll, so one sent before we wait is not lost; at EOF on
 * stdin only the signal can end the hold.
 */
static void hold(void)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	struct pollfd pfd = { .fd = 0, .events = POLLIN };
	sigset_t block, during;
	char c;

	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigprocmask(SIG_BLOCK, &block, &during);
	sigdelset(&during, SIGUSR1);
	sigaction(SIGUSR1, &sa, NULL);
	while (!got_usr1) {
		if (ppoll(&pfd, 1, NULL, &during) < 0)
			continue;	/* EINTR: the signal, or another */
		if (pfd.revents) {
			ssize_t n = read(0, &c, 1);

			if (n == 1 && c == '\n')
				break;
			if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
				pfd.fd = -1;	/* EOF: ppoll now waits for the signal */
		}
	}
	sigprocmask(SIG_UNBLOCK, &block, NULL);
}

static int fail(size_t bad)
{
	printf("memwork: CHECKSUM ERRORS %zu\n", bad);
	return 1;
}

static const char usage[] =
	"usage: memwork [--mib N] [--rounds R] [--free half|all|alternate|none] [--hold]"
	" [--cold C]\n";

static int parse(int argc, char **argv, size_t *mib, size_t *cold, unsigned int *rounds,
		 enum free_mode *mode, bool *do_hold)
{
	static const struct option opts[] = {
		{ "mib", required_argument, NULL, 'm' },
		{ "cold", required_argument, NULL, 'c' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "free", required_argument, NULL, 'f' },
		{ "hold", no_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	long v;
	int c;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'm':
		case 'c':
		case 'r':
			v = strtol(optarg, NULL, 0);
			if (v < 1 || v > (c == 'r' ? 1 << 30 : 1 << 20))
				return -EINVAL;
			if (c == 'm')
				*mib = v;
			else if (c == 'c')
				*cold = v;
			else
				*rounds = v;
			break;
		case 'f':
			for (*mode = 0; *mode <= FREE_NONE; (*mode)++)
				if (!strcmp(optarg, free_names[*mode]))
					break;
			if (*mode > FREE_NONE)
				return -EINVAL;
			break;
		case 'H': *do_hold = true; break;
		default: return -EINVAL;
		}
	}
	return optind == argc ? 0 : -EINVAL;
}

int main(int argc, char **argv)
{
	enum free_mode mode = FREE_ALL;
	unsigned int rounds = 1;
	bool do_hold = false;
	struct work wk = { 0 }, cw = { 0 };
	size_t mib = 16, cold = 0, bad;
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);	/* a host reads these lines as they come */
	if (parse(argc, argv, &mib, &cold, &rounds, &mode, &do_hold)) {
		fputs(usage, stderr);
		return 2;
	}
	ret = cold ? work_map(&cw, cold) : 0;
	if (!ret)
		ret = work_map(&wk, mib);
	if (ret) {
		printf("memwork: cannot map %zu MiB: %s\n", mib + cold, strerror(-ret));
		return 1;
	}
	if (cold) {
		/* round 0: no hot round writes its tags */
		fill(&cw, 0);
		printf("memwork: cold %zu MiB written\n", cold);
	}
	for (unsigned int r = 1; r <= rounds; r++) {
		fill(&wk, r);
		bad = verify(&wk, r);
		if (bad)
			return fail(bad);
		printf("memwork: round %u %zu MiB ok\n", r, mib);
	}
	if (cold) {
		bad = verify(&cw, 0);
		if (bad)
			return fail(bad);
		printf("memwork: cold %zu MiB ok\n", cold);
	}
	if (do_hold) {
		printf("memwork: holding %zu MiB\n", mib);
		hold();
		bad = verify(&wk, rounds);
		if (bad)
			return fail(bad);
		printf("memwork: held %zu MiB ok\n", mib);
	}
	printf("memwork: freed %zu MiB\n", work_free(&wk, mode) / MIB);
	printf("memwork: done errors=0\n");
	return 0;
}
