/* SPDX-License-Identifier: GPL-2.0 */
/* One vCPU: its KVM fd, its thread and run loop. */
#ifndef GPMM_VCPU_H
#define GPMM_VCPU_H

#include "vmm/core/compiler.h"

#include <pthread.h>
#include <stdbool.h>
#include <sys/types.h>

struct vm;
struct kvm_run;

struct vcpu {
	struct vm *vm;
	unsigned int index;
	int fd;
	struct kvm_run *run;
	int run_size;
	pthread_t thread;
	pid_t tid;		/* the thread's id, for QMP (set once it runs) */
	bool started;
};

__must_check int vcpu_init(struct vm *vm, struct vcpu *vcpu, unsigned int index);
void vcpu_exit(struct vcpu *vcpu);
__must_check int vcpu_start(struct vcpu *vcpu);
/* Make the vCPU leave KVM_RUN soon (signal + immediate_exit). */
void vcpu_kick(struct vcpu *vcpu);
/* Append the vCPU's registers to @buf. */
void vcpu_dump(struct vcpu *vcpu, char *buf, size_t len);
/* Set up the flat payload's entry state (DESIGN.md boot protocol). */
__must_check int vcpu_setup_boot(struct vcpu *vcpu);
/* Process-wide: the kick signal's (empty) handler. */
void vcpu_install_kick_signal(void);

#endif
