/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The machine a device sits in: everything a device may ask of it, and
 * nothing else. Devices see guest memory only through bounds-checked
 * accessors, raise interrupt lines, write to the console, ask for a
 * power-off, reset or stop, read a clock and learn that the VM is stopping.
 *
 * The VMM implements the operations once (vmm/core/vm_machine.c); tests and
 * fuzz targets implement them over plain memory (tests/devices/). So
 * devices/ builds as a library of its own, and no device can reach a VMM
 * structure it was not handed here.
 *
 * Threads: every operation may be called from any vCPU thread and from a
 * host request (QMP) at once; the implementation does its own locking.
 * guest_ptr and discard may take the VMM's guest memory lock, so a device
 * lock is always taken before them (lock order: vmm/core/vm.h).
 */
#ifndef GPMM_MACHINE_H
#define GPMM_MACHINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A result that says whether it worked: the caller must look at it. */
#ifndef __must_check
#define __must_check		__attribute__((warn_unused_result))
#endif

struct machine;
/* The vCPU whose exit reached a device: devices only hand it back. */
struct vcpu;

typedef int (*dev_io_fn)(struct machine *m, struct vcpu *vcpu, void *opaque,
			 uint64_t addr, uint8_t *data, unsigned int len,
			 bool is_write);

struct dev_range {
	const char *name;
	uint64_t base;
	uint64_t len;
	dev_io_fn io;
	void *opaque;
};

#define DEV_MAX_RANGES	16
#define DEV_MAX_DEVICES	8

/*
 * A device the guest cannot probe for (virtio-mmio): the ACPI tables
 * describe it to the guest by its hardware id, registers and interrupt.
 */
struct dev_acpi {
	const char *hid;	/* e.g. "LNRO0005" for virtio-mmio */
	uint64_t base;
	uint32_t len;
	uint32_t gsi;
};

#define DEV_MAX_ACPI	8

struct device_bus {
	struct dev_acpi acpi[DEV_MAX_ACPI];
	unsigned int nr_acpi;
	void *priv[DEV_MAX_DEVICES];	/* per device of the registry */
	struct dev_range pio[DEV_MAX_RANGES];
	unsigned int nr_pio;
	struct dev_range mmio[DEV_MAX_RANGES];
	unsigned int nr_mmio;
};

/*
 * One network interface (virtio-net): a host tap opened by name, or one
 * the VMM was handed open (libvirt's -netdev tap,fd=N). Parsed from
 * "tap=NAME|fd=N[,mac=52:54:00:..][,offload=on|off]" by net_spec_parse.
 */
#define MACHINE_NET_MAX		4
#define MACHINE_IFNAMSIZ	16

struct machine_net {
	char tap[MACHINE_IFNAMSIZ];	/* "" when fd is given */
	int fd;				/* -1 when tap is named */
	uint8_t mac[6];
	bool mac_set;			/* else a random 52:54:00:xx:xx:xx */
	bool offload;			/* checksum and TSO offloads (default on) */
};

/* What the device constructors are given: the VM's configuration, no more. */
struct machine_config {
	uint64_t ram_bytes;
	const char *disk;		/* raw image for virtio-blk, "" = none */
	bool disk_readonly;
	bool balloon;			/* virtio-balloon */
	bool balloon_reporting;		/* ... with free page reporting */
	const struct machine_net *net;	/* virtio-net interfaces */
	unsigned int nr_net;
};

struct machine_ops {
	/*
	 * Host address of guest range [@gpa, @gpa + @len), backed, or NULL
	 * when the range is not wholly guest RAM. Valid while the device
	 * serves the request it is for.
	 */
	void *(*guest_ptr)(struct machine *m, uint64_t gpa, uint64_t len);
	/* The range is wholly guest RAM; nothing is backed or touched. */
	bool (*guest_ram)(struct machine *m, uint64_t gpa, uint64_t len);
	/* The guest gave the range back (balloon): it reads zero next time. */
	int (*guest_discard)(struct machine *m, uint64_t gpa, uint64_t len);
	/* Level of interrupt line @gsi (IOAPIC, and PIC below 16). */
	int (*irq_line)(struct machine *m, unsigned int gsi, bool level);
	void (*console_write)(struct machine *m, const char *buf, size_t len);
	/* The guest powered off (@reboot false) or reset itself (true). */
	void (*power)(struct machine *m, bool reboot);
	/* The payload's exit port: the VM ends with status @code. */
	void (*exit)(struct machine *m, int code);
	/*
	 * The payload's checkpoint port: the VM is paused, whoever runs it
	 * looks at checkpoint @n, and it resumes. 0 when nobody looks.
	 */
	int (*checkpoint)(struct machine *m, struct vcpu *self, uint32_t n);
	/* A stop was requested: long device work ends early. */
	bool (*stopping)(struct machine *m);
	uint64_t (*now_ns)(struct machine *m);
};

typedef size_t (*machine_input_fn)(void *opaque, const char *buf, size_t len);

struct machine {
	const struct machine_ops *ops;
	struct machine_config cfg;
	struct device_bus bus;
	/* The guest has ACPI tables (set by the VMM's loader): a power button. */
	bool acpi;
	/* The console's receive side, if a device offers one (the UART). */
	machine_input_fn console_input;
	void *console_input_opaque;
	/* Why a device refused to start, for the VMM's error. */
	char why[4096];
};

static inline void *machine_guest_ptr(struct machine *m, uint64_t gpa, uint64_t len)
{
	return m->ops->guest_ptr(m, gpa, len);
}

static inline bool machine_guest_ram(struct machine *m, uint64_t gpa, uint64_t len)
{
	return m->ops->guest_ram(m, gpa, len);
}

static inline int machine_guest_discard(struct machine *m, uint64_t gpa, uint64_t len)
{
	return m->ops->guest_discard(m, gpa, len);
}

static inline int machine_irq_line(struct machine *m, unsigned int gsi, bool level)
{
	return m->ops->irq_line(m, gsi, level);
}

static inline void machine_console_write(struct machine *m, const char *buf, size_t len)
{
	m->ops->console_write(m, buf, len);
}

static inline void machine_power(struct machine *m, bool reboot)
{
	m->ops->power(m, reboot);
}

static inline void machine_exit(struct machine *m, int code)
{
	m->ops->exit(m, code);
}

static inline int machine_checkpoint(struct machine *m, struct vcpu *self, uint32_t n)
{
	return m->ops->checkpoint(m, self, n);
}

static inline bool machine_stopping(struct machine *m)
{
	return m->ops->stopping(m);
}

static inline uint64_t machine_now_ns(struct machine *m)
{
	return m->ops->now_ns(m);
}

/* Copies in and out of guest RAM: -EFAULT unless wholly inside it. */
__must_check int machine_read_guest(struct machine *m, uint64_t gpa, void *buf, uint64_t len);
__must_check int machine_write_guest(struct machine *m, uint64_t gpa, const void *buf,
				     uint64_t len);
/* Keys for the guest's console; returns how many it took. */
size_t machine_console_input(struct machine *m, const char *buf, size_t len);

#endif
