// SPDX-License-Identifier: GPL-2.0
/*
 * Shared helpers of the flat payloads; see lib.h. Built with
 * -ffunction-sections and linked with --gc-sections, so a payload carries
 * only what it calls.
 */
#include "lib.h"

#define UART_LSR	5
#define UART_LSR_THRE	0x20

/*
 * Each LSR read is a VM exit (tens of µs here), so the bound is already
 * milliseconds; it keeps a console that never reports THR empty (or reads
 * unclaimed ports as 0) from hanging the payload. gpmm's 8250 always
 * reports it empty: one read per byte.
 */
#define LSR_POLL_MAX	256

static struct spinlock serial_spinlock;

void serial_lock(void)
{
	spin_lock(&serial_spinlock);
}

void serial_unlock(void)
{
	spin_unlock(&serial_spinlock);
}

void serial_putc(char c)
{
	for (int i = 0; i < LSR_POLL_MAX; i++) {
		if (inb(GPMM_COM1_PORT + UART_LSR) & UART_LSR_THRE)
			break;
		cpu_relax();
	}
	outb(GPMM_COM1_PORT, (uint8_t)c);
}

void serial_puts(const char *s)
{
	while (*s)
		serial_putc(*s++);
}

void serial_put_hex(uint64_t v)
{
	int shift = 60;

	serial_putc('0');
	serial_putc('x');
	while (shift > 0 && !(v >> shift))
		shift -= 4;
	for (; shift >= 0; shift -= 4)
		serial_putc("0123456789abcdef"[(v >> shift) & 0xf]);
}

void serial_put_dec(uint64_t v)
{
	char buf[20];	/* 2^64 - 1 has 20 digits */
	int n = 0;

	do {
		buf[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		serial_putc(buf[--n]);
}

void gpmm_exit(uint32_t code)
{
	outl(GPMM_EXIT_PORT, code);
	/* The VMM stops every vCPU on that out; never run on if it is late. */
	park();
}

void gpmm_checkpoint(uint32_t n)
{
	outl(GPMM_CHECKPOINT_PORT, n);
}

void park(void)
{
	for (;;)
		asm volatile("cli; hlt" : : : "memory");
}

/*
 * String instructions, not loops: gcc would turn a byte loop in memset
 * back into a call to memset. DF is clear (start.S), as the ABI requires.
 */
void *memset(void *s, int c, size_t n)
{
	void *d = s;

	asm volatile("rep stosb" : "+D"(d), "+c"(n) : "a"(c) : "memory");
	return s;
}

void *memcpy(void *dst, const void *src, size_t n)
{
	void *d = dst;

	asm volatile("rep movsb" : "+D"(d), "+S"(src), "+c"(n) : : "memory");
	return dst;
}

void *memmove(void *dst, const void *src, size_t n)
{
	const char *s = src;
	char *d = dst;

	if (d <= s || d >= s + n)
		return memcpy(dst, src, n);
	/* Overlap with dst above src: copy from the top down. */
	s += n - 1;
	d += n - 1;
	asm volatile("std; rep movsb; cld"
		     : "+D"(d), "+S"(s), "+c"(n) : : "memory", "cc");
	return dst;
}

int memcmp(const void *a, const void *b, size_t n)
{
	const unsigned char *x = a, *y = b;

	for (size_t i = 0; i < n; i++)
		if (x[i] != y[i])
			return x[i] - y[i];
	return 0;
}

void fail_expected(uint64_t want, uint64_t found)
{
	serial_puts(": expected ");
	serial_put_hex(want);
	serial_puts(", found ");
	serial_put_hex(found);
	serial_putc('\n');
	gpmm_exit(GPMM_EXIT_FAIL);
}
