// SPDX-License-Identifier: GPL-2.0
/*
 * The assembler: every tick it looks at each VM's 2 MiB ranges and
 * assembles those whose 512 pages are all backed but not by one block.
 * Partly touched ranges wait for the guest, unless the VM's policy says
 * fill (populate the rest, then assemble). A VM can turn it off, cap the
 * ranges per second, or stop at a target share of its populated RAM.
 *
 * The assembler takes blocks with ordinary order-9 allocations, so direct
 * compaction and lumpy reclaim make room as the pool's policy allows.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vmm/memory/assembler.h"
#include "vmm/memory/guest_mem.h"
#include "vmm/memory/huge_backing.h"
#include "vmm/memory/pressure.h"

#define MAX_VMS		256
#define NSEC_PER_SEC	1000000000ULL

struct assembler {
	pthread_t thread;
	pthread_mutex_t lock;	/* held during a pass: removal waits for it */
	pthread_cond_t cond;
	bool stop;
	unsigned int interval_ms;
	struct vm *vms[MAX_VMS];
	unsigned int nr_vms;
};

static bool below_target(struct vm *vm)
{
	uint64_t populated = vm_populated_pages(vm) << MM_PAGE_SHIFT;

	return vm->cfg.huge_target >= 100 ||
	       vm_block_bytes(vm) * 100 < populated * vm->cfg.huge_target;
}

/*
 * The rate limit is a token bucket: each tick buys interval_ms worth of
 * ranges at huge_rate a second, and what a VM does not spend carries over,
 * but only up to one second's worth: after a long idle time (nothing ready,
 * no free block) the VM still gets at most huge_rate ranges in any second,
 * not the whole backlog at once.
 */
uint64_t assembler_refill(uint64_t *bucket_ns, unsigned int rate,
			  unsigned int interval_ms)
{
	if (!rate)
		return UINT64_MAX;
	*bucket_ns += (uint64_t)interval_ms * 1000000ULL;
	if (*bucket_ns > NSEC_PER_SEC)
		*bucket_ns = NSEC_PER_SEC;
	return *bucket_ns / (NSEC_PER_SEC / rate);
}

static void spend(struct vm *vm, uint64_t ranges)
{
	if (vm->cfg.huge_rate)
		vm->assemble_budget_ns -= ranges * (NSEC_PER_SEC / vm->cfg.huge_rate);
}

static bool ready(struct vm *vm, uint64_t gpa)
{
	bool huge;
	int n = vm_range_populated(vm, gpa, &huge);

	if (n <= 0 || huge)
		return false;
	/* never fill back what the guest gave back (balloon): that undoes it */
	if (n < (int)MM_PAGEBLOCK_PAGES && vm->cfg.huge_fill && !vm_range_given_back(vm, gpa))
		return vm_guest_ptr(vm, gpa, MM_PAGEBLOCK_SIZE) != NULL;
	return n == (int)MM_PAGEBLOCK_PAGES;
}

static unsigned int pass_budget(struct vm *vm, uint64_t left)
{
	unsigned int done = 0;

	for (unsigned int i = 0; i < vm->nr_regions && left; i++) {
		struct vm_region *r = &vm->regions[i];

		for (uint64_t g = r->gpa; g < r->gpa + r->size && left; g += MM_PAGEBLOCK_SIZE) {
			if (vm_is_stopping(vm) || !below_target(vm))
				return done;
			if (!ready(vm, g))
				continue;
			switch (vm_assemble_range(vm, g)) {
			case 0:
				done++;
				left--;
				break;
			case -ENOMEM:
				/* no block to be had now: try again next tick */
				return done;
			}
		}
	}
	return done;
}

unsigned int assembler_pass(struct vm *vm)
{
	return pass_budget(vm, UINT64_MAX);
}

static void *assembler_fn(void *arg)
{
	struct assembler *a = arg;

	pthread_setname_np(pthread_self(), "gpmm-assemble");
	pthread_mutex_lock(&a->lock);
	while (!a->stop) {
		struct timespec ts;

		for (unsigned int i = 0; i < a->nr_vms; i++) {
			struct vm *vm = a->vms[i];

			if (vm_is_stopping(vm))
				continue;
			pressure_balance(vm);
			if (!vm->cfg.huge)
				continue;
			spend(vm, pass_budget(vm, assembler_refill(&vm->assemble_budget_ns,
								     vm->cfg.huge_rate,
								     a->interval_ms)));
		}
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += (long)a->interval_ms * 1000000L;
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		pthread_cond_timedwait(&a->cond, &a->lock, &ts);
	}
	pthread_mutex_unlock(&a->lock);
	return NULL;
}

int assembler_start(struct assembler **out, unsigned int interval_ms)
{
	struct assembler *a = calloc(1, sizeof(*a));
	int ret;

	if (!a)
		return -ENOMEM;
	a->interval_ms = interval_ms ? interval_ms : 20;
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->cond, NULL);
	ret = -pthread_create(&a->thread, NULL, assembler_fn, a);
	if (ret) {
		free(a);
		return ret;
	}
	*out = a;
	return 0;
}

void assembler_stop(struct assembler *a)
{
	if (!a)
		return;
	pthread_mutex_lock(&a->lock);
	a->stop = true;
	pthread_cond_signal(&a->cond);
	pthread_mutex_unlock(&a->lock);
	pthread_join(a->thread, NULL);
	free(a);
}

int assembler_add(struct assembler *a, struct vm *vm)
{
	int ret = 0;

	pthread_mutex_lock(&a->lock);
	if (a->nr_vms == MAX_VMS)
		ret = -ENOSPC;
	else
		a->vms[a->nr_vms++] = vm;
	pthread_mutex_unlock(&a->lock);
	return ret;
}

void assembler_remove(struct assembler *a, struct vm *vm)
{
	pthread_mutex_lock(&a->lock);
	for (unsigned int i = 0; i < a->nr_vms; i++) {
		if (a->vms[i] == vm) {
			a->vms[i] = a->vms[--a->nr_vms];
			break;
		}
	}
	pthread_mutex_unlock(&a->lock);
}
