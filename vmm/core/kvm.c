// SPDX-License-Identifier: GPL-2.0
/* /dev/kvm (kvm.h): opened once per process, its capabilities as a table. */
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "vmm/core/kvm.h"

#define CPUID_ENTRIES	256

static pthread_once_t kvm_once = PTHREAD_ONCE_INIT;
static int kvm_dev = -ENOENT;
static int vcpu_mmap_size;
static struct kvm_cpuid2 *cpuid;
static char why[160];

static int kvm_check_caps(int fd)
{
	static const struct { int cap; const char *name; } needed[] = {
		{ KVM_CAP_USER_MEMORY, "USER_MEMORY" },
		{ KVM_CAP_IRQCHIP, "IRQCHIP" },
		{ KVM_CAP_PIT2, "PIT2" },
		{ KVM_CAP_IMMEDIATE_EXIT, "IMMEDIATE_EXIT" },
		{ KVM_CAP_SYNC_MMU, "SYNC_MMU" },
	};

	for (size_t i = 0; i < sizeof(needed) / sizeof(needed[0]); i++) {
		if (ioctl(fd, KVM_CHECK_EXTENSION, needed[i].cap) <= 0) {
			snprintf(why, sizeof(why), "KVM lacks KVM_CAP_%s",
				 needed[i].name);
			return -ENOTSUP;
		}
	}
	return 0;
}

static void kvm_open_once(void)
{
	int fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		kvm_dev = -errno;
		snprintf(why, sizeof(why), "/dev/kvm: %s", strerror(errno));
		return;
	}
	if (ioctl(fd, KVM_GET_API_VERSION, 0) != KVM_API_VERSION) {
		snprintf(why, sizeof(why), "/dev/kvm speaks an API other than %d",
			 KVM_API_VERSION);
		kvm_dev = -ENOTSUP;
		goto fail;
	}
	kvm_dev = kvm_check_caps(fd);
	if (kvm_dev)
		goto fail;
	vcpu_mmap_size = ioctl(fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	cpuid = calloc(1, sizeof(*cpuid) + CPUID_ENTRIES * sizeof(cpuid->entries[0]));
	if (vcpu_mmap_size <= 0 || !cpuid) {
		kvm_dev = -ENOMEM;
		goto fail;
	}
	cpuid->nent = CPUID_ENTRIES;
	if (ioctl(fd, KVM_GET_SUPPORTED_CPUID, cpuid) < 0) {
		kvm_dev = -errno;
		snprintf(why, sizeof(why), "KVM_GET_SUPPORTED_CPUID: %s",
			 strerror(errno));
		goto fail;
	}
	kvm_dev = fd;
	return;
fail:
	close(fd);
}

int kvm_fd(void)
{
	pthread_once(&kvm_once, kvm_open_once);
	return kvm_dev;
}

const char *kvm_unavailable(void)
{
	return kvm_fd() < 0 ? why : NULL;
}

int kvm_vcpu_mmap_size(void)
{
	return kvm_fd() < 0 ? kvm_fd() : vcpu_mmap_size;
}

const struct kvm_cpuid2 *kvm_supported_cpuid(void)
{
	return kvm_fd() < 0 ? NULL : cpuid;
}
