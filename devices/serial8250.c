// SPDX-License-Identifier: GPL-2.0
/*
 * 8250 UART at COM1 (0x3f8), output side: what a polling driver needs to
 * see a transmitter that is always ready. Input and interrupts come with
 * the Linux guest.
 */
#include <errno.h>
#include <stdlib.h>

#include "devices/device.h"
#include "vmm/vm.h"

#define COM1_BASE	0x3f8
#define UART_THR	0	/* DLAB=0: transmit; DLAB=1: divisor low */
#define UART_IER	1
#define UART_IIR	2
#define UART_LCR	3
#define UART_MCR	4
#define UART_LSR	5
#define UART_MSR	6
#define UART_SCR	7
#define UART_LCR_DLAB	0x80
#define UART_LSR_TEMT	0x40
#define UART_LSR_THRE	0x20
#define UART_IIR_NO_INT	0x01

struct serial8250 {
	uint8_t regs[8];
	uint8_t dll, dlm;
};

static uint8_t serial_read(struct serial8250 *s, unsigned int reg)
{
	bool dlab = s->regs[UART_LCR] & UART_LCR_DLAB;

	switch (reg) {
	case UART_THR:
		return dlab ? s->dll : 0;
	case UART_IER:
		return dlab ? s->dlm : s->regs[UART_IER];
	case UART_IIR:
		return UART_IIR_NO_INT;
	case UART_LSR:
		return UART_LSR_TEMT | UART_LSR_THRE;
	case UART_MSR:
		return 0xb0;	/* DCD, DSR, CTS: a cable is attached */
	default:
		return s->regs[reg];
	}
}

static void serial_write(struct vm *vm, struct serial8250 *s, unsigned int reg,
			 uint8_t val)
{
	bool dlab = s->regs[UART_LCR] & UART_LCR_DLAB;

	if (reg == UART_THR && !dlab)
		vm_console_write(vm, (const char *)&val, 1);
	else if (reg == UART_THR)
		s->dll = val;
	else if (reg == UART_IER && dlab)
		s->dlm = val;
	else if (reg != UART_LSR && reg != UART_IIR)
		s->regs[reg] = val;
}

static int serial_io(struct vm *vm, struct vcpu *vcpu, void *opaque,
		     uint64_t addr, uint8_t *data, unsigned int len,
		     bool is_write)
{
	struct serial8250 *s = opaque;
	unsigned int reg = addr - COM1_BASE;

	/* a wider access touches consecutive registers, as on the ISA bus */
	for (unsigned int i = 0; i < len && reg + i < 8; i++) {
		if (is_write)
			serial_write(vm, s, reg + i, data[i]);
		else
			data[i] = serial_read(s, reg + i);
	}
	return 0;
}

static int serial_init(struct vm *vm, void **priv)
{
	struct serial8250 *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return -ENOMEM;
	err = dev_register_pio(&vm->bus, "serial8250", COM1_BASE, 8, serial_io, s);
	if (err) {
		free(s);
		return err;
	}
	*priv = s;
	return 0;
}

static void serial_exit(struct vm *vm, void *priv)
{
	free(priv);
}

const struct device_ops serial8250_device = {
	.name = "serial8250",
	.init = serial_init,
	.exit = serial_exit,
};
