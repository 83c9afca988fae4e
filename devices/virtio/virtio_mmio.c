// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-mmio, version 2 registers, for every gpmm virtio device.
 *
 * The guest may write anything to any offset with any width: a register
 * access that is not 32 bits wide and aligned, a write to a register only
 * the device may change, a queue set up before the features are agreed or
 * changed while it runs, a notify of a queue that does not exist: each is
 * ignored (reads give 0) and counted (bad_accesses), and the VM runs on. A
 * ring that breaks the rules (virtio_queue.c) puts the device in
 * DEVICE_NEEDS_RESET: one line on the VM's console, a config interrupt,
 * and no more processing until the driver resets the device by writing 0
 * to Status. Nothing a guest does here stops the VM or gpmm.
 *
 * The status protocol is enforced where skipping a step would let the
 * device run on terms nobody agreed: FEATURES_OK is refused unless the
 * driver's features are a subset of the device's and include VERSION_1
 * (gpmm speaks only virtio 1.x); DRIVER_OK is refused without FEATURES_OK;
 * the driver cannot clear a bit but by reset, nor set NEEDS_RESET.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devices/device.h"
#include "devices/virtio/virtio_mmio.h"

#define DRIVER_STATUS_BITS	(VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER | \
				 VIRTIO_STATUS_DRIVER_OK | VIRTIO_STATUS_FEATURES_OK | \
				 VIRTIO_STATUS_FAILED)

static int virtio_mmio_io(struct machine *m, struct vcpu *vcpu, void *opaque,
			  uint64_t addr, uint8_t *data, unsigned int len, bool is_write);
static unsigned int nr_queues(struct virtio_mmio_dev *dev);

bool __virtio_mmio_has(const struct virtio_mmio_dev *dev, unsigned int bit)
{
	return dev->driver_features & (1ULL << bit);
}

bool __virtio_mmio_live(const struct virtio_mmio_dev *dev)
{
	return (dev->status & VIRTIO_STATUS_DRIVER_OK) &&
	       !(dev->status & (VIRTIO_STATUS_NEEDS_RESET | VIRTIO_STATUS_FAILED));
}

/*
 * Served once the features are agreed, before DRIVER_OK too: Linux's
 * balloon driver primes its stats queue before it sets DRIVER_OK.
 */
bool __virtio_mmio_can_serve(struct virtio_mmio_dev *dev, unsigned int q)
{
	return (dev->status & VIRTIO_STATUS_FEATURES_OK) &&
	       !(dev->status & (VIRTIO_STATUS_NEEDS_RESET | VIRTIO_STATUS_FAILED)) &&
	       q < nr_queues(dev) && dev->vq[q].ready;
}

/* The line follows InterruptStatus: high while anything is pending. */
static void update_irq(struct virtio_mmio_dev *dev)
{
	bool want = dev->isr != 0;

	if (want == dev->irq_high)
		return;
	if (machine_irq_line(dev->m, dev->gsi, want))
		dev->irq_errors++;
	else
		dev->irq_high = want;
}

void __virtio_mmio_used(struct virtio_mmio_dev *dev)
{
	dev->isr |= VIRTIO_MMIO_INT_VRING;
	update_irq(dev);
}

void __virtio_mmio_config_changed(struct virtio_mmio_dev *dev)
{
	dev->config_gen++;
	dev->isr |= VIRTIO_MMIO_INT_CONFIG;
	update_irq(dev);
}

/*
 * The driver gave the device a broken ring: stop serving it until reset.
 * The spec asks for a config change notification; the console line names
 * the device and the rule, once per breakage.
 */
