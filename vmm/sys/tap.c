// SPDX-License-Identifier: GPL-2.0
/*
 * Attaching a VM's named taps (vmm/sys/tap.h). The device model
 * (devices/virtio/virtio_net.c) takes the descriptor as it takes one from
 * libvirt, so both paths meet in one place.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "vmm/core/vm.h"
#include "vmm/sys/tap.h"

static int tap_open(const struct machine_net *net, char *err, size_t errlen)
{
	struct ifreq ifr = { 0 };
	int fd, ret;

	fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "net tap=%s: cannot open /dev/net/tun: %s%s", net->tap,
			 strerror(-ret), ret == -ENOENT ? " (load the tun module)" : "");
		return ret;
	}
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", net->tap);
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI | (net->offload ? IFF_VNET_HDR : 0);
	if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
		ret = -errno;
		close(fd);
		snprintf(err, errlen, "net tap=%s: %s%s", net->tap, strerror(-ret),
			 ret == -EPERM ? " (make the tap for this user first: ip tuntap add NAME "
			 "mode tap user USER; or run gpmm as root)" :
			 ret == -EBUSY ? " (another process has it)" : "");
		return ret;
	}
	return fd;
}

int tap_attach_all(struct vm_config *cfg, char *err, size_t errlen)
{
	for (unsigned int i = 0; i < cfg->nr_net; i++) {
		struct machine_net *net = &cfg->net[i];
		int fd;

		if (!net->tap[0] || net->fd >= 0)
			continue;
		fd = tap_open(net, err, errlen);
		if (fd < 0)
			return fd;
		net->fd = fd;
	}
	return 0;
}
