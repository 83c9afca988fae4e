/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A KVM virtual machine whose guest RAM comes from the pool 4 KiB at a
 * time. Lifecycle: vm_create (memory, devices, payload, vCPUs) ->
 * vm_start (vCPU threads run) -> ... -> vm_end_wait / vm_destroy.
 */
#ifndef GPMM_VM_H
#define GPMM_VM_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "devices/device.h"
#include "vmm/pool.h"

#define VM_NAME_MAX		64
#define VM_MAX_CPUS		32
#define VM_MAX_REGIONS		2
#define VM_PCI_HOLE_START	0xc0000000ULL	/* 3 GiB */
#define VM_HIGH_RAM_START	0x100000000ULL	/* 4 GiB */
#define VM_MAX_RAM		(64ULL << 30)
#define VM_FAIL_EXIT_CODE	255	/* `gpmm run` status of a failed VM */

struct vm_config {
	char name[VM_NAME_MAX];
	uint64_t ram_bytes;
	unsigned int cpus;
	char kernel[PATH_MAX];
	uint64_t pool_bytes;	/* for a `gpmm run` that makes its own pool */
	bool prefault;
	char qmp_path[108];	/* sun_path */
};

enum vm_state {
	VM_CREATED,
	VM_RUNNING,
	VM_PAUSED,
	VM_SHUTDOWN,		/* the guest asked to stop */
	VM_FAILED,		/* stopped by a fault, see vm->report */
};

struct vm_region {
	uint64_t gpa;
	uint64_t size;
	uint8_t *hva;		/* 2 MiB aligned window */
	uint32_t *backing;	/* frame per guest page, NIL_FRAME = none */
};

#define NIL_FRAME	UINT32_MAX

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
};

struct vm {
	struct vm_config cfg;
	struct pool *pool;
	uint32_t owner;			/* owner cookie in the pool */
	int fd;
	struct vm_region regions[VM_MAX_REGIONS];
	unsigned int nr_regions;
	struct vcpu *vcpus;
	unsigned int nr_vcpus;
	struct mm_pcp *mem_pcp;		/* for pages the VMM itself touches */
	pthread_mutex_t mem_lock;	/* backing map and mappings */

	struct device_bus bus;

	int uffd;
	int uffd_stop;			/* eventfd that ends the fault thread */
	pthread_t uffd_thread;
	bool uffd_running;

	pthread_mutex_t lock;		/* state, pause protocol */
	pthread_cond_t cond;
	enum vm_state state;
	bool stopping;
	unsigned int pause_req;		/* > 0: vCPUs must park */
	unsigned int parked;		/* vCPUs parked for a pause */
	unsigned int running_vcpus;	/* threads still in their loop */
	int exit_code;
	char report[4096];

	vm_console_fn console;
	void *console_opaque;
	vm_checkpoint_fn checkpoint;
	void *checkpoint_opaque;
	vm_end_fn on_end;
	void *on_end_opaque;

	struct vm_stats stats;
};

/* Errors come back as -errno with a sentence in @err. */
int vm_create(const struct vm_config *cfg, struct pool *pool, uint32_t owner,
	      struct vm **out, char *err, size_t errlen);
int vm_start(struct vm *vm);
/* Ask every vCPU to stop; the VM ends with @state and @code. */
void vm_request_stop(struct vm *vm, enum vm_state state, int code);
void vm_fail(struct vm *vm, struct vcpu *vcpu, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Wait for every vCPU thread to leave; returns the exit code. */
int vm_wait(struct vm *vm);
void vm_destroy(struct vm *vm);

/* Pause and resume from any thread; @self is the calling vCPU or NULL. */
int vm_pause(struct vm *vm, struct vcpu *self);
int vm_resume(struct vm *vm, struct vcpu *self);
enum vm_state vm_get_state(struct vm *vm);
const char *vm_state_name(enum vm_state state);

/*
 * Move the guest page at @gpa to @new_frame (allocated by the caller from
 * the VM's pool; the VM owns it from now on) and free the old frame. The
 * guest must be stopped: paused, or in a checkpoint hook.
 */
int vm_remap_page(struct vm *vm, uint64_t gpa, uint64_t new_frame);
/* Frame backing @gpa, or -ENOENT when not populated. */
long vm_gpa_to_frame(struct vm *vm, uint64_t gpa);

/* The one way the VMM and devices touch guest memory: bounds-checked. */
void *vm_guest_ptr(struct vm *vm, uint64_t gpa, uint64_t len);
int vm_read_guest(struct vm *vm, uint64_t gpa, void *buf, uint64_t len);
int vm_write_guest(struct vm *vm, uint64_t gpa, const void *buf, uint64_t len);

void vm_console_write(struct vm *vm, const char *buf, size_t len);

uint64_t vm_now_ns(void);

#endif
