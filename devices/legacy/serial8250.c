// SPDX-License-Identifier: GPL-2.0
/*
 * 8250/16550A UART at COM1 (0x3f8, ISA IRQ 4), as Linux's 8250 driver
 * probes and drives it: scratch and IER read-back, the loopback test of
 * MCR/MSR, a FIFO that IIR reports as enabled, and interrupts for
 * received data and an empty transmitter. Output goes to the VM's console
 * at once, so the transmitter is always empty; input arrives from the
 * console side (machine_console_input) into a receive buffer larger than a
 * real FIFO; what does not fit stays with the console side until it does.
 *
 * The interrupt line follows "an interrupt is pending" after every
 * access. The pin is edge-triggered (ISA): the driver drains IIR until it
 * says no interrupt, which lowers the line, so the next event raises it
 * again.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "devices/device.h"

#define COM1_BASE	0x3f8
#define COM1_IRQ	4
#define UART_RX		0	/* DLAB=0: receive/transmit; DLAB=1: divisor low */
#define UART_IER	1
#define UART_IIR	2	/* read; write is FCR */
#define UART_LCR	3
#define UART_MCR	4
#define UART_LSR	5
#define UART_MSR	6
#define UART_SCR	7

#define UART_IER_RDI	0x01
#define UART_IER_THRI	0x02
#define UART_IER_RLSI	0x04
#define UART_IER_MSI	0x08
#define UART_IIR_NO_INT	0x01
#define UART_IIR_MSI	0x00
#define UART_IIR_THRI	0x02
#define UART_IIR_RDI	0x04
#define UART_IIR_FIFO	0xc0
#define UART_FCR_ENABLE	0x01
#define UART_FCR_CLR_RX	0x02
#define UART_LCR_DLAB	0x80
#define UART_MCR_DTR	0x01
#define UART_MCR_RTS	0x02
#define UART_MCR_OUT1	0x04
#define UART_MCR_OUT2	0x08
#define UART_MCR_LOOP	0x10
#define UART_LSR_DR	0x01
#define UART_LSR_THRE	0x20
#define UART_LSR_TEMT	0x40
#define UART_MSR_CTS	0x10
#define UART_MSR_DSR	0x20
#define UART_MSR_RI	0x40
#define UART_MSR_DCD	0x80

#define RX_SIZE		65536	/* a power of two */

struct serial8250 {
	struct machine *m;
	pthread_mutex_t lock;	/* a leaf: vCPU threads and the console side */
	uint8_t ier, lcr, mcr, scr, fcr, dll, dlm;
	bool thri_pending;	/* THR became empty and nobody read IIR since */
	bool irq_level;
	uint8_t rx[RX_SIZE];
	uint32_t rx_head, rx_tail;	/* free-running */
};

static uint32_t rx_count(const struct serial8250 *s)
{
	return s->rx_head - s->rx_tail;
}

static uint8_t iir(const struct serial8250 *s)
{
	uint8_t fifo = s->fcr & UART_FCR_ENABLE ? UART_IIR_FIFO : 0;

	if ((s->ier & UART_IER_RDI) && rx_count(s))
		return fifo | UART_IIR_RDI;
	if ((s->ier & UART_IER_THRI) && s->thri_pending)
		return fifo | UART_IIR_THRI;
	return fifo | UART_IIR_NO_INT;
}

/*
 * Without OUT2 a PC's UART does not reach the interrupt controller; the
 * driver's IRQ probe relies on that. lock held.
 */
static void update_irq(struct serial8250 *s)
{
	bool level = !(iir(s) & UART_IIR_NO_INT) && (s->mcr & UART_MCR_OUT2);

	if (level == s->irq_level)
		return;
	s->irq_level = level;
	if (machine_irq_line(s->m, COM1_IRQ, level))
		s->irq_level = !level;	/* no irqchip: polled drivers still work */
}

/* In loopback the modem inputs are the modem outputs, crossed as a cable would. */
static uint8_t msr(const struct serial8250 *s)
{
	if (!(s->mcr & UART_MCR_LOOP))
		return UART_MSR_DCD | UART_MSR_DSR | UART_MSR_CTS;
	return (s->mcr & UART_MCR_DTR ? UART_MSR_DSR : 0) |
	       (s->mcr & UART_MCR_RTS ? UART_MSR_CTS : 0) |
	       (s->mcr & UART_MCR_OUT1 ? UART_MSR_RI : 0) |
	       (s->mcr & UART_MCR_OUT2 ? UART_MSR_DCD : 0);
}

