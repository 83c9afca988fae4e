/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the freestanding payloads: port I/O, serial output, the
 * exit and checkpoint ports, and the few atomics the payloads share.
 *
 * Every guest instruction costs about 1 µs here and every memory access
 * about 5 µs (DESIGN.md "Guest code is slow here"), and every port access
 * is a VM exit: keep loops tiny and print little.
 *
 * Entry convention (start.S): each payload defines
 *	int payload_main(uint64_t ram_size, uint64_t cpu, uint64_t ncpus);
 * called on every vCPU with RDI/RSI/RDX from the boot protocol, ncpus
 * already >= 1. Returning V ends the whole VM with status V (32-bit out to
 * GPMM_EXIT_PORT), whichever vCPU returns; a vCPU that must not end the VM
 * calls park() instead.
 */
#ifndef GPMM_GUESTS_LIB_H
#define GPMM_GUESTS_LIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "abi.h"

#define PAGE_SIZE	4096ULL
#define MiB		(1ULL << 20)

/* GPAs are identity-mapped, so a GPA is a pointer. */
#define gpa_ptr(type, gpa)	((volatile type *)(uintptr_t)(gpa))

int payload_main(uint64_t ram_size, uint64_t cpu, uint64_t ncpus);

static inline void outb(uint16_t port, uint8_t v)
{
	asm volatile("outb %0, %1" : : "a"(v), "Nd"(port) : "memory");
}

static inline void outl(uint16_t port, uint32_t v)
{
	asm volatile("outl %0, %1" : : "a"(v), "Nd"(port) : "memory");
}

static inline uint8_t inb(uint16_t port)
{
	uint8_t v;

	asm volatile("inb %1, %0" : "=a"(v) : "Nd"(port) : "memory");
	return v;
}

static inline void outw(uint16_t port, uint16_t v)
{
	asm volatile("outw %0, %1" : : "a"(v), "Nd"(port) : "memory");
}

static inline uint16_t inw(uint16_t port)
{
	uint16_t v;

	asm volatile("inw %1, %0" : "=a"(v) : "Nd"(port) : "memory");
	return v;
}

static inline uint32_t inl(uint16_t port)
{
	uint32_t v;

	asm volatile("inl %1, %0" : "=a"(v) : "Nd"(port) : "memory");
	return v;
}

/*
 * With an empty IDT, the #UD of ud2 finds no gate and becomes #GP, which
 * becomes #DF, which shuts the vCPU down: KVM_EXIT_SHUTDOWN. The VMM
 * loads no IDT either; loading an empty one (limit 0 covers one byte: no
 * 16-byte gate of any vector fits) makes the fault not depend on that.
 * Returns only if the VMM let the vCPU go on.
 */
static inline void triple_fault(void)
{
	static const struct __attribute__((packed)) {
		uint16_t limit;
		uint64_t base;
	} empty_idt = { 0, 0 };

	asm volatile("lidt %0\n\tud2" : : "m"(empty_idt) : "memory");
}

static inline void cpu_relax(void)
{
	asm volatile("pause" : : : "memory");
}

/*
 * Serial output goes to COM1 byte by byte. These do not lock: when more
 * than one vCPU prints, hold serial_lock() around a whole line so lines do
 * not interleave.
 */
void serial_lock(void);
void serial_unlock(void);
void serial_putc(char c);
void serial_puts(const char *s);
void serial_put_hex(uint64_t v);	/* "0x" and no leading zeros */
void serial_put_dec(uint64_t v);

/* Stops the whole VM with status @code; never returns. */
__attribute__((noreturn)) void gpmm_exit(uint32_t code);
/* Runs host hook @n (if the VMM has one) with the VM paused, then returns. */
void gpmm_checkpoint(uint32_t n);
/* Stops this vCPU for good: IF = 0, so only an NMI ends a hlt, and it loops. */
__attribute__((noreturn)) void park(void);
/* The end of a failed check's line, ": expected W, found F", then the VM stops as failed. */
__attribute__((noreturn)) void fail_expected(uint64_t want, uint64_t found);

/*
 * The ports whose writes are a guest's own ways to end, reset or report
 * (the exit and checkpoint ports, the i8042 and PCI resets, ACPI PM, the
 * console): hostile payloads leave them alone, since using them is using
 * gpmm, not attacking it.
 */
static inline bool port_is_off_switch(uint32_t port)
{
	return port == GPMM_EXIT_PORT || port == GPMM_CHECKPOINT_PORT ||
	       port == 0x64 || port == 0xcf9 || (port >= 0x600 && port < 0x610) ||
	       (port >= GPMM_COM1_PORT && port < GPMM_COM1_PORT + 8);
}

struct spinlock {
	uint32_t locked;
};

static inline void spin_lock(struct spinlock *l)
{
	/* Spin on a plain load so waiters do not bounce the line with xchg. */
	while (__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(&l->locked, __ATOMIC_RELAXED))
			cpu_relax();
}

static inline void spin_unlock(struct spinlock *l)
{
	__atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
}

/*
 * "Last one out": each of @n vCPUs calls this once when done with its share;
 * exactly one, the last, gets true, and everything the others did before
 * their call is visible to it.
 */
static inline bool last_one_out(uint32_t *count, uint32_t n)
{
	return __atomic_add_fetch(count, 1, __ATOMIC_ACQ_REL) == n;
}

/* One-shot rendezvous of @n vCPUs on a zeroed @count. */
static inline void rendezvous(uint32_t *count, uint32_t n)
{
	__atomic_add_fetch(count, 1, __ATOMIC_ACQ_REL);
	while (__atomic_load_n(count, __ATOMIC_ACQUIRE) < n)
		cpu_relax();
}

/* gcc may emit calls to these even with -ffreestanding. */
void *memset(void *s, int c, size_t n);
void *memcpy(void *dst, const void *src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
int memcmp(const void *a, const void *b, size_t n);

#endif
