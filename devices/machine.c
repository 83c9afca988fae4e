// SPDX-License-Identifier: GPL-2.0
/*
 * What devices/machine.h builds on the machine's operations: copies in
 * and out of guest RAM over the one bounds-checked accessor, and console
 * input to whichever device took the receive side.
 */
#include <errno.h>
#include <string.h>

#include "devices/machine.h"

int machine_read_guest(struct machine *m, uint64_t gpa, void *buf, uint64_t len)
{
	void *p = machine_guest_ptr(m, gpa, len);

	if (!p)
		return -EFAULT;
	memcpy(buf, p, len);
	return 0;
}

int machine_write_guest(struct machine *m, uint64_t gpa, const void *buf, uint64_t len)
{
	void *p = machine_guest_ptr(m, gpa, len);

	if (!p)
		return -EFAULT;
	memcpy(p, buf, len);
	return 0;
}

size_t machine_console_input(struct machine *m, const char *buf, size_t len)
{
	return m->console_input ? m->console_input(m->console_input_opaque, buf, len) : 0;
}
