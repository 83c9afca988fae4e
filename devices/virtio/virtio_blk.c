// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-blk over a raw image file (or block device): the VM config's
 * `disk`, read-only with `disk_readonly` or when the file cannot be opened
 * for writing. One request queue, served on the vCPU that notifies it:
 * data moves with pread/pwrite straight between the file and guest RAM,
 * FLUSH is fdatasync, GET_ID gives the image's file name (20 bytes at
 * most, as the spec has it).
 *
 * A request's shape is checked before anything moves: a header the device
 * can read, a status byte it can write; data readable for OUT, writable
 * for IN; whole sectors inside the disk. A chain without header or status
 * breaks the ring (the device needs a reset); a request that is well
 * formed but cannot be done answers IOERR (out of range, read-only, the
 * host's I/O failed) or UNSUPP (a type gpmm does not implement).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "devices/device.h"
#include "devices/virtio/virtio_mmio.h"

#define BLK_QUEUE_SIZE		256
/* data segments per request: the queue also holds the header and status */
#define BLK_SEG_MAX		(BLK_QUEUE_SIZE - 2)
#define BLK_SIZE_MAX		(1U << 20)
#define BLK_HDR_BYTES		sizeof(struct virtio_blk_req_hdr)

struct virtio_blk {
	struct virtio_mmio_dev *mmio;
	int fd;
	bool ro;
	uint64_t sectors;
	char id[VIRTIO_BLK_ID_BYTES];
	struct virtq_chain chain;	/* scratch, under the device lock */
};

static unsigned int blk_nr_queues(struct virtio_mmio_dev *dev)
{
	return 1;
}

static void blk_config_read(struct virtio_mmio_dev *dev, uint32_t off, uint8_t *data,
			    unsigned int len)
{
	struct virtio_blk *b = dev->priv;
	uint8_t cfg[0x18] = { 0 };
	uint32_t size_max = BLK_SIZE_MAX, seg_max = BLK_SEG_MAX;
	uint32_t blk_size = VIRTIO_BLK_SECTOR_SIZE;

	memcpy(cfg + VIRTIO_BLK_CFG_CAPACITY, &b->sectors, 8);
	memcpy(cfg + VIRTIO_BLK_CFG_SIZE_MAX, &size_max, 4);
	memcpy(cfg + VIRTIO_BLK_CFG_SEG_MAX, &seg_max, 4);
	memcpy(cfg + VIRTIO_BLK_CFG_BLK_SIZE, &blk_size, 4);
	memcpy(data, cfg + off, len);
}

struct blk_io {
	int fd;
	uint64_t pos;		/* file offset of the transfer's first byte */
	bool write;		/* to the file */
};

/*
 * One piece of guest buffer. Short transfers are retried; a read past the
 * end of a file that shrank under us gives zeros, never what the buffer
 * held before.
 */
static int blk_piece(void *opaque, uint8_t *host, uint64_t len, uint64_t done)
{
	struct blk_io *io = opaque;

	while (len) {
		off_t at = (off_t)(io->pos + done);
		ssize_t n = io->write ? pwrite(io->fd, host, len, at)
				      : pread(io->fd, host, len, at);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || (n == 0 && io->write))
			return -EIO;
		if (n == 0) {
			memset(host, 0, len);
			return 0;
		}
		host += n;
		done += (uint64_t)n;
		len -= (uint64_t)n;
	}
	return 0;
}

static bool in_disk(const struct virtio_blk *b, uint64_t sector, uint64_t bytes)
{
	return !(bytes % VIRTIO_BLK_SECTOR_SIZE) && sector <= b->sectors &&
	       bytes / VIRTIO_BLK_SECTOR_SIZE <= b->sectors - sector;
}

/* Carry out one well-formed request; the status it ends with. */
static uint8_t blk_do(struct virtio_blk *b, const struct virtq_chain *c,
		      const struct virtio_blk_req_hdr *h, uint32_t *written)
{
	struct machine *m = b->mmio->m;
	uint64_t in_len = c->write_len - 1, out_len = c->read_len - BLK_HDR_BYTES;
	struct blk_io io = { b->fd, h->sector * VIRTIO_BLK_SECTOR_SIZE, false };
	size_t n;

	switch (h->type) {
	case VIRTIO_BLK_T_IN:
		if (!in_disk(b, h->sector, in_len) ||
		    virtq_walk(m, c, true, 0, in_len, blk_piece, &io))
			return VIRTIO_BLK_S_IOERR;
		*written = (uint32_t)in_len;
		return VIRTIO_BLK_S_OK;
	case VIRTIO_BLK_T_OUT:
		io.write = true;
		if (b->ro || !in_disk(b, h->sector, out_len) ||
		    virtq_walk(m, c, false, BLK_HDR_BYTES, out_len, blk_piece, &io))
			return VIRTIO_BLK_S_IOERR;
		return VIRTIO_BLK_S_OK;
	case VIRTIO_BLK_T_FLUSH:
		return !b->ro && fdatasync(b->fd) ? VIRTIO_BLK_S_IOERR : VIRTIO_BLK_S_OK;
	case VIRTIO_BLK_T_GET_ID:
		n = in_len < sizeof(b->id) ? in_len : sizeof(b->id);
		if (virtq_write(m, c, 0, b->id, n))
			return VIRTIO_BLK_S_IOERR;
		*written = (uint32_t)n;
		return VIRTIO_BLK_S_OK;
	default:
		return VIRTIO_BLK_S_UNSUPP;
	}
}

