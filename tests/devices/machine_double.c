// SPDX-License-Identifier: GPL-2.0
/*
 * The machine double (machine_double.h): each operation of
 * devices/machine.h done the plainest way over one mapping, and logged.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>

#include "tests/devices/machine_double.h"

#define GUARD	4096ULL

static struct machine_double *double_of(struct machine *m)
{
	return (struct machine_double *)((char *)m - offsetof(struct machine_double, m));
}

static bool in_ram(struct machine_double *d, uint64_t gpa, uint64_t len)
{
	return gpa < d->ram_bytes && len <= d->ram_bytes - gpa;
}

static void *dbl_guest_ptr(struct machine *m, uint64_t gpa, uint64_t len)
{
	struct machine_double *d = double_of(m);

	return in_ram(d, gpa, len ? len : 1) ? d->ram + gpa : NULL;
}

static bool dbl_guest_ram(struct machine *m, uint64_t gpa, uint64_t len)
{
	return in_ram(double_of(m), gpa, len);
}

/* The guest gave the pages back: they read zero on the next touch. */
static int dbl_guest_discard(struct machine *m, uint64_t gpa, uint64_t len)
{
	struct machine_double *d = double_of(m);

	if (!len || ((gpa | len) & 4095) || !in_ram(d, gpa, len))
		return -EINVAL;
	memset(d->ram + gpa, 0, len);
	d->log.discards++;
	d->log.discarded_bytes += len;
	if (d->on_discard)
		d->on_discard(d);
	return 0;
}

static int dbl_irq_line(struct machine *m, unsigned int gsi, bool level)
{
	struct machine_double *d = double_of(m);

	if (gsi >= sizeof(d->log.irq_level) / sizeof(d->log.irq_level[0]))
		return -EINVAL;
	if (level)
		d->log.irq_raised++;
	else
		d->log.irq_lowered++;
	d->log.irq_level[gsi] = level;
	return 0;
}

static void dbl_console_write(struct machine *m, const char *buf, size_t len)
{
	struct machine_double *d = double_of(m);
	size_t have = d->log.console_bytes, room = sizeof(d->log.console) - 1;

	if (have < room)
		memcpy(d->log.console + have, buf, len < room - have ? len : room - have);
	d->log.console_bytes += len;
}

static void dbl_power(struct machine *m, bool reboot)
{
	struct machine_double *d = double_of(m);

	if (reboot)
		d->log.reset++;
	else
		d->log.power_off++;
	d->stopping = true;
}

static void dbl_exit(struct machine *m, int code)
{
	struct machine_double *d = double_of(m);

	d->log.exits++;
	d->log.exit_code = code;
	d->stopping = true;
}

static int dbl_checkpoint(struct machine *m, struct vcpu *self, uint32_t n)
{
	struct machine_double *d = double_of(m);

	d->log.checkpoints++;
	d->log.checkpoint = n;
	return 0;
}

static bool dbl_stopping(struct machine *m)
{
	return double_of(m)->stopping;
}

/* A clock that moves, and the same way on every run of an input. */
static uint64_t dbl_now_ns(struct machine *m)
{
	return double_of(m)->now += 1000;
}

static const struct machine_ops double_ops = {
	.guest_ptr = dbl_guest_ptr,
	.guest_ram = dbl_guest_ram,
	.guest_discard = dbl_guest_discard,
	.irq_line = dbl_irq_line,
	.console_write = dbl_console_write,
	.power = dbl_power,
	.exit = dbl_exit,
	.checkpoint = dbl_checkpoint,
	.stopping = dbl_stopping,
	.now_ns = dbl_now_ns,
};

uint8_t *guarded_ram_map(uint64_t bytes)
{
	uint8_t *map = mmap(NULL, bytes + 2 * GUARD, PROT_NONE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (map == MAP_FAILED)
		return NULL;
	if (mprotect(map + GUARD, bytes, PROT_READ | PROT_WRITE)) {
		munmap(map, bytes + 2 * GUARD);
		return NULL;
	}
	return map + GUARD;
}

void guarded_ram_unmap(uint8_t *ram, uint64_t bytes)
{
	munmap(ram - GUARD, bytes + 2 * GUARD);
}

int machine_double_init(struct machine_double *d, uint64_t ram,
			const struct machine_config *cfg)
{
	memset(d, 0, sizeof(*d));
	d->ram = guarded_ram_map(ram);
	if (!d->ram)
		return -errno;
	d->ram_bytes = ram;
	d->m.ops = &double_ops;
	d->m.cfg = *cfg;
	d->m.cfg.ram_bytes = ram;
	return 0;
}

/*
 * Only the pages a test or an input touched cost anything to drop; the
 * mapping stays, zero-filled on the next touch like freshly backed RAM.
 */
void machine_double_reset(struct machine_double *d)
{
	madvise(d->ram, d->ram_bytes, MADV_DONTNEED);
	memset(&d->log, 0, sizeof(d->log));
	d->stopping = false;
	d->now = 0;
}

void machine_double_fini(struct machine_double *d)
{
	guarded_ram_unmap(d->ram, d->ram_bytes);
	d->ram = NULL;
}
