/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host taps for virtio-net, attached by name before the VMM enters its
 * sandbox: afterwards neither /dev/net/tun nor TUNSETIFF is within its
 * reach, so a VMM taken over by its guest cannot attach to another tap.
 */
#ifndef GPMM_TAP_H
#define GPMM_TAP_H

#include <stddef.h>

#include "vmm/core/compiler.h"

struct vm_config;

/*
 * Each interface of @cfg named by tap=NAME gets its descriptor (fd), with
 * a virtio header (IFF_VNET_HDR) unless its offloads are off. 0, or a
 * negative errno with what failed (and what to do) in @err.
 */
__must_check int tap_attach_all(struct vm_config *cfg, char *err, size_t errlen);

#endif