static int blk_request(struct virtio_blk *b, const struct virtq_chain *c, char *why)
{
	struct machine *m = b->mmio->m;
	struct virtio_blk_req_hdr h;
	uint32_t written = 0;
	uint8_t status;

	if (c->read_len < BLK_HDR_BYTES || c->write_len < 1) {
		snprintf(why, VIRTQ_WHY_LEN, "request %u without a readable header and a "
			 "writable status byte", c->head);
		return -EINVAL;
	}
	if (virtq_read(m, c, 0, &h, sizeof(h)))
		return -EFAULT;
	status = blk_do(b, c, &h, &written);
	if (virtq_write(m, c, c->write_len - 1, &status, 1))
		return -EFAULT;
	return virtq_push(m, &b->mmio->vq[0], c->head, written + 1);
}

/*
 * Serve what is pending, at most one queue's worth: the driver notifies
 * after each request it adds, so what arrives meanwhile has a notify of
 * its own behind this one.
 */
static int blk_notify(struct virtio_mmio_dev *dev, unsigned int qi, char *why)
{
	struct virtio_blk *b = dev->priv;
	struct virtq *q = &dev->vq[qi];
	int ret = 0, done = 0;

	for (unsigned int n = 0; n < q->num && !machine_stopping(dev->m); n++) {
		ret = virtq_pop(dev->m, q, &b->chain, why);
		if (ret <= 0)
			break;
		ret = blk_request(b, &b->chain, why);
		if (ret == -EFAULT)
			snprintf(why, VIRTQ_WHY_LEN, "request memory could not be backed");
		if (ret)
			break;
		done++;
	}
	if (done)
		__virtio_mmio_used(dev);
	return ret < 0 ? -EINVAL : 0;
}

static const struct virtio_mmio_model blk_model = {
	.name = "virtio-blk",
	.device_id = VIRTIO_ID_BLOCK,
	.queue_max = BLK_QUEUE_SIZE,
	.config_len = 0x18,
	.nr_queues = blk_nr_queues,
	.config_read = blk_config_read,
	.notify = blk_notify,
};

/*
 * Open the image: read-write unless the config says read-only or the file
 * refuses writing. An exclusive lock (shared when read-only) keeps two VMs
 * from writing one image. The reason for a refusal goes to m->why,
 * which the VMM passes on to the user.
 */
static int blk_open(struct machine *m, struct virtio_blk *b)
{
	const char *path = m->cfg.disk;
	char tmp[PATH_MAX], *base;
	struct stat st;
	uint64_t bytes = 0;
	int ret;

	b->ro = m->cfg.disk_readonly;
	b->fd = b->ro ? -1 : open(path, O_RDWR | O_CLOEXEC);
	if (b->fd < 0 && (b->ro || errno == EACCES || errno == EROFS || errno == EPERM)) {
		b->ro = true;
		b->fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	if (b->fd < 0 || fstat(b->fd, &st) < 0)
		goto fail;
	if (S_ISBLK(st.st_mode)) {
		if (ioctl(b->fd, BLKGETSIZE64, &bytes) < 0)
			goto fail;
	} else if (S_ISREG(st.st_mode)) {
		bytes = (uint64_t)st.st_size;
	} else {
		errno = EINVAL;
		goto fail;
	}
	if (flock(b->fd, (b->ro ? LOCK_SH : LOCK_EX) | LOCK_NB) < 0) {
		snprintf(m->why, sizeof(m->why), "disk %.3000s is in use by another VM", path);
		return -EBUSY;
	}
	b->sectors = bytes / VIRTIO_BLK_SECTOR_SIZE;
	snprintf(tmp, sizeof(tmp), "%s", path);
	base = basename(tmp);
	/* the spec's ID: 20 bytes, NUL-terminated only when shorter */
	memcpy(b->id, base, strnlen(base, sizeof(b->id)));
	return 0;
fail:
	ret = errno;
	snprintf(m->why, sizeof(m->why), "cannot use disk %.3000s: %s", path,
		 ret == EINVAL ? "not a regular file or block device" : strerror(ret));
	return -ret;
}

static void blk_exit(struct machine *m, void *priv)
{
	struct virtio_blk *b = priv;

	if (!b)
		return;
	virtio_mmio_destroy(b->mmio);
	if (b->fd >= 0)
		close(b->fd);
	free(b);
}

static int blk_init(struct machine *m, void **priv)
{
	uint64_t features = (1ULL << VIRTIO_BLK_F_SIZE_MAX) | (1ULL << VIRTIO_BLK_F_SEG_MAX) |
			    (1ULL << VIRTIO_BLK_F_BLK_SIZE) | (1ULL << VIRTIO_BLK_F_FLUSH);
	struct virtio_blk *b;
	int ret;

	*priv = NULL;
	if (!m->cfg.disk || !m->cfg.disk[0])
		return 0;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	ret = blk_open(m, b);
	if (!ret)
		ret = virtio_mmio_create(m, &blk_model, features |
					 (b->ro ? 1ULL << VIRTIO_BLK_F_RO : 0), b, &b->mmio);
	if (ret) {
		blk_exit(m, b);
		return ret;
	}
	*priv = b;
	return 0;
}

const struct device_ops virtio_blk_device = {
	.name = "virtio-blk",
	.init = blk_init,
	.exit = blk_exit,
};
