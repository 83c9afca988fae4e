/* SPDX-License-Identifier: GPL-2.0 */
/* /dev/kvm, opened once per process, and what it tells about itself. */
#ifndef GPMM_KVM_H
#define GPMM_KVM_H

#include <stddef.h>

struct kvm_cpuid2;

/* The /dev/kvm fd, or -errno (-ENOENT where there is no KVM). */
int kvm_fd(void);
/* A one-line reason when KVM is not usable, NULL when it is. */
const char *kvm_unavailable(void);
int kvm_vcpu_mmap_size(void);
/* The host's supported CPUID, shared; do not free. */
const struct kvm_cpuid2 *kvm_supported_cpuid(void);

#endif
