// SPDX-License-Identifier: GPL-2.0
/*
 * virtio-net over a host tap: the VM config's `net` (up to MACHINE_NET_MAX
 * interfaces, a virtio-mmio slot each). One receive and one transmit
 * queue, the MAC address and link status in config space, and, where the
 * tap takes a virtio header (IFF_VNET_HDR), checksum and TCP segmentation
 * offloads both ways.
 *
 * The VMM hands each interface over as a tap descriptor (vmm/sys/tap.c
 * attaches named taps before the sandbox; libvirt passes its own).
 *
 * Packets never move on a vCPU thread: a notify only kicks the interface's
 * I/O thread (an eventfd), which polls the tap, the kick and its stop
 * event. Each step that touches the rings takes the device lock for one
 * chain (take it, copy, give it back); the tap's read and write happen
 * with the lock dropped, so a host request or a vCPU never waits behind
 * the host network.
 *
 * With a virtio header on the tap, its size is set to the 12 bytes of a
 * virtio 1.x header and packets pass between ring and tap as they are:
 * the kernel checks the header the guest wrote (a nonsense GSO type is a
 * refused write, counted). Without one (a descriptor handed over without
 * IFF_VNET_HDR), the device strips the header on transmit, writes a zero
 * one on receive and offers no offload.
 *
 * With mergeable receive buffers (MRG_RXBUF, always offered) a packet
 * spans as many receive chains as it needs; without, a receive chain too
 * short for the packet drops the packet (counted) and gives the chain
 * back empty; a packet read while the guest has posted no
 * buffer waits in the interface until one comes, and the tap is not
 * polled meanwhile, so the host's queue, not gpmm, holds what waits.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <poll.h>
#include <stddef.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "devices/device.h"
#include "devices/virtio/virtio_mmio.h"
#include "devices/virtio/virtio_net.h"

#define NET_QUEUE_SIZE		256
#define NET_RXQ			0
#define NET_TXQ			1
#define NET_HDR_BYTES		sizeof(struct virtio_net_hdr)
/* the largest frame a tap gives or takes with TSO: 64 KiB of IP and the Ethernet header */
#define NET_FRAME_MAX		(65535 + 14 + 4)
#define NET_BUF_BYTES		(NET_HDR_BYTES + NET_FRAME_MAX)
/* chains one merged packet may fill: 64 KiB in the 1.5 KiB buffers Linux posts */
#define NET_MRG_MAX		64

struct net_if {
	struct virtio_mmio_dev *mmio;
	int tap;
	bool vnet_hdr;			/* the tap reads and writes virtio headers */
	uint8_t mac[6];
	unsigned int offload_set;	/* TUN_F_* the tap was last given */
	int kick;			/* eventfd: the driver added buffers */
	int stop;			/* eventfd: the interface goes away */
	pthread_t io;
	bool io_started;
	/* the I/O thread's own */
	uint32_t rx_pending;		/* bytes of buf waiting for a receive buffer */
	struct virtq_chain chain;
	struct virtq_chain first;	/* a merged packet's first chain */
	uint8_t buf[NET_BUF_BYTES];
	/* notifies so far, and how many of them the I/O thread has served (device lock) */
	uint64_t kicks, served;
	pthread_cond_t idle;		/* served caught up with kicks */
	/* counters, under the device lock */
	uint64_t rx_packets, rx_bytes, tx_packets, tx_bytes, rx_dropped, tx_dropped, tx_errors;
	uint64_t rx_waits;		/* a packet found too few receive buffers posted */
};

struct virtio_net {
	struct net_if *ifs[MACHINE_NET_MAX];
	unsigned int nr;
};

static unsigned int net_nr_queues(struct virtio_mmio_dev *dev)
{
	return 2;
}

static void net_config_read(struct virtio_mmio_dev *dev, uint32_t off, uint8_t *data,
			    unsigned int len)
{
	struct net_if *n = dev->priv;
	uint8_t cfg[VIRTIO_NET_CFG_LEN] = { 0 };
	uint16_t status = VIRTIO_NET_S_LINK_UP, pairs = 1;

	memcpy(cfg + VIRTIO_NET_CFG_MAC, n->mac, 6);
	memcpy(cfg + VIRTIO_NET_CFG_STATUS, &status, 2);
	memcpy(cfg + VIRTIO_NET_CFG_MAX_PAIRS, &pairs, 2);
	memcpy(data, cfg + off, len);
}

