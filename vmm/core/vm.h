/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A KVM virtual machine whose guest RAM comes from the pool 4 KiB at a
 * time. Lifecycle: vm_create (memory, devices, payload, vCPUs) ->
 * vm_start (vCPU threads run) -> ... -> vm_end_wait / vm_destroy.
 */
/*
 * Lock order, for mm/ and vmm/ together (a thread holding one may take
 * only those after it):
 *
 *   virtio dev->lock     one virtio device's registers, queues and model
 *                        (devices/virtio/virtio_mmio.h): taken on the vCPU thread
 *                        that writes QueueNotify, where the device runs, and
 *                        by QMP (balloon target, stats); before mem_lock,
 *                        which its guest accesses (populate) take. The
 *                        balloon's PFN work (gmem_discard) runs with it
 *                        dropped, in batches, so no guest can hold it long.
 *                        virtio-net's I/O thread takes it for one chain at a
 *                        time, never across the tap's read or write.
 *                        Never two at once.
 *   assembler.lock       held through a pass over the VMs (assembler.c);
 *                        an assembly's block is allocated under it (in a VM
 *                        process: the pool client's slow chan.lock)
 *   pool compact_lock    one compaction at a time (mm/compaction.c)
 *   pool owners_lock     read-held while an owner's callback runs (mm/)
 *   service client cb_lock  (vmm/pool_service/pool_service.c, the service's
 *                        process) one move asked of a VM process at a time:
 *                        the callback of an owner that is a VM process, so
 *                        taken under the two above; under it only service.lock,
 *                        a leaf, the pool's lock (a late move settled, a
 *                        client's release) and the callback socket. Never
 *                        with mem_lock.
 *   pool client ops_lock (vmm/pool_service/pool_client.c, a VM process)
 *                        read-held by the client's callback thread around
 *                        ram_migrate, which takes mem_lock
 *   vm.mem_lock          a VM's backing map and mappings: the owner
 *                        callback (ram_migrate) takes it under the locks above
 *   vm.mig.lock          the open write-protect window and its waiters
 *   pool client chan.lock  (a VM process whose pool is the service's) one
 *                        request in flight on a channel to the service: taken
 *                        under mem_lock (a fault's refill or huge first touch,
 *                        a split, a pin, a free that spills the cache; so
 *                        dev->lock -> mem_lock -> chan.lock for a device's
 *                        guest access that populates), under
 *                        assembler.lock (the slow channel) and with nothing
 *                        held. Under it only the socket and the files' lock.
 *                        The client's cache_lock is never held with chan.lock.
 *   pool client files    (vmm/pool_service/pool_files.c) the view and the
 *                        pageblock files of a VM process: a leaf, taken under
 *                        chan.lock, cache_lock or mem_lock (a fault's mapping)
 *   pool host_lock       making pool blocks huge vs giving them back, and a
 *                        pageblock's file (mm/hostmem.c, mm/pbfile.c): its
 *                        holders take only pool lock,
 *                        so it may be waited for under the locks above (a
 *                        huge first touch, under mem_lock, waits for its
 *                        block); other allocators only trylock it, and so
 *                        does whoever drops pool lock with pageblocks waiting
 *                        for fresh files (the holder retires them)
 *   pool pcp_list_lock   the list of per-thread lists (mm/pcp.c)
 *   pcp.lock             one per-thread list
 *   pool lock            the buddy lists (like zone->lock)
 *
 * vm.lock (state, pause protocol), console_buf.lock and the 8250's lock
 * (devices/legacy/serial8250.c: vCPU threads and console input; under it only a
 * pipe write and KVM_IRQ_LINE) are leaves: nothing else is taken under
 * them. The fault thread takes mem_lock (populate) and
 * mig.lock (write-protect faults), never both. The swap thread (swap.c)
 * takes no lock at all: a swap-out under mem_lock waits in mremap() for
 * it to read the remap event. pressure_balance, on the assembler's thread,
 * takes mem_lock as a fault does, and the balloon's dev->lock (its
 * target) under assembler.lock: nothing takes assembler.lock under a
 * device's lock. Allocating a 2 MiB block may
 * compact, which calls back into VMs: vm_assemble_range allocates before it
 * takes mem_lock.
 */