static uint8_t serial_read(struct serial8250 *s, unsigned int reg)
{
	bool dlab = s->lcr & UART_LCR_DLAB;
	uint8_t v;

	switch (reg) {
	case UART_RX:
		if (dlab)
			return s->dll;
		if (!rx_count(s))
			return 0;
		return s->rx[s->rx_tail++ & (RX_SIZE - 1)];
	case UART_IER:
		return dlab ? s->dlm : s->ier;
	case UART_IIR:
		v = iir(s);
		if ((v & 0x0f) == UART_IIR_THRI)
			s->thri_pending = false;
		return v;
	case UART_LCR:
		return s->lcr;
	case UART_MCR:
		return s->mcr;
	case UART_LSR:
		return UART_LSR_TEMT | UART_LSR_THRE | (rx_count(s) ? UART_LSR_DR : 0);
	case UART_MSR:
		return msr(s);
	default:
		return s->scr;
	}
}

static void transmit(struct serial8250 *s, uint8_t val)
{
	/* in loopback what is sent comes back in, and nothing leaves */
	if (s->mcr & UART_MCR_LOOP) {
		if (rx_count(s) < RX_SIZE)
			s->rx[s->rx_head++ & (RX_SIZE - 1)] = val;
	} else {
		machine_console_write(s->m, (const char *)&val, 1);
	}
	s->thri_pending = true;
}

static void serial_write(struct serial8250 *s, unsigned int reg, uint8_t val)
{
	bool dlab = s->lcr & UART_LCR_DLAB;

	switch (reg) {
	case UART_RX:
		if (dlab)
			s->dll = val;
		else
			transmit(s, val);
		break;
	case UART_IER:
		if (dlab) {
			s->dlm = val;
			break;
		}
		/* enabling THRI with an empty transmitter interrupts at once */
		if (!(s->ier & UART_IER_THRI) && (val & UART_IER_THRI))
			s->thri_pending = true;
		s->ier = val & 0x0f;
		break;
	case UART_IIR:
		s->fcr = val;
		if (val & UART_FCR_CLR_RX)
			s->rx_tail = s->rx_head;
		break;
	case UART_LCR:
		s->lcr = val;
		break;
	case UART_MCR:
		s->mcr = val & 0x1f;
		break;
	case UART_SCR:
		s->scr = val;
		break;
	default:	/* LSR and MSR are read-only */
		break;
	}
}

static int serial_io(struct machine *m, struct vcpu *vcpu, void *opaque,
		     uint64_t addr, uint8_t *data, unsigned int len,
		     bool is_write)
{
	struct serial8250 *s = opaque;
	unsigned int reg = addr - COM1_BASE;

	pthread_mutex_lock(&s->lock);
	/* a wider access touches consecutive registers, as on the ISA bus */
	for (unsigned int i = 0; i < len; i++) {
		if (reg + i >= 8)
			data[i] = 0xff;
		else if (is_write)
			serial_write(s, reg + i, data[i]);
		else
			data[i] = serial_read(s, reg + i);
	}
	update_irq(s);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

/*
 * Input from the console side. Returns how many bytes were taken; the
 * caller keeps the rest until the guest has read enough to make room.
 */
static size_t serial_input(void *opaque, const char *buf, size_t len)
{
	struct serial8250 *s = opaque;
	size_t n;

	pthread_mutex_lock(&s->lock);
	for (n = 0; n < len && rx_count(s) < RX_SIZE; n++)
		s->rx[s->rx_head++ & (RX_SIZE - 1)] = (uint8_t)buf[n];
	update_irq(s);
	pthread_mutex_unlock(&s->lock);
	return n;
}

static int serial_init(struct machine *m, void **priv)
{
	struct serial8250 *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return -ENOMEM;
	s->m = m;
	pthread_mutex_init(&s->lock, NULL);
	err = dev_register_pio(&m->bus, "serial8250", COM1_BASE, 8, serial_io, s);
	if (err) {
		pthread_mutex_destroy(&s->lock);
		free(s);
		return err;
	}
	m->console_input = serial_input;
	m->console_input_opaque = s;
	*priv = s;
	return 0;
}

static void serial_exit(struct machine *m, void *priv)
{
	struct serial8250 *s = priv;

	m->console_input = NULL;
	pthread_mutex_destroy(&s->lock);
	free(s);
}

const struct device_ops serial8250_device = {
	.name = "serial8250",
	.init = serial_init,
	.exit = serial_exit,
};