static void kick(int efd)
{
	uint64_t one = 1;

	/* a full counter is a kick already pending: nothing is lost */
	if (write(efd, &one, sizeof(one)) < 0)
		return;
}

static int net_notify(struct virtio_mmio_dev *dev, unsigned int qi, char *why)
{
	struct net_if *n = dev->priv;

	n->kicks++;
	kick(n->kick);
	return 0;
}

static void net_reset(struct virtio_mmio_dev *dev)
{
	struct net_if *n = dev->priv;

	n->kicks++;
	kick(n->kick);
}

/*
 * The tap segments and checksums for the guest only what the driver said
 * it takes (GUEST_*); told again whenever the driver's choice changes
 * (a reset, a new driver).
 */
static void __net_sync_offload(struct net_if *n)
{
	struct virtio_mmio_dev *dev = n->mmio;
	unsigned int want = 0;

	if (!n->vnet_hdr)
		return;
	if (__virtio_mmio_has(dev, VIRTIO_NET_F_GUEST_CSUM)) {
		want |= TUN_F_CSUM;
		if (__virtio_mmio_has(dev, VIRTIO_NET_F_GUEST_TSO4))
			want |= TUN_F_TSO4;
		if (__virtio_mmio_has(dev, VIRTIO_NET_F_GUEST_TSO6))
			want |= TUN_F_TSO6;
	}
	if (want != n->offload_set && !ioctl(n->tap, TUNSETOFFLOAD, want))
		n->offload_set = want;
}

/*
 * Give back chain @head of queue @qi with @len bytes written, and raise
 * the interrupt unless the driver polls: in a nested guest each interrupt
 * costs more than the packet.
 */
static void __net_push(struct net_if *n, unsigned int qi, uint16_t head, uint32_t len)
{
	struct virtq *q = &n->mmio->vq[qi];

	if (virtq_push(n->mmio->m, q, head, len) == 0 && virtq_wants_interrupt(n->mmio->m, q))
		__virtio_mmio_used(n->mmio);
}

/*
 * Take one transmit chain and copy its packet out: its length (header
 * included), 0 when the queue is empty, -1 when the chain was given back
 * without a packet (too long, too short), -EINVAL when the ring is broken.
 */
static int __net_tx_take(struct net_if *n, char *why)
{
	struct virtio_mmio_dev *dev = n->mmio;
	struct virtq_chain *c = &n->chain;
	int ret;

	if (!__virtio_mmio_can_serve(dev, NET_TXQ))
		return 0;
	ret = virtq_pop(dev->m, &dev->vq[NET_TXQ], c, why);
	if (ret <= 0)
		return ret;
	if (c->read_len < NET_HDR_BYTES || c->read_len > NET_BUF_BYTES ||
	    virtq_read(dev->m, c, 0, n->buf, c->read_len))
		ret = -1;
	else
		ret = (int)c->read_len;
	__net_push(n, NET_TXQ, c->head, 0);
	if (ret < 0)
		n->tx_dropped++;
	return ret;
}

/* Everything the guest queued to send, to the tap; the lock is dropped for each write. */
static void net_tx(struct net_if *n)
{
	struct virtio_mmio_dev *dev = n->mmio;
	char why[VIRTQ_WHY_LEN];

	for (unsigned int i = 0; i < NET_QUEUE_SIZE; i++) {
		uint32_t skip = n->vnet_hdr ? 0 : NET_HDR_BYTES;
		ssize_t w;
		int len;

		pthread_mutex_lock(&dev->lock);
		len = __net_tx_take(n, why);
		if (len == -EINVAL)
			__virtio_mmio_broken(dev, why);
		pthread_mutex_unlock(&dev->lock);
		if (len == -1)
			continue;
		if (len <= 0)
			return;
		w = write(n->tap, n->buf + skip, (size_t)len - skip);
		pthread_mutex_lock(&dev->lock);
		if (w < 0) {
			n->tx_errors++;
		} else {
			n->tx_packets++;
			n->tx_bytes += (uint64_t)len - NET_HDR_BYTES;
		}
		pthread_mutex_unlock(&dev->lock);
	}
	/* more than a queue's worth: come back after a look at the tap */
	kick(n->kick);
}


/*
 * Without mergeable buffers a packet goes into one chain: one too short
 * for it gets the packet dropped and comes back empty.
 */
