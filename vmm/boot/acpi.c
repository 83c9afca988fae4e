// SPDX-License-Identifier: GPL-2.0
/*
 * ACPI tables for Linux guests: RSDP, XSDT, FADT, MADT and a DSDT.
 *
 * Why ACPI and not an MP table plus a command line: Debian's stock kernel
 * cannot be told about virtio-mmio devices on its command line
 * (CONFIG_VIRTIO_MMIO_CMDLINE_DEVICES is off), but it binds them from the
 * DSDT (_HID "LNRO0005"); and without ACPI an x86 Linux has no way to
 * power off at all. The platform is "hardware-reduced" ACPI: no PM1
 * blocks, no SCI, no PM timer to emulate; power-off is one write to the
 * sleep control register with the sleep type of \_S5, reset one write to
 * the reset register (devices/legacy/power.c). The MADT lists one local APIC per
 * vCPU and KVM's in-kernel IOAPIC, which is how `--cpus N` becomes N CPUs.
 *
 * The tables live in the BIOS area below 1 MiB, which the e820 map marks
 * reserved, where Linux also finds the RSDP by scanning if the boot
 * parameters do not name it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "devices/legacy/power.h"
#include "vmm/boot/acpi.h"
#include "vmm/memory/guest_mem.h"
#include "vmm/core/vm.h"

#define LAPIC_BASE		0xfee00000U
#define IOAPIC_BASE		0xfec00000U
#define ACPI_COM1_PORT		0x3f8
#define ACPI_COM1_GSI		4
#define ACPI_OEM_ID		"GPMM  "
#define ACPI_OEM_TABLE		"GPMMVM  "

#define FADT_HW_REDUCED		(1U << 20)
#define FADT_RESET_REG_SUP	(1U << 10)
#define FADT_PWR_BUTTON		(1U << 4)	/* no fixed power button */
#define FADT_SLP_BUTTON		(1U << 5)
#define BOOT_ARCH_NO_VGA	(1U << 2)
#define BOOT_ARCH_NO_CMOS_RTC	(1U << 5)

/* A growing table in a fixed buffer; overflow is remembered, not written. */
struct tbuf {
	uint8_t *p;
	size_t len, cap;
	bool overflow;
};

static void put(struct tbuf *b, const void *data, size_t n)
{
	if (b->len + n > b->cap) {
		b->overflow = true;
		return;
	}
	memcpy(b->p + b->len, data, n);
	b->len += n;
}

static void put8(struct tbuf *b, uint8_t v) { put(b, &v, 1); }
static void put16(struct tbuf *b, uint16_t v) { put(b, &v, 2); }
static void put32(struct tbuf *b, uint32_t v) { put(b, &v, 4); }
static void put64(struct tbuf *b, uint64_t v) { put(b, &v, 8); }

static uint8_t checksum(const uint8_t *p, size_t n)
{
	uint8_t sum = 0;

	while (n--)
		sum += *p++;
	return (uint8_t)-sum;
}

/* Every SDT starts alike; the length and checksum are filled in by sdt_end. */
static size_t sdt_begin(struct tbuf *b, const char *sig, uint8_t rev)
{
	size_t start = b->len;

	put(b, sig, 4);
	put32(b, 0);
	put8(b, rev);
	put8(b, 0);
	put(b, ACPI_OEM_ID, 6);
	put(b, ACPI_OEM_TABLE, 8);
	put32(b, 1);
	put(b, "GPMM", 4);
	put32(b, 1);
	return start;
}

static void sdt_end(struct tbuf *b, size_t start)
{
	uint32_t len = (uint32_t)(b->len - start);

	if (b->overflow)
		return;
	memcpy(b->p + start + 4, &len, 4);
	b->p[start + 9] = checksum(b->p + start, len);
}

static void align16(struct tbuf *b)
{
	while (b->len % 16 && !b->overflow)
		put8(b, 0);
}

/* Generic address structure: one byte-wide I/O port. */
static void put_gas_io8(struct tbuf *b, uint16_t port)
{
	put8(b, 1);		/* system I/O */
	put8(b, 8);		/* bit width */
	put8(b, 0);		/* bit offset */
	put8(b, 1);		/* byte access */
	put64(b, port);
}

static void put_gas_none(struct tbuf *b)
{
	put32(b, 0);
	put64(b, 0);
}

/* --- AML, the little of it the DSDT needs --- */