void __virtio_mmio_broken(struct virtio_mmio_dev *dev, const char *why)
{
	char line[VIRTQ_WHY_LEN + 96];
	int n;

	dev->bad_rings++;
	if (dev->status & VIRTIO_STATUS_NEEDS_RESET)
		return;
	dev->status |= VIRTIO_STATUS_NEEDS_RESET;
	dev->isr |= VIRTIO_MMIO_INT_CONFIG;
	update_irq(dev);
	n = snprintf(line, sizeof(line), "gpmm: %s: %s; device needs reset\n",
		     dev->model->name, why);
	machine_console_write(dev->m, line, n < (int)sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

static void reset(struct virtio_mmio_dev *dev)
{
	dev->status = 0;
	dev->isr = 0;
	update_irq(dev);
	dev->driver_features = 0;
	dev->dev_features_sel = dev->drv_features_sel = dev->queue_sel = 0;
	for (unsigned int i = 0; i < VIRTIO_MMIO_MAX_QUEUES; i++)
		virtq_reset(&dev->vq[i]);
	if (dev->model->reset)
		dev->model->reset(dev);
	dev->resets++;
}

static unsigned int nr_queues(struct virtio_mmio_dev *dev)
{
	unsigned int n = dev->model->nr_queues(dev);

	return n < VIRTIO_MMIO_MAX_QUEUES ? n : VIRTIO_MMIO_MAX_QUEUES;
}

/* The queue QueueSel names, when the driver may configure it now. */
static struct virtq *config_queue(struct virtio_mmio_dev *dev)
{
	if (!(dev->status & VIRTIO_STATUS_FEATURES_OK) || dev->queue_sel >= nr_queues(dev) ||
	    dev->vq[dev->queue_sel].ready)
		return NULL;
	return &dev->vq[dev->queue_sel];
}

static bool features_acceptable(const struct virtio_mmio_dev *dev)
{
	return !(dev->driver_features & ~dev->features) &&
	       __virtio_mmio_has(dev, VIRTIO_F_VERSION_1);
}

static void write_status(struct virtio_mmio_dev *dev, uint32_t val)
{
	uint32_t old = dev->status & DRIVER_STATUS_BITS, new = val & DRIVER_STATUS_BITS;

	if (!val) {
		reset(dev);
		return;
	}
	if (old & ~new) {
		dev->bad_accesses++;	/* only a reset clears a bit */
		return;
	}
	if ((new & ~old & VIRTIO_STATUS_FEATURES_OK) && !features_acceptable(dev)) {
		new &= ~VIRTIO_STATUS_FEATURES_OK;
		dev->bad_accesses++;
	}
	if ((new & VIRTIO_STATUS_DRIVER_OK) && !(new & VIRTIO_STATUS_FEATURES_OK)) {
		new &= ~VIRTIO_STATUS_DRIVER_OK;
		dev->bad_accesses++;
	}
	dev->status = new | (dev->status & VIRTIO_STATUS_NEEDS_RESET);
}

static void set_half(uint64_t *v, bool high, uint32_t val)
{
	*v = high ? (*v & 0xffffffffULL) | ((uint64_t)val << 32)
		  : (*v & ~0xffffffffULL) | val;
}

static void queue_ready(struct virtio_mmio_dev *dev, struct virtq *q, uint32_t val)
{
	char why[VIRTQ_WHY_LEN];

	if (!val)
		return;		/* not ready already (config_queue) */
	if (virtq_check_setup(dev->m, q, dev->model->queue_max, why)) {
		__virtio_mmio_broken(dev, why);
		return;
	}
	q->last_avail = q->used_idx = 0;
	q->ready = true;
}

static void queue_notify(struct virtio_mmio_dev *dev, uint32_t val)
{
	char why[VIRTQ_WHY_LEN];
	unsigned int q = val & 0xffff;

	if (!__virtio_mmio_can_serve(dev, q)) {
		dev->bad_accesses++;
		return;
	}
	dev->notifies++;
	if (dev->model->notify(dev, q, why))
		__virtio_mmio_broken(dev, why);
}

/*
 * The registers that describe the queue QueueSel names: the driver may
 * write them between FEATURES_OK and setting the queue ready, not after.
 * false: not such a register, or not now.
 */
static bool queue_reg_write(struct virtio_mmio_dev *dev, uint32_t off, uint32_t val)
{
	struct virtq *q = config_queue(dev);

	if (!q)
		return false;
	switch (off) {
	case VIRTIO_MMIO_QUEUE_NUM:
		q->num = val;
		return true;
	case VIRTIO_MMIO_QUEUE_DESC_LOW:
	case VIRTIO_MMIO_QUEUE_DESC_HIGH:
		set_half(&q->desc, off == VIRTIO_MMIO_QUEUE_DESC_HIGH, val);
		return true;
	case VIRTIO_MMIO_QUEUE_AVAIL_LOW:
	case VIRTIO_MMIO_QUEUE_AVAIL_HIGH:
		set_half(&q->avail, off == VIRTIO_MMIO_QUEUE_AVAIL_HIGH, val);
		return true;
	case VIRTIO_MMIO_QUEUE_USED_LOW:
	case VIRTIO_MMIO_QUEUE_USED_HIGH:
		set_half(&q->used, off == VIRTIO_MMIO_QUEUE_USED_HIGH, val);
		return true;
	case VIRTIO_MMIO_QUEUE_READY:
		queue_ready(dev, q, val);
		return true;
	}
	return false;
}

/* QueueReady = 0 on a running queue: the driver takes it back (Linux's error path). */
static bool queue_unready(struct virtio_mmio_dev *dev, uint32_t off, uint32_t val)
{
	if (off != VIRTIO_MMIO_QUEUE_READY || val || !(dev->status & VIRTIO_STATUS_FEATURES_OK) ||
	    dev->queue_sel >= nr_queues(dev) || !dev->vq[dev->queue_sel].ready)
		return false;
	virtq_reset(&dev->vq[dev->queue_sel]);
	return true;
}

/* Registers that take a write; anything else written is a bad access. */
static void reg_write(struct virtio_mmio_dev *dev, uint32_t off, uint32_t val)
{
	switch (off) {
	case VIRTIO_MMIO_DEVICE_FEATURES_SEL:
		dev->dev_features_sel = val;
		return;
	case VIRTIO_MMIO_DRIVER_FEATURES:
		if ((dev->status & VIRTIO_STATUS_FEATURES_OK) || dev->drv_features_sel > 1)
			break;
		set_half(&dev->driver_features, dev->drv_features_sel, val);
		return;
	case VIRTIO_MMIO_DRIVER_FEATURES_SEL:
		dev->drv_features_sel = val;
		return;
	case VIRTIO_MMIO_QUEUE_SEL:
		dev->queue_sel = val;
		return;
	case VIRTIO_MMIO_QUEUE_NOTIFY:
		queue_notify(dev, val);
		return;
	case VIRTIO_MMIO_INTERRUPT_ACK:
		dev->isr &= ~val;
		update_irq(dev);
		return;
	case VIRTIO_MMIO_STATUS:
		write_status(dev, val);
		return;
	case VIRTIO_MMIO_SHM_SEL:
		return;		/* no shared memory regions: any is absent */
	}
	if (!queue_unready(dev, off, val) && !queue_reg_write(dev, off, val))
		dev->bad_accesses++;
}

static uint32_t reg_read(struct virtio_mmio_dev *dev, uint32_t off)
{
	const struct virtq *sel = dev->queue_sel < nr_queues(dev) ? &dev->vq[dev->queue_sel]
								    : NULL;

	switch (off) {
	case VIRTIO_MMIO_MAGIC_VALUE:
		return VIRTIO_MMIO_MAGIC;
	case VIRTIO_MMIO_VERSION:
		return VIRTIO_MMIO_VERSION_MODERN;
	case VIRTIO_MMIO_DEVICE_ID:
		return dev->model->device_id;
	case VIRTIO_MMIO_VENDOR_ID:
		return VIRTIO_VENDOR_GPMM;
	case VIRTIO_MMIO_DEVICE_FEATURES:
		return dev->dev_features_sel > 1 ? 0 :
		       (uint32_t)(dev->features >> (32 * dev->dev_features_sel));
	case VIRTIO_MMIO_QUEUE_NUM_MAX:
		return sel ? dev->model->queue_max : 0;
	case VIRTIO_MMIO_QUEUE_NUM:
		return sel ? sel->num : 0;
	case VIRTIO_MMIO_QUEUE_READY:
		return sel && sel->ready;
	case VIRTIO_MMIO_INTERRUPT_STATUS:
		return dev->isr;
	case VIRTIO_MMIO_STATUS:
		return dev->status;
	case VIRTIO_MMIO_SHM_LEN_LOW:
	case VIRTIO_MMIO_SHM_LEN_HIGH:
	case VIRTIO_MMIO_SHM_BASE_LOW:
	case VIRTIO_MMIO_SHM_BASE_HIGH:
		return 0xffffffffU;	/* length -1: no such region */
	case VIRTIO_MMIO_CONFIG_GENERATION:
		return dev->config_gen;
	default:
		return 0;
	}
}

static void config_access(struct virtio_mmio_dev *dev, uint32_t off, uint8_t *data,
			  unsigned int len, bool is_write)
{
	bool width_ok = len == 1 || len == 2 || len == 4 || len == 8;
	bool inside = width_ok && off < dev->model->config_len &&
		      len <= dev->model->config_len - off;

	if (!is_write) {
		if (inside)
			dev->model->config_read(dev, off, data, len);
		else
			dev->bad_accesses += !width_ok;
		return;
	}
	if (!inside || !dev->model->config_write ||
	    !dev->model->config_write(dev, off, data, len))
		dev->bad_accesses++;
}

static int virtio_mmio_io(struct machine *m, struct vcpu *vcpu, void *opaque,
			  uint64_t addr, uint8_t *data, unsigned int len, bool is_write)
{
	struct virtio_mmio_dev *dev = opaque;
	uint32_t off = (uint32_t)(addr - dev->base), val = 0;

	if (!is_write)
		memset(data, 0, len);
	pthread_mutex_lock(&dev->lock);
	if (off >= VIRTIO_MMIO_CONFIG) {
		config_access(dev, off - VIRTIO_MMIO_CONFIG, data, len, is_write);
	} else if (len != 4 || (off & 3)) {
		dev->bad_accesses++;
	} else if (is_write) {
		memcpy(&val, data, 4);
		reg_write(dev, off, val);
	} else {
		val = reg_read(dev, off);
		memcpy(data, &val, 4);
	}
	pthread_mutex_unlock(&dev->lock);
	return 0;
}

static unsigned int count_slots(const struct machine *m)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < m->bus.nr_mmio; i++)
		n += m->bus.mmio[i].io == virtio_mmio_io;
	return n;
}