static bool __net_rx_one(struct net_if *n, char *why)
{
	struct virtio_mmio_dev *dev = n->mmio;
	struct virtq_chain *c = &n->chain;
	uint32_t len = n->rx_pending;
	int ret = virtq_pop(dev->m, &dev->vq[NET_RXQ], c, why);

	if (ret < 0)
		__virtio_mmio_broken(dev, why);
	if (ret <= 0)
		return false;
	if (c->write_len < len || virtq_write(dev->m, c, 0, n->buf, len)) {
		n->rx_dropped++;
		len = 0;
	} else {
		n->rx_packets++;
		n->rx_bytes += len > NET_HDR_BYTES ? len - NET_HDR_BYTES : 0;
	}
	__net_push(n, NET_RXQ, c->head, len);
	return true;
}

/*
 * With mergeable buffers (MRG_RXBUF) a packet fills as many chains as it
 * needs, in order, and the first one's header says how many
 * (num_buffers). Until the driver has posted enough of them, those taken
 * are put back and the packet waits. A chain with no room breaks the
 * ring; a packet that needs more than NET_MRG_MAX chains is dropped.
 */
static bool __net_rx_merge(struct net_if *n, char *why)
{
	struct virtio_mmio_dev *dev = n->mmio;
	struct virtq *q = &dev->vq[NET_RXQ];
	uint32_t len = n->rx_pending, off = 0, part[NET_MRG_MAX];
	uint16_t head[NET_MRG_MAX], nr = 0;
	bool ok = true;

	while (off < len && nr < NET_MRG_MAX) {
		struct virtq_chain *c = nr ? &n->chain : &n->first;
		int ret = virtq_pop(dev->m, q, c, why);

		if (ret > 0 && !c->write_len) {
			snprintf(why, VIRTQ_WHY_LEN, "receive chain %u has nothing to write", c->head);
			ret = -EINVAL;
		}
		if (ret < 0)
			__virtio_mmio_broken(dev, why);
		if (ret <= 0) {
			virtq_unpop(q, nr);
			return false;
		}
		part[nr] = c->write_len < len - off ? (uint32_t)c->write_len : len - off;
		ok &= !virtq_write(dev->m, c, 0, n->buf + off, part[nr]);
		head[nr++] = c->head;
		off += part[nr - 1];
	}
	ok &= off == len && !virtq_write(dev->m, &n->first, offsetof(struct virtio_net_hdr,
							     num_buffers), &nr, sizeof(nr));
	if (ok) {
		n->rx_packets++;
		n->rx_bytes += len > NET_HDR_BYTES ? len - NET_HDR_BYTES : 0;
	} else {
		n->rx_dropped++;
	}
	for (uint16_t i = 0; i < nr; i++)
		__net_push(n, NET_RXQ, head[i], ok ? part[i] : 0);
	return true;
}

/*
 * Give the pending packet to the guest: true when it went (or was dropped),
 * false when the driver has not posted the buffers it needs.
 */
static bool __net_rx_give(struct net_if *n, char *why)
{
	struct virtio_mmio_dev *dev = n->mmio;

	if (!__virtio_mmio_can_serve(dev, NET_RXQ))
		return false;
	((struct virtio_net_hdr *)n->buf)->num_buffers = 1;
	if (__virtio_mmio_has(dev, VIRTIO_NET_F_MRG_RXBUF))
		return __net_rx_merge(n, why);
	return __net_rx_one(n, why);
}

/* Read packets from the tap while the guest has buffers for them. */
static void net_rx(struct net_if *n)
{
	struct virtio_mmio_dev *dev = n->mmio;
	uint32_t skip = n->vnet_hdr ? 0 : NET_HDR_BYTES;
	char why[VIRTQ_WHY_LEN];

	for (unsigned int i = 0; i < NET_QUEUE_SIZE; i++) {
		bool gone;

		if (!n->rx_pending) {
			ssize_t r = read(n->tap, n->buf + skip, NET_BUF_BYTES - skip);

			if (r <= 0)
				return;
			if (skip)
				memset(n->buf, 0, NET_HDR_BYTES);
			n->rx_pending = (uint32_t)r + skip;
		}
		pthread_mutex_lock(&dev->lock);
		__net_sync_offload(n);
		gone = __net_rx_give(n, why);
		n->rx_waits += !gone;
		pthread_mutex_unlock(&dev->lock);
		if (!gone)
			return;
		n->rx_pending = 0;
	}
}

static int cond_init_monotonic(pthread_cond_t *c)
{
	pthread_condattr_t a;
	int ret = pthread_condattr_init(&a);

	if (!ret)
		ret = pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	if (!ret)
		ret = pthread_cond_init(c, &a);
	pthread_condattr_destroy(&a);
	return ret;
}