#define AML_ZERO	0x00
#define AML_BYTE	0x0a
#define AML_WORD	0x0b
#define AML_DWORD	0x0c
#define AML_STRING	0x0d
#define AML_NAME	0x08
#define AML_SCOPE	0x10
#define AML_BUFFER	0x11
#define AML_PACKAGE	0x12
#define AML_EXT		0x5b
#define AML_DEVICE	0x82

/* PkgLength counts its own bytes: 1 up to 63, else 2 or 3 (ACPI 20.2.4). */
static void aml_pkglen(struct tbuf *b, size_t body)
{
	size_t total;

	if (body + 1 <= 0x3f) {
		put8(b, (uint8_t)(body + 1));
	} else if (body + 2 <= 0xfff) {
		total = body + 2;
		put8(b, (uint8_t)(0x40 | (total & 0xf)));
		put8(b, (uint8_t)(total >> 4));
	} else {
		total = body + 3;
		put8(b, (uint8_t)(0x80 | (total & 0xf)));
		put8(b, (uint8_t)(total >> 4));
		put8(b, (uint8_t)(total >> 12));
	}
}

static void aml_int(struct tbuf *b, uint32_t v)
{
	if (v <= 1) {
		put8(b, (uint8_t)v);	/* ZeroOp, OneOp */
	} else if (v <= 0xff) {
		put8(b, AML_BYTE);
		put8(b, (uint8_t)v);
	} else if (v <= 0xffff) {
		put8(b, AML_WORD);
		put16(b, (uint16_t)v);
	} else {
		put8(b, AML_DWORD);
		put32(b, v);
	}
}

static void aml_name_string(struct tbuf *b, const char *name, const char *s)
{
	put8(b, AML_NAME);
	put(b, name, 4);
	put8(b, AML_STRING);
	put(b, s, strlen(s) + 1);
}

static void aml_name_int(struct tbuf *b, const char *name, uint32_t v)
{
	put8(b, AML_NAME);
	put(b, name, 4);
	aml_int(b, v);
}

/* Resource descriptors (ACPI 6.4.2, 6.4.3) for a _CRS buffer */
static void res_mem32(struct tbuf *r, uint32_t base, uint32_t len)
{
	put8(r, 0x86);		/* Memory32Fixed */
	put16(r, 9);
	put8(r, 1);		/* read-write */
	put32(r, base);
	put32(r, len);
}

static void res_io(struct tbuf *r, uint16_t base, uint8_t len)
{
	put8(r, 0x47);		/* I/O port, 16-bit decode */
	put8(r, 1);
	put16(r, base);
	put16(r, base);
	put8(r, 1);
	put8(r, len);
}

static void res_irq(struct tbuf *r, uint32_t gsi, bool edge)
{
	put8(r, 0x89);		/* Extended Interrupt */
	put16(r, 6);
	put8(r, edge ? 0x03 : 0x01);	/* consumer, edge or level, active high */
	put8(r, 1);
	put32(r, gsi);
}

/* Name(_CRS, ResourceTemplate() { @res..., EndTag }) */
static void aml_crs(struct tbuf *b, struct tbuf *r)
{
	uint8_t body_mem[64];
	struct tbuf body = { body_mem, 0, sizeof(body_mem) };

	put8(r, 0x79);		/* end tag, checksum 0: "valid" */
	put8(r, 0);
	aml_int(&body, (uint32_t)r->len);
	put(&body, r->p, r->len);
	if (r->overflow || body.overflow) {
		b->overflow = true;
		return;
	}
	put8(b, AML_NAME);
	put(b, "_CRS", 4);
	put8(b, AML_BUFFER);
	aml_pkglen(b, body.len);
	put(b, body_mem, body.len);
}

/* Device(@name) { _HID, _UID, _CRS, then @more (methods), if any } */
static void aml_device(struct tbuf *b, const char *name, const char *hid,
		       unsigned int uid, struct tbuf *res, const struct tbuf *more)
{
	uint8_t body_mem[128];
	struct tbuf body = { body_mem, 0, sizeof(body_mem) };

	aml_name_string(&body, "_HID", hid);
	aml_name_int(&body, "_UID", uid);
	aml_crs(&body, res);
	if (more)
		put(&body, more->p, more->len);
	if (body.overflow) {
		b->overflow = true;
		return;
	}
	put8(b, AML_EXT);
	put8(b, AML_DEVICE);
	aml_pkglen(b, 4 + body.len);
	put(b, name, 4);
	put(b, body_mem, body.len);
}

