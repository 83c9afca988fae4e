// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel loaders: what they refuse before touching guest memory, so a VM
 * without RAM (no KVM needed) is enough to see the refusal.
 */
#define _GNU_SOURCE
#include <CUnit/CUnit.h>
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vmm/boot/boot.h"
#include "vmm/core/vm.h"
#include "tests/suite.h"

#define PVH_NOTE_TYPE	18	/* XEN_ELFNOTE_PHYS32_ENTRY */

/* A vmlinux in miniature: one 4 KiB segment at 1 MiB and the PVH note. */
static int pvh_kernel(uint32_t entry)
{
	struct {
		Elf64_Ehdr eh;
		Elf64_Phdr ph[2];
		Elf64_Nhdr nh;
		char name[4];
		uint32_t desc;
	} __attribute__((packed)) k = {
		.eh = {
			.e_ident = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64,
				     ELFDATA2LSB, EV_CURRENT },
			.e_type = ET_EXEC, .e_machine = EM_X86_64, .e_version = EV_CURRENT,
			.e_phoff = sizeof(Elf64_Ehdr), .e_ehsize = sizeof(Elf64_Ehdr),
			.e_phentsize = sizeof(Elf64_Phdr), .e_phnum = 2,
		},
		.ph = {
			{ .p_type = PT_LOAD, .p_offset = 0, .p_paddr = 0x100000,
			  .p_filesz = 0x1000, .p_memsz = 0x1000 },
			{ .p_type = PT_NOTE, .p_offset = offsetof(typeof(k), nh),
			  .p_filesz = sizeof(Elf64_Nhdr) + 8, .p_memsz = sizeof(Elf64_Nhdr) + 8 },
		},
		.nh = { .n_namesz = 4, .n_descsz = 4, .n_type = PVH_NOTE_TYPE },
		.name = "Xen",
		.desc = entry,
	};
	int fd = memfd_create("pvh", MFD_CLOEXEC);

	if (fd < 0 || write(fd, &k, sizeof(k)) != sizeof(k) || ftruncate(fd, 0x1000)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/*
 * Found by the bzimage fuzz target: the note's entry was taken as it was,
 * so a kernel file naming an address outside everything it loads started a
 * VM there instead of being refused with a reason.
 */
static void test_pvh_entry_outside(void)
{
	struct vm *vm = calloc(1, sizeof(*vm));
	char err[256] = "";
	int fd = pvh_kernel(0xefef0000);

	CU_ASSERT_PTR_NOT_NULL_FATAL(vm);
	CU_ASSERT_FATAL(fd >= 0);
	strcpy(vm->cfg.kernel, "entry-outside");
	CU_ASSERT_EQUAL(boot_load_pvh(vm, fd, err, sizeof(err)), -ENOEXEC);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "PVH entry 0xefef0000"));
	close(fd);

	/* the control: an entry inside the segment gets past that check */
	fd = pvh_kernel(0x100010);
	CU_ASSERT_FATAL(fd >= 0);
	err[0] = '\0';
	CU_ASSERT_NOT_EQUAL(boot_load_pvh(vm, fd, err, sizeof(err)), 0);	/* no RAM */
	CU_ASSERT_PTR_NULL(strstr(err, "PVH entry"));
	close(fd);
	free(vm);
}

static const struct suite_test tests[] = {
	{ "a PVH entry outside the loaded segments", test_pvh_entry_outside },
};

int register_boot_suite(void)
{
	return SUITE("boot", tests);
}