static void drain(int efd)
{
	uint64_t v;

	if (read(efd, &v, sizeof(v)) < 0)
		return;
}

static void *net_io_thread(void *arg)
{
	struct net_if *n = arg;

	for (;;) {
		struct pollfd p[3] = {
			{ .fd = n->stop, .events = POLLIN },
			{ .fd = n->kick, .events = POLLIN },
			/* a packet waits for a buffer: only a kick can help */
			{ .fd = n->tap, .events = n->rx_pending ? 0 : POLLIN },
		};

		if (poll(p, 3, -1) < 0 && errno != EINTR)
			break;
		if (p[0].revents)
			break;
		if (p[1].revents) {
			uint64_t seen;

			pthread_mutex_lock(&n->mmio->lock);
			seen = n->kicks;
			pthread_mutex_unlock(&n->mmio->lock);
			drain(n->kick);
			net_tx(n);
			net_rx(n);
			pthread_mutex_lock(&n->mmio->lock);
			n->served = seen;
			pthread_cond_broadcast(&n->idle);
			pthread_mutex_unlock(&n->mmio->lock);
		} else if (p[2].revents & POLLIN) {
			net_rx(n);
		}
	}
	return NULL;
}

int virtio_net_settle(struct machine *m)
{
	struct virtio_net *v = dev_priv(m, &virtio_net_device);

	for (unsigned int i = 0; v && i < v->nr; i++) {
		struct net_if *n = v->ifs[i];
		struct timespec until;
		int ret = 0;

		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += 10;
		pthread_mutex_lock(&n->mmio->lock);
		while (n->served < n->kicks && ret != ETIMEDOUT)
			ret = pthread_cond_timedwait(&n->idle, &n->mmio->lock, &until);
		pthread_mutex_unlock(&n->mmio->lock);
		if (ret)
			return -ETIMEDOUT;
	}
	return 0;
}

static const struct virtio_mmio_model net_model = {
	.name = "virtio-net",
	.device_id = VIRTIO_ID_NET,
	.queue_max = NET_QUEUE_SIZE,
	.config_len = VIRTIO_NET_CFG_LEN,
	.nr_queues = net_nr_queues,
	.config_read = net_config_read,
	.notify = net_notify,
	.reset = net_reset,
};

/*
 * The tap's descriptor (the VMM attached it by name, or was handed it):
 * checked to be a tap, made non-blocking, and where it reads and writes a
 * virtio header, that header made virtio 1.x's 12 bytes, offloads or not.
 */
static int net_open_tap(struct machine *m, const struct machine_net *cfg, struct net_if *n)
{
	struct ifreq ifr = { 0 };
	int hdr = NET_HDR_BYTES;

	n->tap = cfg->fd < 0 ? -1 : fcntl(cfg->fd, F_DUPFD_CLOEXEC, 3);
	if (n->tap < 0 || ioctl(n->tap, TUNGETIFF, &ifr) < 0 ||
	    (ifr.ifr_flags & (IFF_TAP | IFF_TUN)) != IFF_TAP ||
	    fcntl(n->tap, F_SETFL, fcntl(n->tap, F_GETFL) | O_NONBLOCK) < 0) {
		if (cfg->tap[0])
			snprintf(m->why, sizeof(m->why), "net tap=%s: not attached", cfg->tap);
		else
			snprintf(m->why, sizeof(m->why), "net fd=%d: not an open tap device (a "
				 "tun, or no tun/tap at all)", cfg->fd);
		return -EINVAL;
	}
	n->vnet_hdr = ifr.ifr_flags & IFF_VNET_HDR;
	if (n->vnet_hdr && ioctl(n->tap, TUNSETVNETHDRSZ, &hdr) < 0) {
		snprintf(m->why, sizeof(m->why), "net: the tap's virtio header cannot be set "
			 "to %d bytes", hdr);
		return -EINVAL;
	}
	/*
	 * No offload until the driver takes one: a persistent tap keeps what
	 * its last user set, and a tap without headers that still segments
	 * and leaves checksums to its reader hands the guest packets it drops.
	 */
	if (ioctl(n->tap, TUNSETOFFLOAD, 0) < 0) {
		snprintf(m->why, sizeof(m->why), "net: the tap's offloads cannot be turned off: %s",
			 strerror(errno));
		return -EINVAL;
	}
	n->offload_set = 0;
	return 0;
}

