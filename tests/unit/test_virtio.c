// SPDX-License-Identifier: GPL-2.0
/*
 * virtio devices through their MMIO window, in a VM without KVM or guest
 * RAM: what needs no ring (config space, register rules).
 */
#include <CUnit/CUnit.h>
#include <stdlib.h>
#include <string.h>

#include "devices/device.h"
#include "devices/virtio/virtio_abi.h"
#include "vmm/core/vm.h"
#include "tests/suite.h"

#define BALLOON_CFG	(VIRTIO_MMIO_BASE + VIRTIO_MMIO_CONFIG)

static uint32_t read_actual(struct vm *vm)
{
	uint32_t v = 0;

	CU_ASSERT_EQUAL(dev_mmio(vm, NULL, BALLOON_CFG + VIRTIO_BALLOON_CFG_ACTUAL,
				 (uint8_t *)&v, 4, false), 0);
	return v;
}

static void write_cfg(struct vm *vm, uint32_t off, uint32_t val, unsigned int len)
{
	CU_ASSERT_EQUAL(dev_mmio(vm, NULL, BALLOON_CFG + off, (uint8_t *)&val, len, true), 0);
}

/*
 * The driver may write `actual` a byte or a half at a time. A write at
 * offset 5 put its pointer past the 4-byte staging copy before taking
 * the offset of `actual` off again: undefined behaviour that UBSan
 * reported (found by the virtio fuzz target; SANITIZE=1 runs this test
 * under UBSan).
 */
static void test_balloon_actual_bytes(void)
{
	struct vm *vm = calloc(1, sizeof(*vm));
	void *priv = NULL;

	CU_ASSERT_PTR_NOT_NULL_FATAL(vm);
	vm->cfg.balloon = true;
	CU_ASSERT_EQUAL_FATAL(virtio_balloon_device.init(vm, &priv), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(priv);
	for (uint32_t i = 0; i < 4; i++)
		write_cfg(vm, VIRTIO_BALLOON_CFG_ACTUAL + i, 0x11 * (i + 1), 1);
	CU_ASSERT_EQUAL(read_actual(vm), 0x44332211);
	write_cfg(vm, VIRTIO_BALLOON_CFG_ACTUAL + 2, 0xbeef, 2);
	CU_ASSERT_EQUAL(read_actual(vm), 0xbeef2211);
	/* num_pages is the host's: a write reaching into it changes nothing */
	write_cfg(vm, VIRTIO_BALLOON_CFG_ACTUAL - 1, 0xffff, 2);
	CU_ASSERT_EQUAL(read_actual(vm), 0xbeef2211);
	virtio_balloon_device.exit(vm, priv);
	free(vm);
}

static const struct suite_test tests[] = {
	{ "balloon: actual written a byte at a time", test_balloon_actual_bytes },
};

int register_virtio_suite(void)
{
	return SUITE("virtio", tests);
}
