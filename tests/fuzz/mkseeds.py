#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""
The seed inputs of the fuzz targets whose input is binary (virtio,
bzimage), written the way a guest driver and a kernel build write them,
so a fuzz run starts from requests the devices serve and kernels the
loaders load. Run from the top of the tree; rewrites
tests/fuzz/corpus/{virtio,bzimage}/ seeds of these names.

    tests/fuzz/mkseeds.py [BZIMAGE]   BZIMAGE: a real one, of which the
                                      first 16 KiB become a seed too
"""
import os
import struct
import sys

OUT = "tests/fuzz/corpus"

# --- virtio (tests/fuzz/fuzz_virtio.c's input format) ---

STATUS, DFSEL, DRVF, DRVFSEL = 0x070, 0x014, 0x020, 0x024
QSEL, QNUM, QREADY, QNOTIFY = 0x030, 0x038, 0x044, 0x050
QDESC, QAVAIL, QUSED = 0x080, 0x090, 0x0a0
ISR, IACK, CONFIG = 0x060, 0x064, 0x100
ACK, DRIVER, DRIVER_OK, FEATURES_OK = 1, 2, 4, 8
F_NEXT, F_WRITE = 1, 2


class Image:
    """Guest RAM from 0, as the harness copies it in."""

    def __init__(self):
        self.b = bytearray()

    def put(self, gpa, data):
        if len(self.b) < gpa + len(data):
            self.b.extend(bytes(gpa + len(data) - len(self.b)))
        self.b[gpa:gpa + len(data)] = data

    def desc(self, table, i, addr, length, flags=0, nxt=0):
        self.put(table + 16 * i, struct.pack("<QIHH", addr, length, flags, nxt))

    def avail(self, ring, heads):
        self.put(ring, struct.pack("<HH", 0, len(heads)))
        for i, h in enumerate(heads):
            self.put(ring + 4 + 2 * i, struct.pack("<H", h))


class Ops:
    def __init__(self, slot):
        # kind's device bits: bit 3 picks blk (0) or the balloon (1), bit 6 virtio-net
        self.sel = 0x40 if slot == 2 else slot << 3
        self.b = bytearray()

    def op(self, kind, off, val):
        self.b += struct.pack("<BHI", kind, off, val & 0xffffffff)

    def w(self, off, val):
        self.op(0 | self.sel, off, val)

    def r(self, off, width=4):
        self.op(1 | self.sel | {1: 0, 2: 1, 4: 2, 8: 3}[width] << 4, off, 0)

    def wn(self, off, val, width):
        self.op(2 | self.sel | {1: 0, 2: 1, 4: 2, 8: 3}[width] << 4, off, val)

    def store(self, gpa, val):
        self.op(3 | (gpa >> 16) << 3, gpa & 0xffff, val)

    def negotiate(self, features):
        for off, val in ((STATUS, 0), (STATUS, ACK), (STATUS, ACK | DRIVER),
                         (DFSEL, 0)):
            self.w(off, val)
        self.r(0x010)
        self.w(DFSEL, 1)
        self.r(0x010)
        self.w(DRVFSEL, 0)
        self.w(DRVF, features & 0xffffffff)
        self.w(DRVFSEL, 1)
        self.w(DRVF, features >> 32)
        self.w(STATUS, ACK | DRIVER | FEATURES_OK)
        self.r(STATUS)

    def queue(self, q, num, desc, avail, used):
        self.w(QSEL, q)
        self.r(0x034)
        self.w(QNUM, num)
        self.w(QDESC, desc)
        self.w(QDESC + 4, 0)
        self.w(QAVAIL, avail)
        self.w(QAVAIL + 4, 0)
        self.w(QUSED, used)
        self.w(QUSED + 4, 0)
        self.w(QREADY, 1)


def virtio_input(flags, image, ops):
    return bytes([flags]) + struct.pack("<H", len(image.b)) + bytes(image.b) + bytes(ops.b)


def blk_seed(readonly):
    img, ops = Image(), Ops(0)
    table, avail, used = 0x000, 0x100, 0x140
    hdr, status, data, ident = 0x200, 0x300, 0x10000, 0x20000
    reqs = [(0, 1, data, 1024), (1, 2, data, 512), (8, 0, ident, 20), (4, 0, 0, 0)]
    heads, d = [], 0
    for i, (typ, sector, buf, length) in enumerate(reqs):
        img.put(hdr + 16 * i, struct.pack("<IIQ", typ, 0, sector))
        heads.append(d)
        img.desc(table, d, hdr + 16 * i, 16, F_NEXT, d + 1)
        d += 1
        if length:
            img.desc(table, d, buf, length, F_NEXT | (F_WRITE if typ != 1 else 0), d + 1)
            d += 1
        img.desc(table, d, status + i, 1, F_WRITE)
        d += 1
    img.avail(avail, heads)
    feat = 1 << 32 | 1 << 1 | 1 << 2 | 1 << 6 | 1 << 9 | (1 << 5 if readonly else 0)
    ops.negotiate(feat)
    ops.queue(0, 16, table, avail, used)
    ops.w(STATUS, ACK | DRIVER | FEATURES_OK | DRIVER_OK)
    for off in range(0, 0x18, 4):
        ops.r(CONFIG + off)
    ops.r(CONFIG, 8)
    ops.w(QNOTIFY, 0)
    ops.r(ISR)
    ops.w(IACK, 1)
    # one more request: the first again, announced by avail->idx
    ops.store(avail + 2, 5 | heads[0] << 16)
    ops.w(QNOTIFY, 0)
    ops.w(STATUS, 0)
    return virtio_input(1 if readonly else 0, img, ops)


def balloon_seed(reporting):
    img, ops = Image(), Ops(1)
    qbase = [0x400 + q * 0x100 for q in range(4)]
    inflate, stats, deflate = 0x800, 0x840, 0x860
    pfns = [0x50, 0x51, 0x52, 0x4f, 0x10, 0xfffff]
    img.put(inflate, struct.pack("<%dI" % len(pfns), *pfns))
    img.put(deflate, struct.pack("<2I", 0x50, 0x51))
    img.put(stats, struct.pack("<HQHQ", 4, 1 << 26, 5, 1 << 27))
    bufs = [(inflate, 4 * len(pfns), 0), (deflate, 8, 0), (stats, 20, 0),
            (0x40000, 0x3000, F_WRITE)]
    nq = 4 if reporting else 3
    for q in range(nq):
        addr, length, flags = bufs[q]
        img.desc(qbase[q], 0, addr, length, flags)
        img.avail(qbase[q] + 0x40, [0])
    feat = 1 << 32 | 1 << 1 | (1 << 5 if reporting else 0)
    ops.negotiate(feat)
    for q in range(nq):
        ops.queue(q, 4, qbase[q], qbase[q] + 0x40, qbase[q] + 0x80)
    ops.w(QNOTIFY, 2)		# Linux primes the stats queue before DRIVER_OK
    ops.w(STATUS, ACK | DRIVER | FEATURES_OK | DRIVER_OK)
    ops.op(4, 0, 0x1000)		# host: balloon target
    ops.r(CONFIG)
    ops.wn(CONFIG + 4, 0x1000, 4)	# the guest says what it holds
    ops.w(QNOTIFY, 0)
    ops.w(QNOTIFY, 1)
    if reporting:
        ops.w(QNOTIFY, 3)
    ops.op(5 | 8, 0, 0)		# host: query, asking for fresh stats
    ops.store(qbase[2] + 0x40 + 2, 2)	# the stats buffer again
    ops.w(QNOTIFY, 2)
    ops.op(5, 0, 0)
    ops.op(7, 0, 0)
    ops.r(ISR)
    ops.w(IACK, 3)
    return virtio_input(0 if reporting else 2, img, ops)


def balloon_edge_seed():
    """PFNs up to the end of guest RAM (1 MiB) and past it, a reported range
    ending at it, then an inflate buffer that crosses it: the last breaks
    the ring, and a bounds check off by a page lets the device reach past
    guest RAM (the replay catches that, under ASan, in the real guest memory)."""
    img, ops = Image(), Ops(1)
    qbase = [0x400 + q * 0x100 for q in range(4)]
    inflate = 0x800
    pfns = [0xfd, 0xfe, 0xff, 0x100, 0xff]
    img.put(inflate, struct.pack("<%dI" % len(pfns), *pfns))
    img.desc(qbase[0], 0, inflate, 4 * len(pfns))
    img.desc(qbase[0], 1, 0xff800, 0x1000)
    img.avail(qbase[0] + 0x40, [0, 1])
    img.desc(qbase[2], 0, 0xfe000, 0x2000, F_WRITE)
    img.avail(qbase[2] + 0x40, [0])
    ops.negotiate(1 << 32 | 1 << 5)
    ops.queue(0, 4, qbase[0], qbase[0] + 0x40, qbase[0] + 0x80)
    ops.queue(2, 4, qbase[2], qbase[2] + 0x40, qbase[2] + 0x80)
    ops.w(STATUS, ACK | DRIVER | FEATURES_OK | DRIVER_OK)
    ops.w(QNOTIFY, 2)
    ops.w(QNOTIFY, 0)
    ops.op(5, 0, 0)
    return virtio_input(0, img, ops)


# --- bzimage (a kernel file: bzImage by the x86 boot protocol, or PVH ELF) ---

def net_seed():
    """virtio-net: both queues, two packets sent (one in two parts), receive buffers posted."""
    img, ops = Image(), Ops(2)
    rx, tx = (0x000, 0x100, 0x140), (0x400, 0x500, 0x540)
    frame = bytes(12) + b"\xff" * 6 + b"\x02\x00\x00\x00\x00\x01" + b"\x88\xb5" + bytes(46)
    img.put(0x8000, frame)
    img.desc(tx[0], 0, 0x8000, 12, F_NEXT, 1)
    img.desc(tx[0], 1, 0x800c, len(frame) - 12)
    img.desc(tx[0], 2, 0x8000, len(frame))
    img.avail(tx[1], [0, 2])
    for i in range(4):
        img.desc(rx[0], i, 0x9000 + 0x800 * i, 0x800, F_WRITE)
    img.avail(rx[1], [0, 1, 2, 3])
    # VERSION_1, MAC, STATUS, CSUM, GUEST_CSUM, HOST_TSO4
    ops.negotiate(1 << 32 | 1 << 5 | 1 << 16 | 1 << 0 | 1 << 1 | 1 << 11)
    ops.queue(0, 8, *rx)
    ops.queue(1, 8, *tx)
    ops.w(STATUS, ACK | DRIVER | FEATURES_OK | DRIVER_OK)
    for off in range(0, 0xc, 2):
        ops.r(CONFIG + off, 2)
    ops.w(QNOTIFY, 0)
    ops.w(QNOTIFY, 1)
    ops.r(ISR)
    ops.w(IACK, 1)
    ops.w(STATUS, 0)
    return virtio_input(0, img, ops)


def bzimage_seed(setup_sects, payload, init_size, version=0x020f):
    setup = (setup_sects or 4) + 1
    b = bytearray(setup * 512 + payload)
    b[0x1f1] = setup_sects
    struct.pack_into("<H", b, 0x1fe, 0xaa55)
    b[0x200:0x202] = bytes([0xeb, 0x6a])	# jmp: header ends at 0x26c
    b[0x202:0x206] = b"HdrS"
    struct.pack_into("<H", b, 0x206, version)
    b[0x211] = 0x01				# LOADED_HIGH
    struct.pack_into("<I", b, 0x22c, 0x7fffffff)	# initrd_addr_max
    struct.pack_into("<H", b, 0x236, 0x0003)	# XLF_KERNEL_64 | CAN_BE_LOADED_ABOVE_4G
    struct.pack_into("<I", b, 0x238, 2047)	# cmdline_size
    struct.pack_into("<I", b, 0x260, init_size)
    for i in range(setup * 512, len(b)):
        b[i] = (i * 7) & 0xff
    return bytes(b)


def pvh_seed():
    """vmlinux-like ELF64: one PT_LOAD at 1 MiB and a PT_NOTE with the PVH entry."""
    note = struct.pack("<III", 4, 4, 18) + b"Xen\0" + struct.pack("<I", 0x100000)
    code = bytes([0xf4] * 256)
    phoff, ph = 64, 56
    note_off = phoff + 2 * ph
    code_off = 0x200
    eh = b"\x7fELF" + bytes([2, 1, 1, 0]) + bytes(8)
    eh += struct.pack("<HHIQQQIHHHHHH", 2, 62, 1, 0x1000000, phoff, 0, 0, 64, ph, 2, 64, 0, 0)
    load = struct.pack("<IIQQQQQQ", 1, 7, code_off, 0xffffffff81000000, 0x100000,
                       len(code), len(code) + 0x1000, 0x1000)
    pnote = struct.pack("<IIQQQQQQ", 4, 4, note_off, 0, 0, len(note), len(note), 4)
    b = bytearray(eh + load + pnote + note)
    b.extend(bytes(code_off - len(b)))
    b.extend(code)
    return bytes(b)


def write(target, name, data):
    os.makedirs(os.path.join(OUT, target), exist_ok=True)
    with open(os.path.join(OUT, target, name), "wb") as f:
        f.write(data)


def main():
    write("virtio", "blk", blk_seed(False))
    write("virtio", "blk-readonly", blk_seed(True))
    write("virtio", "balloon", balloon_seed(True))
    write("virtio", "balloon-no-reporting", balloon_seed(False))
    write("virtio", "balloon-edge-of-ram", balloon_edge_seed())
    write("virtio", "net", net_seed())
    write("bzimage", "bzimage-small", bzimage_seed(1, 4096, 0x100000))
    write("bzimage", "bzimage-setup4", bzimage_seed(0, 4096, 0x400000, 0x020c))
    write("bzimage", "pvh", pvh_seed())
    write("bzimage", "flat", bytes([0xf4, 0xeb, 0xfd]) * 100)
    if len(sys.argv) > 1:
        with open(sys.argv[1], "rb") as f:
            write("bzimage", "linux-head", f.read(16384))


if __name__ == "__main__":
    main()