static uint64_t net_features(const struct net_if *n, const struct machine_net *cfg)
{
	uint64_t f = (1ULL << VIRTIO_NET_F_MAC) | (1ULL << VIRTIO_NET_F_STATUS) |
		     (1ULL << VIRTIO_NET_F_MRG_RXBUF);

	if (n->vnet_hdr && cfg->offload)
		f |= (1ULL << VIRTIO_NET_F_CSUM) | (1ULL << VIRTIO_NET_F_GUEST_CSUM) |
		     (1ULL << VIRTIO_NET_F_HOST_TSO4) | (1ULL << VIRTIO_NET_F_HOST_TSO6) |
		     (1ULL << VIRTIO_NET_F_GUEST_TSO4) | (1ULL << VIRTIO_NET_F_GUEST_TSO6);
	return f;
}

static void net_if_free(struct net_if *n)
{
	if (!n)
		return;
	if (n->io_started) {
		kick(n->stop);
		pthread_join(n->io, NULL);
	}
	if (n->mmio)
		virtio_mmio_destroy(n->mmio);
	if (n->tap >= 0)
		close(n->tap);
	if (n->kick >= 0)
		close(n->kick);
	if (n->stop >= 0)
		close(n->stop);
	pthread_cond_destroy(&n->idle);
	free(n);
}

static int net_if_new(struct machine *m, const struct machine_net *cfg, struct net_if **out)
{
	struct net_if *n = calloc(1, sizeof(*n));
	int ret;

	*out = n;
	if (!n)
		return -ENOMEM;
	n->tap = n->kick = n->stop = -1;
	if (cond_init_monotonic(&n->idle))
		return -ENOMEM;
	n->kick = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	n->stop = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (n->kick < 0 || n->stop < 0)
		return -errno;
	ret = net_open_tap(m, cfg, n);
	if (ret)
		return ret;
	memcpy(n->mac, cfg->mac, 6);
	if (!cfg->mac_set) {
		n->mac[0] = 0x52;
		n->mac[1] = 0x54;
		n->mac[2] = 0x00;
		if (getrandom(n->mac + 3, 3, 0) != 3)
			return -EIO;
	}
	ret = virtio_mmio_create(m, &net_model, net_features(n, cfg), n, &n->mmio);
	if (ret)
		return ret;
	ret = -pthread_create(&n->io, NULL, net_io_thread, n);
	n->io_started = !ret;
	return ret;
}

int virtio_net_query(struct machine *m, unsigned int i, struct virtio_net_info *info)
{
	struct virtio_net *v = dev_priv(m, &virtio_net_device);
	struct net_if *n = v && i < v->nr ? v->ifs[i] : NULL;

	if (!n || !n->mmio)
		return -ENODEV;
	pthread_mutex_lock(&n->mmio->lock);
	*info = (struct virtio_net_info){
		.vnet_hdr = n->vnet_hdr,
		.offloads = n->vnet_hdr && __virtio_mmio_has(n->mmio, VIRTIO_NET_F_CSUM),
		.rx_packets = n->rx_packets, .rx_bytes = n->rx_bytes,
		.tx_packets = n->tx_packets, .tx_bytes = n->tx_bytes,
		.rx_dropped = n->rx_dropped, .tx_dropped = n->tx_dropped,
		.tx_errors = n->tx_errors, .rx_waits = n->rx_waits,
	};
	memcpy(info->mac, n->mac, 6);
	pthread_mutex_unlock(&n->mmio->lock);
	return 0;
}

static void net_exit(struct machine *m, void *priv)
{
	struct virtio_net *v = priv;

	if (!v)
		return;
	for (unsigned int i = 0; i < v->nr; i++)
		net_if_free(v->ifs[i]);
	free(v);
}

static int net_init(struct machine *m, void **priv)
{
	struct virtio_net *v;
	int ret = 0;

	*priv = NULL;
	if (!m->cfg.nr_net)
		return 0;
	if (m->cfg.nr_net > MACHINE_NET_MAX)
		return -EINVAL;
	v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (unsigned int i = 0; i < m->cfg.nr_net && !ret; i++)
		ret = net_if_new(m, &m->cfg.net[i], &v->ifs[v->nr++]);
	if (ret) {
		net_exit(m, v);
		return ret;
	}
	*priv = v;
	return 0;
}

const struct device_ops virtio_net_device = {
	.name = "virtio-net",
	.init = net_init,
	.exit = net_exit,
};
