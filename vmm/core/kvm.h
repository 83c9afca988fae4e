/* SPDX-License-Identifier: GPL-2.0 */
/* /dev/kvm, opened once per process, and what it tells about itself. */
#ifndef GPMM_KVM_H
#define GPMM_KVM_H

#include <errno.h>
#include <stddef.h>
#include <sys/ioctl.h>

#include "mm/mm.h"

struct kvm_cpuid2;

/* The /dev/kvm fd, or -errno (-ENOENT where there is no KVM). */
int kvm_fd(void);
/* A one-line reason when KVM is not usable, NULL when it is. */
const char *kvm_unavailable(void);
int kvm_vcpu_mmap_size(void);

/* A KVM ioctl, one of fault injection's sites (mm.h). */
#define kvm_ioctl(fd, req, ...) \
	MM_FAULT_OR(MM_FAULT_KVM, -1, ioctl((fd), (req), __VA_ARGS__))
/* The host's supported CPUID, shared; do not free. */
const struct kvm_cpuid2 *kvm_supported_cpuid(void);

#endif