/*
 * Hardware-reduced ACPI has no legacy PIC, so Linux maps no ISA IRQ by
 * itself: COM1 has to be a device here too, or its IRQ 4 never reaches
 * the driver and the console works only as long as it is polled.
 */
static void aml_com1(struct tbuf *b)
{
	uint8_t res_mem[32];
	struct tbuf res = { res_mem, 0, sizeof(res_mem) };

	res_io(&res, ACPI_COM1_PORT, 8);
	res_irq(&res, ACPI_COM1_GSI, true);
	aml_device(b, "COM1", "PNP0501", 0, &res, NULL);
}

static void aml_announced(struct tbuf *b, unsigned int i, const struct dev_acpi *d)
{
	uint8_t res_mem[32];
	struct tbuf res = { res_mem, 0, sizeof(res_mem) };
	char name[5];

	snprintf(name, sizeof(name), "V%03u", i % 1000);
	res_mem32(&res, (uint32_t)d->base, d->len);
	res_irq(&res, d->gsi, false);
	aml_device(b, name, d->hid, i, &res, NULL);
}

/*
 * The power button, for a host that asks the guest to power off (QMP
 * system_powerdown, libvirt's `virsh shutdown`). Hardware-reduced ACPI has
 * no fixed power button and no SCI, so it is a control-method button
 * (PNP0C0C) behind a Generic Event Device (ACPI0013): the host pulses the
 * GED's interrupt, Linux runs its _EVT, which notifies the button (0x80,
 * "pressed"), and the guest's button driver reports KEY_POWER to whoever
 * acts on it (the Linux guest's acpid: guests/linux/rcS).
 */
static void aml_power_button(struct tbuf *b)
{
	static const uint8_t evt[] = {
		0x14, 0x13, '_', 'E', 'V', 'T', 0x01,	/* Method(_EVT, 1) */
		0x86, '\\', 0x2e, '_', 'S', 'B', '_', 'P', 'W', 'R', 'B',
		AML_BYTE, 0x80,			/* Notify(\_SB_.PWRB, 0x80) */
	};
	uint8_t res_mem[32], none_mem[4];
	struct tbuf res = { res_mem, 0, sizeof(res_mem) };
	struct tbuf none = { none_mem, 0, sizeof(none_mem) };
	const struct tbuf method = { (uint8_t *)evt, sizeof(evt), sizeof(evt), false };

	aml_device(b, "PWRB", "PNP0C0C", 0, &none, NULL);
	res_irq(&res, PM_GED_GSI, true);
	aml_device(b, "GED_", "ACPI0013", 0, &res, &method);
}

static void build_dsdt(struct tbuf *b, const struct vm *vm)
{
	uint8_t scope_mem[2048];
	struct tbuf scope = { scope_mem, 0, sizeof(scope_mem) };
	size_t start = sdt_begin(b, "DSDT", 2);

	aml_com1(&scope);
	aml_power_button(&scope);
	for (unsigned int i = 0; i < vm->mach.bus.nr_acpi; i++)
		aml_announced(&scope, i, &vm->mach.bus.acpi[i]);
	if (scope.overflow)
		b->overflow = true;
	put8(b, AML_SCOPE);
	aml_pkglen(b, 5 + scope.len);
	put(b, "\\_SB_", 5);
	put(b, scope_mem, scope.len);

	/* Name(_S5_, Package(4) { PM_S5_SLP_TYP, 0, 0, 0 }) */
	put8(b, AML_NAME);
	put(b, "_S5_", 4);
	put8(b, AML_PACKAGE);
	aml_pkglen(b, 1 + 2 + 3);
	put8(b, 4);
	aml_int(b, PM_S5_SLP_TYP);
	put8(b, AML_ZERO);
	put8(b, AML_ZERO);
	put8(b, AML_ZERO);
	sdt_end(b, start);
}