#ifndef GPMM_VM_H
#define GPMM_VM_H

#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include "devices/machine.h"
#include "vmm/boot/boot.h"
#include "vmm/memory/pool_backend.h"

#define VM_NAME_MAX		64
#define VM_MAX_CPUS		32
#define VM_MAX_REGIONS		2
#define VM_PCI_HOLE_START	0xc0000000ULL	/* 3 GiB */
#define VM_HIGH_RAM_START	0x100000000ULL	/* 4 GiB */
#define VM_MAX_RAM		(64ULL << 30)
#define VM_FAIL_EXIT_CODE	255	/* `gpmm run` status of a failed VM */

/*
 * What the first touch of an aligned 2 MiB guest range gets: a whole
 * free order-9 block (huge), 64 KiB of 4 KiB frames (4k), or a block while
 * the pool keeps free blocks above its watermark and 4 KiB below (auto).
 */
enum vm_fault_policy {
	VM_FAULT_AUTO,
	VM_FAULT_HUGE,
	VM_FAULT_4K,
};

/*
 * What guest RAM is: pool frames, backed on first touch through
 * userfaultfd (what gpmm is), or the host kernel's own anonymous memory,
 * with THP or with 4 KiB pages: no pool frame, no userfaultfd, the kernel
 * backs each first touch itself. The anonymous kinds are the baseline
 * `gpmm bench fault` measures gpmm against, the same guest run the same
 * way; nothing moves, gives back or reports such RAM, so they go without
 * balloon and prefault.
 */
enum vm_ram_backing {
	VM_RAM_POOL,
	VM_RAM_ANON_THP,
	VM_RAM_ANON_4K,
};

struct vm_config {
	char name[VM_NAME_MAX];
	uint64_t ram_bytes;
	unsigned int cpus;
	char kernel[PATH_MAX];	/* flat payload, bzImage or vmlinux (PVH) */
	char initrd[PATH_MAX];
	char append[2048];	/* Linux command line, after gpmm's own part */
	char console[PATH_MAX + 16];	/* stdio, pty, socket:PATH, file:PATH, none */
	char disk[PATH_MAX];	/* raw image for virtio-blk, "" = none */
	bool disk_readonly;
	struct machine_net net[MACHINE_NET_MAX];	/* virtio-net interfaces */
	unsigned int nr_net;
	bool balloon;		/* virtio-balloon */
	bool balloon_no_reporting;	/* ... without free page reporting */
	uint64_t pool_bytes;	/* for a `gpmm run` that makes its own pool */
	struct pool_host pool_host;	/* and what that pool does with host memory */
	enum vm_fault_policy fault;	/* what a first touch of a 2 MiB range gets */
	bool prefault;
	/* where a swap file may go; "" off, "auto": /var/tmp when the pool is overcommitted */
	char swap_dir[PATH_MAX];
	int swap_fd;		/* that file, opened before the sandbox; -1: none */
	enum vm_ram_backing ram;	/* VM_RAM_POOL but in benchmarks */
	char qmp_path[108];	/* sun_path */
	/* 2 MiB assembly policy */
	bool huge;		/* assemble at all (default yes) */
	bool huge_fill;		/* populate partly touched ranges to assemble them */
	unsigned int huge_rate;	/* ranges per second at most, 0 = no limit */
	unsigned int huge_target;	/* stop at this % of populated RAM */
};

enum vm_state {
	VM_CREATED,
	VM_RUNNING,
	VM_PAUSED,
	VM_SHUTDOWN,		/* the guest asked to stop */
	VM_FAILED,		/* stopped by a fault, see vm->report */
};

/* How one aligned 2 MiB guest range is backed (vm_region.huge). */
enum range_backing {
	RANGE_4K,		/* 4 KiB frames, wherever they are */
	RANGE_BLOCK,		/* one order-9 block, in order, mapped by PTEs */
	RANGE_PMD,		/* that block, and MADV_COLLAPSE made it one PMD */
};