int virtio_mmio_create(struct machine *m, const struct virtio_mmio_model *model,
		       uint64_t features, void *priv, struct virtio_mmio_dev **out)
{
	unsigned int slot = count_slots(m);
	struct virtio_mmio_dev *dev;
	int ret;

	if (slot >= VIRTIO_MMIO_SLOTS || m->bus.nr_acpi >= DEV_MAX_ACPI)
		return -ENOSPC;
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return -ENOMEM;
	dev->m = m;
	dev->model = model;
	dev->priv = priv;
	dev->base = VIRTIO_MMIO_BASE + slot * VIRTIO_MMIO_SLOT_SIZE;
	dev->gsi = VIRTIO_MMIO_GSI_BASE + slot;
	dev->features = features | (1ULL << VIRTIO_F_VERSION_1);
	pthread_mutex_init(&dev->lock, NULL);
	ret = dev_register_mmio(&m->bus, model->name, dev->base, VIRTIO_MMIO_SLOT_SIZE,
				virtio_mmio_io, dev);
	/* cannot fail now: the table has room (checked above) */
	if (!ret)
		ret = dev_announce(&m->bus, VIRTIO_MMIO_ACPI_HID, dev->base,
				   VIRTIO_MMIO_SLOT_SIZE, dev->gsi);
	if (ret) {
		pthread_mutex_destroy(&dev->lock);
		free(dev);
		return ret;
	}
	*out = dev;
	return 0;
}

void virtio_mmio_destroy(struct virtio_mmio_dev *dev)
{
	if (!dev)
		return;
	pthread_mutex_destroy(&dev->lock);
	free(dev);
}

unsigned int virtio_mmio_list(struct machine *m, struct virtio_mmio_info *out,
			      unsigned int max)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < m->bus.nr_mmio && n < max; i++) {
		struct virtio_mmio_dev *dev = m->bus.mmio[i].opaque;

		if (m->bus.mmio[i].io != virtio_mmio_io)
			continue;
		pthread_mutex_lock(&dev->lock);
		out[n++] = (struct virtio_mmio_info){
			.name = dev->model->name, .base = dev->base, .gsi = dev->gsi,
			.status = dev->status, .driver_features = dev->driver_features,
			.notifies = dev->notifies, .bad_rings = dev->bad_rings,
			.bad_accesses = dev->bad_accesses, .resets = dev->resets,
			.irq_errors = dev->irq_errors,
		};
		pthread_mutex_unlock(&dev->lock);
	}
	return n;
}