static void build_fadt(struct tbuf *b, uint64_t dsdt)
{
	size_t start = sdt_begin(b, "FACP", 6);
	uint8_t zeros[109 - 44] = { 0 };

	put32(b, 0);			/* FIRMWARE_CTRL */
	put32(b, (uint32_t)dsdt);
	put(b, zeros, 109 - 44);	/* legacy PM fields: none here */
	put16(b, BOOT_ARCH_NO_VGA | BOOT_ARCH_NO_CMOS_RTC);
	put8(b, 0);
	put32(b, FADT_HW_REDUCED | FADT_RESET_REG_SUP | FADT_PWR_BUTTON | FADT_SLP_BUTTON);
	put_gas_io8(b, PM_RESET_PORT);
	put8(b, PM_RESET_VALUE);
	put16(b, 0);			/* ARM_BOOT_ARCH */
	put8(b, 3);			/* FADT minor version: ACPI 6.3 */
	put64(b, 0);			/* X_FIRMWARE_CTRL */
	put64(b, dsdt);
	for (int i = 0; i < 8; i++)	/* X_PM1a_EVT .. X_GPE1: hardware-reduced */
		put_gas_none(b);
	put_gas_io8(b, PM_SLEEP_CTL_PORT);
	put_gas_io8(b, PM_SLEEP_STS_PORT);
	put64(b, 0);			/* hypervisor vendor */
	sdt_end(b, start);
}

static void build_madt(struct tbuf *b, unsigned int cpus)
{
	size_t start = sdt_begin(b, "APIC", 5);

	put32(b, LAPIC_BASE);
	put32(b, 0);			/* no 8259s for the guest to mind */
	for (unsigned int i = 0; i < cpus; i++) {
		put8(b, 0);		/* processor local APIC */
		put8(b, 8);
		put8(b, (uint8_t)i);	/* ACPI processor UID */
		put8(b, (uint8_t)i);	/* APIC id: vCPU index (vcpu.c's CPUID agrees) */
		put32(b, 1);		/* enabled */
	}
	put8(b, 1);			/* I/O APIC */
	put8(b, 12);
	put8(b, 0);			/* id */
	put8(b, 0);
	put32(b, IOAPIC_BASE);
	put32(b, 0);			/* GSI base */
	sdt_end(b, start);
}

static void build_rsdp(uint8_t *p, uint64_t xsdt)
{
	uint32_t len = ACPI_RSDP_SIZE;

	memset(p, 0, ACPI_RSDP_SIZE);
	memcpy(p, "RSD PTR ", 8);
	memcpy(p + 9, ACPI_OEM_ID, 6);
	p[15] = 2;
	memcpy(p + 20, &len, 4);
	memcpy(p + 24, &xsdt, 8);
	p[8] = checksum(p, 20);
	p[32] = checksum(p, ACPI_RSDP_SIZE);
}

/*
 * Lay the tables out at ACPI_TABLES_GPA: the RSDP first, then the XSDT
 * pointing at the FADT and MADT, the FADT pointing at the DSDT.
 */
int acpi_build(struct vm *vm, uint64_t *rsdp_gpa)
{
	static const size_t xsdt_entries = 2;
	uint8_t *mem = vm_guest_ptr(vm, ACPI_TABLES_GPA, ACPI_TABLES_SIZE);
	struct tbuf b = { mem, 0, ACPI_TABLES_SIZE };
	uint64_t base = ACPI_TABLES_GPA, xsdt, fadt, madt, dsdt;
	size_t xstart;

	if (!mem)
		return -ENOMEM;
	memset(mem, 0, ACPI_TABLES_SIZE);
	b.len = 64;			/* the RSDP's place */
	xsdt = base + b.len;
	fadt = xsdt + 36 + 8 * xsdt_entries;
	fadt = (fadt + 15) & ~15ULL;
	b.len = fadt - base;
	/* the DSDT's address must be known to the FADT: build it last, place it after MADT */
	build_fadt(&b, 0);
	align16(&b);
	madt = base + b.len;
	build_madt(&b, vm->cfg.cpus);
	align16(&b);
	dsdt = base + b.len;
	build_dsdt(&b, vm);
	if (b.overflow)
		return -ENOSPC;
	vm->mach.acpi = true;	/* it has the power button (power_button_press) */

	/* now that the DSDT has a place, the FADT can name it */
	b.len = fadt - base;
	build_fadt(&b, dsdt);

	b.len = xsdt - base;
	xstart = sdt_begin(&b, "XSDT", 1);
	put64(&b, fadt);
	put64(&b, madt);
	sdt_end(&b, xstart);

	build_rsdp(mem, xsdt);
	*rsdp_gpa = base;
	return 0;
}