struct vm_region {
	uint64_t gpa;
	uint64_t size;
	uint8_t *hva;		/* 2 MiB aligned window */
	uint32_t *backing;	/* frame per guest page, NIL_FRAME = none */
	uint8_t *huge;		/* per 2 MiB range: enum range_backing */
	uint16_t *populated;	/* per 2 MiB range: pages backed */
	uint8_t *given_back;	/* per 2 MiB range: the guest discarded pages of it
				 * (balloon) and has not touched them all since */
	uint64_t *swapped;	/* bit per guest page: its contents are in the swap file */
	uint16_t *swapped_n;	/* per 2 MiB range: pages of it in the swap file */
	uint32_t *swap_out_s;	/* per 2 MiB range: when it last went out, s since create */
	uint8_t *referenced;	/* per 2 MiB range: RANGE_SEEN, RANGE_ARMED (swap.c's clock) */
	uint32_t *armed_at;	/* per 2 MiB range: when the clock armed it, ms since create */
	uint32_t *touched_at;	/* per 2 MiB range: vm_swap.touches at its last touch */
	uint8_t *active;	/* per 2 MiB range: turns of the hand it is passed by (refaulted) */
};

#define RANGE_SEEN	1	/* faulted in or written since the clock's hand passed */
#define RANGE_ARMED	2	/* write-protected by the clock: a write sets RANGE_SEEN */

#define VM_STALL_SAMPLES	65536

/*
 * A write-protect fault reaches us only when the fault thread reads its
 * message, later than the write itself; there is no timestamp in it. So a
 * stall is timed from the earliest moment the write can have happened:
 * after the fault thread last emptied the queue, and after the first
 * window opened since then (the page was writable before). That bound
 * makes each recorded stall at least as long as the real one, never
 * shorter. Each blocked thread sends one message, so a window has at most
 * one waiter per thread that touches guest RAM (vCPUs, devices): waiting[]
 * holds that many; the rest would be counted in stalls_unrecorded.
 */
#define VM_MAX_WAITERS	(VM_MAX_CPUS + 16)

struct vm_migration {
	pthread_mutex_t lock;	/* all below; the fault thread takes it */
	uint64_t start, len;	/* host range write-protected now, len 0: none */
	uint64_t first_open_ns;	/* first window opened since the queue was emptied */
	uint64_t drained_ns;	/* when the fault thread last emptied its queue */
	uint64_t released_ns;	/* when the last window closed (its writers woken) */
	uint64_t waiting[VM_MAX_WAITERS];	/* earliest fault time of each waiter */
	unsigned int nr_waiting;
	uint64_t stall_ns[VM_STALL_SAMPLES];	/* ring of recent stalls */
	uint64_t nr_stalls;
	uint64_t stalls_unrecorded;	/* waiters beyond waiting[] */
	bool wp_supported;
	bool unsafe_no_wp;	/* copy + remap only: to measure what WP saves */
	uint32_t hold_us;	/* tests: hold each window until a write waits, or this long */
};

struct vm_migstats {
	uint64_t pages;		/* 4 KiB pages moved live */
	uint64_t bytes;
	uint64_t fail_busy;	/* pinned or part of a 2 MiB backing */
	uint64_t fail_gone;	/* the page changed hands meanwhile */
	uint64_t fail_other;
	uint64_t ranges_assembled;
	uint64_t ranges_onto_huge;	/* of which onto a pool block already a host huge page */
	uint64_t ranges_split;
	uint64_t assemble_fail_nomem;	/* no free 2 MiB block to be had */
	uint64_t assemble_fail_busy;
	uint64_t collapse_fail;		/* MADV_COLLAPSE refused */
	int collapse_errno;		/* why, the last time it was */
	uint64_t range_ns_max;		/* longest 2 MiB assembly */
	uint64_t free_errors;		/* frames the pool refused back: a bug */
};

#define NIL_FRAME	UINT32_MAX

/* Guest RAM handed back by the guest (balloon, free page reporting): gmem_discard. */
struct vm_discard_stats {
	uint64_t calls;
	uint64_t bytes;		/* frames returned to the pool, in bytes */
	uint64_t blocks;	/* of those, whole 2 MiB blocks freed at once */
	uint64_t failed;	/* discards refused or cut short (not whole pages, pinned, no mapping) */
	uint64_t strays;	/* pages written while being given back, taken into the pool */
	uint64_t strays_dropped; /* such pages dropped: reading zero, or no frame for them */
};

/*
 * Guest RAM swapped out (swap.c): the VM's swap file, the second
 * userfaultfd that ranges swapped out are registered with, and counts.
 * Counts change under mem_lock and are read atomically.
 */
struct vm_swap {
	int fd;			/* unlinked swap file, -1: swap off */
	int uffd;		/* ranges swapped out fault here */
	int pipe[2];		/* its faults, passed on to the fault thread */
	int stop;		/* eventfd that ends the swap thread */
	pthread_t thread;
	bool running;
	bool opened;		/* swap_init ran: the descriptors are ours (-1 or open) */
	uint64_t hand;		/* the reclaim clock: next 2 MiB range it looks at */
	uint32_t touches;	/* ranges touched so far: the order of the last touches */
	uint32_t aged_ms;	/* when __swap_age last moved the hand, ms since create */
	uint64_t out_ranges;	/* 2 MiB ranges written out */
	uint64_t out_pages;	/* pages written out */
	uint64_t zero_pages;	/* of those, all zeros: a hole in the file, no write */
	uint64_t armed;		/* ranges the clock write-protected to see writes */
	uint64_t sample_hits;	/* of those, written before the hand came back: hot */
	uint64_t out_blocks;	/* of the ranges, backed by one 2 MiB block: a pageblock freed whole */
	uint64_t lumpy_pages;	/* pages the pool's lumpy reclaim took, one by one, to free a pageblock */
	uint64_t lumpy_declined;	/* pages it asked for that looked in use (it moved them instead) */
	uint64_t in_pages;	/* pages read back */
	uint64_t in_ranges;	/* ranges read back whole into one 2 MiB block */
	uint64_t refaults;	/* pages read back within 10 s of going out */
	uint64_t pages_now;	/* pages in the file now */
	uint64_t reclaim_failed;	/* reclaims that found nothing to write out */
	uint64_t background;	/* ranges sent out by pressure_balance, not by a fault */
	uint64_t waits;		/* 20 ms waits of a fault for others to give memory back */
	uint64_t errors;	/* swap file reads or writes that failed */
	uint64_t out_ns;	/* host time sending ranges out (write-protect to remap) */
	uint64_t in_ns;		/* host time reading pages and ranges back */
};

/*
 * The pool's watermarks at work in this VM (pressure.c): the assembler's
 * thread alone writes them; counts are read atomically.
 */
struct vm_pressure {
	uint64_t balance_ns;	/* when pressure_balance last looked */
	uint64_t asked_ns;	/* when it last asked the balloon for more */
	uint64_t taken_bytes;	/* balloon target pressure holds back now */
	uint64_t balloon_steps;	/* times it asked the balloon for more */
	uint64_t balloon_relaxes;	/* times it gave some back */
};

struct vcpu;
struct vm;

typedef void (*vm_console_fn)(void *opaque, const char *buf, size_t len);
typedef int (*vm_checkpoint_fn)(struct vm *vm, uint32_t n, void *opaque);
typedef void (*vm_end_fn)(struct vm *vm, void *opaque);

struct vm_stats {
	uint64_t populated_pages;
	uint64_t demand_faults;		/* resolved through userfaultfd */
	uint64_t fault_ns;		/* host time spent resolving them */
	uint64_t prefault_ns;
	uint64_t create_ns;		/* vm_create start, CLOCK_MONOTONIC */
	uint64_t first_exit_ns;		/* first exit of any vCPU */
	uint64_t exits;
	uint64_t huge_first;		/* 2 MiB ranges backed whole by their first fault */
	uint64_t huge_first_fallback;	/* first faults that wanted a block and got 4 KiB */
	uint64_t huge_first_kernel_zeroed;	/* of those, zero already (no host memory before) */
	uint64_t zero_ns;		/* host time zeroing those blocks */
};

struct vm {
	struct vm_config cfg;
	struct pool *pool;
	uint64_t admitted;	/* RAM the pool promised this VM (pool_admit) */
	uint32_t owner;			/* owner cookie in the pool */
	int fd;
	struct vm_region regions[VM_MAX_REGIONS];
	unsigned int nr_regions;
	struct vcpu *vcpus;
	unsigned int nr_vcpus;
	/*
	 * The VM's per-thread list: every frame of its RAM comes through it,
	 * always under mem_lock, so one thread at a time uses it (mm.h's
	 * rule), whichever that is: the fault thread, a device, prefault.
	 */
	struct mm_pcp *mem_pcp;
	pthread_mutex_t mem_lock;	/* backing map and mappings */

	struct machine mach;		/* what its devices see of it (vm_machine.c) */
	struct boot_entry boot;		/* how the vCPUs start (the loader's) */

	int uffd;
	int uffd_stop;			/* eventfd that ends the fault thread */
	pthread_t uffd_thread;
	bool uffd_running;

	pthread_mutex_t lock;		/* state, pause protocol */
	pthread_cond_t cond;
	enum vm_state state;
	bool stopping;			/* set under lock; read anywhere: vm_is_stopping */
	unsigned int pause_req;		/* > 0: vCPUs must park */
	unsigned int parked;		/* vCPUs parked for a pause */
	unsigned int running_vcpus;	/* threads still in their loop */
	int exit_code;
	char report[4096];

	vm_console_fn console;
	void *console_opaque;
	bool reboot;			/* the guest asked for a reset: run it again */
	bool seccomp;			/* vCPU threads filter their syscalls (sandbox.h) */
	vm_checkpoint_fn checkpoint;
	void *checkpoint_opaque;
	vm_end_fn on_end;
	void *on_end_opaque;

	struct vm_stats stats;
	struct vm_migration mig;
	struct vm_migstats migstats;
	struct vm_discard_stats discard;	/* under mem_lock; read atomically */
	struct vm_swap swap;
	struct vm_pressure pressure;
	uint64_t assemble_budget_ns;	/* rate limit bookkeeping */
};

/* Errors come back as -errno with a sentence in @err. */
__must_check int vm_create(const struct vm_config *cfg, struct pool *pool,
	      struct vm **out, char *err, size_t errlen);
__must_check int vm_start(struct vm *vm);
/* The same, but paused: nothing runs until vm_resume (QEMU's -S). */
__must_check int vm_start_paused(struct vm *vm);
/* Ask every vCPU to stop; the VM ends with @state and @code. */
void vm_request_stop(struct vm *vm, enum vm_state state, int code);
void vm_fail(struct vm *vm, struct vcpu *vcpu, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Wait for every vCPU thread to leave; returns the exit code. */
int vm_wait(struct vm *vm);
void vm_destroy(struct vm *vm);

/* Pause and resume from any thread; @self is the calling vCPU or NULL. */
__must_check int vm_pause(struct vm *vm, struct vcpu *self);
__must_check int vm_resume(struct vm *vm, struct vcpu *self);
enum vm_state vm_get_state(struct vm *vm);
const char *vm_state_name(enum vm_state state);

void vm_console_write(struct vm *vm, const char *buf, size_t len);
/* The guest powered off (@reboot false) or reset itself (true). */
void vm_guest_power(struct vm *vm, bool reboot);

/*
 * Drive interrupt line @gsi of the in-kernel IOAPIC (and PIC below 16).
 * Level-triggered devices hold it while they have something pending.
 */
__must_check int vm_irq_line(struct vm *vm, unsigned int gsi, bool level);

uint64_t vm_now_ns(void);
/*
 * The rate of the guest's TSC in kHz (KVM_GET_TSC_KHZ on its first vCPU),
 * for turning a time the guest took itself into seconds; -errno when KVM
 * cannot say.
 */
__must_check long vm_guest_tsc_khz(struct vm *vm);

/* The VM whose devices see @m (vm->mach). */
static inline struct vm *vm_of_machine(struct machine *m)
{
	return (struct vm *)((char *)m - offsetof(struct vm, mach));
}

/* Make vm->mach what the devices of @vm see (vm_machine.c). */
void vm_machine_init(struct vm *vm);

/* A stop was requested; for threads that do not hold vm->lock. */
static inline bool vm_is_stopping(struct vm *vm)
{
	return __atomic_load_n(&vm->stopping, __ATOMIC_ACQUIRE);
}

#endif
