// SPDX-License-Identifier: GPL-2.0
/*
 * The QEMU command line libvirt 9.0 generates (../shared/notes: the probe
 * and the start of a domain, with a pty or a virtlogd file serial, a
 * balloon and a raw disk), read into gpmm's config; and what gpmm refuses,
 * with the sentence libvirt will show. Then a QEMU user's own command
 * lines (-nographic, -serial ..., -m 1G, -drive), what -help and -version
 * print, and the sentences a hand-typed refusal gets.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "tests/suite.h"
#include "vmm/qemu/qemu_args.h"

#define ARGC(a) ((int)(sizeof(a) / sizeof((a)[0])))

static char err[512];
static struct qemu_cmdline q;

static void test_probe(void)
{
	char *argv[] = { "gpmm", "-S", "-no-user-config", "-nodefaults", "-nographic",
		"-machine", "none,accel=kvm:tcg", "-qmp",
		"unix:/var/lib/libvirt/qemu/qmp-X/qmp.monitor,server=on,wait=off",
		"-pidfile", "/var/lib/libvirt/qemu/qmp-X/qmp.pid", "-daemonize" };

	CU_ASSERT(qemu_args_is_probe(ARGC(argv), argv));
	CU_ASSERT_EQUAL(qemu_args_parse(ARGC(argv), argv, &q, err, sizeof(err)), 0);
	CU_ASSERT(q.probe);
}

static void test_domain_start(void)
{
	char *argv[] = { "gpmm", "-name", "guest=probe1,debug-threads=on", "-S",
		"-object", "{\"qom-type\":\"secret\",\"id\":\"masterKey0\",\"format\":\"raw\","
			   "\"file\":\"/var/lib/libvirt/qemu/domain-2-probe1/master-key.aes\"}",
		"-machine", "pc-i440fx-7.2,usb=off,dump-guest-core=off,memory-backend=pc.ram",
		"-accel", "kvm", "-cpu", "qemu64", "-m", "256",
		"-object", "{\"qom-type\":\"memory-backend-ram\",\"id\":\"pc.ram\",\"size\":268435456}",
		"-overcommit", "mem-lock=off", "-smp", "2,sockets=2,cores=1,threads=1",
		"-uuid", "0b3b6bd8-5a2c-4a41-9c0c-3e5a1a8b7c11", "-display", "none",
		"-no-user-config", "-nodefaults",
		"-chardev", "socket,id=charmonitor,fd=31,server=on,wait=off",
		"-mon", "chardev=charmonitor,id=monitor,mode=control",
		"-rtc", "base=utc", "-no-shutdown", "-no-acpi", "-boot", "strict=on",
		"-kernel", "/srv/vmlinuz", "-initrd", "/srv/initrd.gz",
		"-append", "console=ttyS0 panic=-1 loglevel=7",
		"-add-fd", "set=0,fd=32,opaque=serial0-source",
		"-chardev", "file,id=charserial0,path=/dev/fdset/0,append=on",
		"-device", "{\"driver\":\"isa-serial\",\"chardev\":\"charserial0\",\"id\":\"serial0\",\"index\":0}",
		"-audiodev", "{\"id\":\"audio1\",\"driver\":\"none\"}",
		"-blockdev", "{\"driver\":\"file\",\"filename\":\"/srv/disk.img\",\"node-name\":\"libvirt-1-storage\",\"auto-read-only\":true,\"discard\":\"unmap\"}",
		"-blockdev", "{\"node-name\":\"libvirt-1-format\",\"read-only\":true,\"driver\":\"raw\",\"file\":\"libvirt-1-storage\"}",
		"-device", "{\"driver\":\"virtio-blk-pci\",\"bus\":\"pci.0\",\"addr\":\"0x4\",\"drive\":\"libvirt-1-format\",\"id\":\"virtio-disk0\",\"bootindex\":1}",
		"-device", "{\"driver\":\"virtio-balloon-pci\",\"id\":\"balloon0\",\"bus\":\"pci.0\",\"addr\":\"0x3\"}",
		"-netdev", "{\"type\":\"tap\",\"fd\":\"33\",\"vhost\":true,\"vhostfd\":\"34\",\"id\":\"hostnet0\"}",
		"-device", "{\"driver\":\"virtio-net-pci\",\"netdev\":\"hostnet0\",\"id\":\"net0\",\"mac\":\"52:54:00:6b:3c:58\",\"bus\":\"pci.0\",\"addr\":\"0x2\"}",
		"-sandbox", "on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny",
		"-msg", "timestamp=on" };

	CU_ASSERT_FALSE(qemu_args_is_probe(ARGC(argv), argv));
	CU_ASSERT_EQUAL_FATAL(qemu_args_parse(ARGC(argv), argv, &q, err, sizeof(err)), 0);
	CU_ASSERT_STRING_EQUAL(q.cfg.name, "probe1");
	CU_ASSERT_EQUAL(q.cfg.ram_bytes, 256ULL << 20);
	CU_ASSERT_EQUAL(q.cfg.cpus, 2);
	CU_ASSERT(q.start_paused && q.no_shutdown && !q.probe);
	CU_ASSERT_STRING_EQUAL(q.cfg.kernel, "/srv/vmlinuz");
	CU_ASSERT_STRING_EQUAL(q.cfg.initrd, "/srv/initrd.gz");
	CU_ASSERT_STRING_EQUAL(q.cfg.append, "console=ttyS0 panic=-1 loglevel=7");
	CU_ASSERT_FATAL(q.monitor >= 0 && q.serial >= 0);
	CU_ASSERT_EQUAL(q.chardevs[q.monitor].kind, QEMU_CHARDEV_SOCKET);
	CU_ASSERT_EQUAL(q.chardevs[q.monitor].fd, 31);
	CU_ASSERT_EQUAL(q.chardevs[q.serial].kind, QEMU_CHARDEV_FILE);
	CU_ASSERT_EQUAL(q.chardevs[q.serial].fd, 32);
	CU_ASSERT_STRING_EQUAL(q.cfg.console, "fd:32");	/* virtlogd's pipe, not this terminal */
	CU_ASSERT_STRING_EQUAL(q.cfg.disk, "/srv/disk.img");
	CU_ASSERT(q.cfg.disk_readonly);
	CU_ASSERT(q.cfg.balloon && !q.cfg.balloon_no_reporting);
	CU_ASSERT_STRING_EQUAL(q.uuid, "0b3b6bd8-5a2c-4a41-9c0c-3e5a1a8b7c11");
	/* libvirt's tap descriptor (its vhost-net one left unused) and the MAC it chose */
	CU_ASSERT_EQUAL_FATAL(q.cfg.nr_net, 1);
	CU_ASSERT_EQUAL(q.cfg.net[0].fd, 33);
	CU_ASSERT(q.cfg.net[0].mac_set && q.cfg.net[0].mac[0] == 0x52 && q.cfg.net[0].mac[5] == 0x58);
}

/* The older QemuOpts spellings, a pty serial, -m in k, no balloon. */
static void test_qemuopts_forms(void)
{
	char *argv[] = { "gpmm", "-name", "web,,1", "-m", "size=524288k", "-smp", "1",
		"-kernel", "/k", "-chardev", "pty,id=charserial0",
		"-device", "isa-serial,chardev=charserial0,id=serial0",
		"-chardev", "socket,id=mon,path=/run/m.sock,server=on,wait=off",
		"-mon", "chardev=mon,mode=control" };

	CU_ASSERT_EQUAL_FATAL(qemu_args_parse(ARGC(argv), argv, &q, err, sizeof(err)), 0);
	CU_ASSERT_STRING_EQUAL(q.cfg.name, "web,1");
	CU_ASSERT_EQUAL(q.cfg.ram_bytes, 512ULL << 20);
	CU_ASSERT_FALSE(q.cfg.balloon);
	CU_ASSERT_EQUAL(q.chardevs[q.serial].kind, QEMU_CHARDEV_PTY);
	CU_ASSERT_STRING_EQUAL(q.cfg.console, "pty");
	CU_ASSERT_STRING_EQUAL(q.chardevs[q.monitor].path, "/run/m.sock");
}

/*
 * A pty serial port with its log on a virtlogd pipe (libvirt's <serial
 * type='pty'><log file=.../>) and a balloon without free page reporting:
 * the descriptors, and the devices by their ids (QOM's /machine/peripheral).
 */
static void test_pty_log_and_devices(void)
{
	char *argv[] = { "gpmm", "-name", "guest=lx", "-m", "64", "-kernel", "/k",
		"-add-fd", "set=0,fd=33,opaque=serial0-log",
		"-chardev", "pty,id=charserial0,logfile=/dev/fdset/0,logappend=on",
		"-device", "{\"driver\":\"isa-serial\",\"chardev\":\"charserial0\",\"id\":\"serial0\",\"index\":0}",
		"-device", "{\"driver\":\"virtio-balloon-pci\",\"id\":\"balloon0\",\"bus\":\"pci.0\","
			   "\"addr\":\"0x2\",\"free-page-reporting\":false}" };
	char *nolog[] = { "gpmm", "-kernel", "/k", "-chardev", "pty,id=c,logfile=/dev/fdset/3" };

	CU_ASSERT_EQUAL_FATAL(qemu_args_parse(ARGC(argv), argv, &q, err, sizeof(err)), 0);
	CU_ASSERT_FATAL(q.serial >= 0);
	CU_ASSERT_EQUAL(q.chardevs[q.serial].kind, QEMU_CHARDEV_PTY);
	CU_ASSERT_EQUAL(q.chardevs[q.serial].log_fd, 33);
	CU_ASSERT(q.cfg.balloon);
	CU_ASSERT(q.cfg.balloon_no_reporting);
	CU_ASSERT_EQUAL_FATAL(q.nr_devices, 2);
	CU_ASSERT_STRING_EQUAL(q.devices[0].id, "serial0");
	CU_ASSERT_STRING_EQUAL(q.devices[1].id, "balloon0");
	CU_ASSERT_STRING_EQUAL(q.devices[1].driver, "virtio-balloon-pci");
	/* more devices than gpmm takes: refused, naming the driver (fuzzing found a use after free here) */
	{
		char *many[3 + 2 * (QEMU_MAX_DEVICES + 1)];
		int n = 0;

		many[n++] = "gpmm";
		many[n++] = "-kernel";
		many[n++] = "/k";
		for (int i = 0; i <= QEMU_MAX_DEVICES; i++) {
			many[n++] = "-device";
			many[n++] = "{\"driver\":\"virtio-balloon-pci\",\"id\":\"b\"}";
		}
		CU_ASSERT(qemu_args_parse(n, many, &q, err, sizeof(err)) == -ENOTSUP);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, "-device virtio-balloon-pci: more devices"));
	}
	/* a log on a descriptor set nobody passed */
	CU_ASSERT(qemu_args_parse(ARGC(nolog), nolog, &q, err, sizeof(err)) < 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "no -add-fd"));
}

struct refusal {
	const char *args[6];
	const char *says;
};

/* Each is refused with a sentence naming what gpmm lacks. */
static void test_refusals(void)
{
	static const struct refusal r[] = {
		{ { "-device", "{\"driver\":\"virtio-net-pci\",\"netdev\":\"n0\"}" }, "netdev 'n0'" },
		{ { "-netdev", "tap,id=n0" }, "give ifname= or fd=" },
		{ { "-netdev", "tap,id=n0,fds=3:4" }, "one queue pair" },
		{ { "-netdev", "tap,id=n0,ifname=t0,script=/etc/qemu-ifup" }, "no network scripts" },
		{ { "-accel", "tcg" }, "KVM only" },
		{ { "-blockdev", "{\"driver\":\"qcow2\",\"node-name\":\"f\",\"file\":\"s\"}" }, "raw" },
		{ { "-object", "{\"qom-type\":\"memory-backend-file\"" }, "malformed JSON" },
		{ { "-display", "gtk" }, "no display" },
		{ { "-mon", "chardev=nosuch,mode=control" }, "no such chardev" },
		{ { "-smp", "2,maxcpus=4" }, "hotplug" },
		{ { "-frobnicate" }, "does not know" },
		{ { "-m" }, "needs an argument" },
		{ { "-device", "{\"driver\":\"isa-serial\",\"chardev\":\"nope\"}" }, "not defined" },
	};

	for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++) {
		char *argv[12] = { "gpmm", "-kernel", "/k" };
		int argc = 3;

		for (int k = 0; r[i].args[k]; k++)
			argv[argc++] = (char *)r[i].args[k];
		CU_ASSERT(qemu_args_parse(argc, argv, &q, err, sizeof(err)) < 0);
		if (!strstr(err, r[i].says)) {
			fprintf(stderr, "\n  refusal %zu said: %s", i, err);
			CU_FAIL("the refusal names what gpmm lacks");
		}
	}
	{
		char *argv[] = { "gpmm", "-m", "64" };

		CU_ASSERT(qemu_args_parse(ARGC(argv), argv, &q, err, sizeof(err)) < 0);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, "<kernel>"));
	}
}

/*
 * The devices libvirt 9.0 writes for the domain `virt-install --import
 * --boot kernel=... --graphics none --network none --disk none --osinfo
 * detect=on,require=off` prints (`virsh domxml-to-native qemu-argv` of
 * it): four USB controllers, counted for the log line and not kept as
 * gpmm devices; a q35 domain's root ports likewise. What the guest would
 * miss is refused with what to write instead.
 */
static void test_plumbing_devices(void)
{
	char *argv[] = { "gpmm", "-kernel", "/k", "-global", "kvm-pit.lost_tick_policy=delay",
		"-global", "PIIX4_PM.disable_s3=1", "-no-hpet",
		"-device", "{\"driver\":\"ich9-usb-ehci1\",\"id\":\"usb\",\"bus\":\"pci.0\",\"addr\":\"0x2.0x7\"}",
		"-device", "{\"driver\":\"ich9-usb-uhci1\",\"masterbus\":\"usb.0\",\"firstport\":0,"
			   "\"bus\":\"pci.0\",\"multifunction\":true,\"addr\":\"0x2\"}",
		"-device", "{\"driver\":\"ich9-usb-uhci2\",\"masterbus\":\"usb.0\",\"firstport\":2}",
		"-device", "{\"driver\":\"ich9-usb-uhci3\",\"masterbus\":\"usb.0\",\"firstport\":4}",
		"-device", "{\"driver\":\"virtio-balloon-pci\",\"id\":\"balloon0\",\"bus\":\"pci.0\"}" };
	char *q35[3 + 2 * 15] = { "gpmm", "-kernel", "/k" };
	static const struct { const char *dev, *err; } refused[] = {
		{ "{\"driver\":\"virtio-serial-pci\",\"id\":\"virtio-serial0\"}",
		  "-device virtio-serial-pci: gpmm has no virtio-serial, so the guest would find no "
		  "<channel> (such as the guest agent's): remove the <channel> (virt-install: "
		  "--channel none)" },
		{ "{\"driver\":\"virtio-rng-pci\",\"rng\":\"objrng0\",\"id\":\"rng0\"}",
		  "-device virtio-rng-pci: gpmm has no virtio-rng, so the guest would find no <rng>: "
		  "remove it (virt-install: --rng none)" },
		{ "{\"driver\":\"usb-tablet\",\"id\":\"input0\",\"bus\":\"usb.0\"}",
		  "-device usb-tablet: gpmm's machine has no USB bus for it (libvirt: no "
		  "<input bus='usb'>)" },
		{ "{\"driver\":\"intel-hda\",\"id\":\"sound0\"}", "-device intel-hda: gpmm has no such device" },
	};
	int n = 3;

	CU_ASSERT_EQUAL_FATAL(qemu_args_parse(ARGC(argv), argv, &q, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(q.usb_controllers.count, 4);
	CU_ASSERT_STRING_EQUAL(q.usb_controllers.first, "ich9-usb-ehci1");
	CU_ASSERT_EQUAL(q.pci_ports.count, 0);
	CU_ASSERT_EQUAL_FATAL(q.nr_devices, 1);
	CU_ASSERT_STRING_EQUAL(q.devices[0].id, "balloon0");
	CU_ASSERT(q.cfg.balloon);

	/* more root ports than gpmm keeps devices: plumbing does not count */
	for (int i = 0; i < 14; i++) {
		q35[n++] = "-device";
		q35[n++] = "{\"driver\":\"pcie-root-port\",\"port\":8,\"chassis\":1,\"id\":\"pci.1\"}";
	}
	q35[n++] = "-device";
	q35[n++] = "{\"driver\":\"qemu-xhci\",\"p2\":15,\"p3\":15,\"id\":\"usb\",\"bus\":\"pci.1\"}";
	CU_ASSERT_EQUAL_FATAL(qemu_args_parse(n, q35, &q, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(q.pci_ports.count, 14);
	CU_ASSERT_EQUAL(q.usb_controllers.count, 1);
	CU_ASSERT_STRING_EQUAL(q.usb_controllers.first, "qemu-xhci");
	CU_ASSERT_EQUAL(q.nr_devices, 0);

	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		char *r[] = { "gpmm", "-kernel", "/k", "-device", (char *)refused[i].dev };

		err[0] = '\0';
		CU_ASSERT(qemu_args_parse(ARGC(r), r, &q, err, sizeof(err)) == -ENOTSUP);
		if (strcmp(err, refused[i].err)) {
			fprintf(stderr, "\n  device refusal %zu said: %s", i, err);
			CU_FAIL("the refusal says what to write instead, word for word");
		}
	}
}

/*
 * The line issue 28 starts from: a QEMU user's plain boot. -nographic puts
 * the serial console on this terminal, -m is MiB, the VM is named after
 * its kernel, and nothing of libvirt's (monitor, -S) is implied.
 */
static void test_plain_command_line(void)
{
	char *argv[] = { "gpmm-qemu", "-kernel", "/srv/bzImage", "-initrd", "/srv/initramfs.cpio.gz",
		"-m", "256", "-smp", "2", "-nographic", "-append", "console=ttyS0" };

	CU_ASSERT_FALSE(qemu_args_is_probe(ARGC(argv), argv));
	CU_ASSERT_EQUAL_FATAL(qemu_args_parse(ARGC(argv), argv, &q, err, sizeof(err)), 0);
	CU_ASSERT_STRING_EQUAL(q.cfg.console, "stdio");
	CU_ASSERT_FATAL(q.serial >= 0);
	CU_ASSERT_EQUAL(q.chardevs[q.serial].kind, QEMU_CHARDEV_STDIO);
	CU_ASSERT_EQUAL(q.cfg.ram_bytes, 256ULL << 20);
	CU_ASSERT_EQUAL(q.cfg.cpus, 2);
	CU_ASSERT_STRING_EQUAL(q.cfg.name, "bzImage");
	CU_ASSERT_STRING_EQUAL(q.cfg.initrd, "/srv/initramfs.cpio.gz");
	CU_ASSERT_STRING_EQUAL(q.cfg.append, "console=ttyS0");
	CU_ASSERT(q.monitor < 0 && !q.start_paused && !q.daemonize && !q.no_reboot);
	CU_ASSERT(!q.help && !q.version && !q.probe);
}

struct serial_case {
	const char *args[8];
	const char *console;	/* cfg.console: gpmm run --console's spec */
};

/* Each -serial spelling, and -nographic's default beside them, as gpmm's console kinds. */
static void test_serial_backends(void)
{
	static const struct serial_case c[] = {
		{ { "-serial", "stdio" }, "stdio" },
		{ { "-serial", "mon:stdio" }, "stdio" },
		{ { "-serial", "pty" }, "pty" },
		{ { "-serial", "file:/tmp/console.log" }, "file:/tmp/console.log" },
		{ { "-serial", "none" }, "none" },
		{ { "-serial", "null" }, "none" },
		{ { "-serial", "unix:/tmp/con.sock,server,nowait" }, "socket:/tmp/con.sock" },
		{ { "-serial", "unix:/tmp/con.sock,server=on,wait=off" }, "socket:/tmp/con.sock" },
		{ { "-nographic" }, "stdio" },
		{ { "-nographic", "-serial", "pty" }, "pty" },
		{ { "-serial", "file:/tmp/c", "-nographic" }, "file:/tmp/c" },
		{ { "-nographic", "-serial", "none" }, "none" },
		{ { "-nographic", "-nodefaults" }, "none" },
		{ { "-nographic", "-chardev", "pty,id=s0", "-device", "isa-serial,chardev=s0" }, "pty" },
		{ { "-chardev", "stdio,id=c0,mux=on", "-serial", "chardev:c0" }, "stdio" },
		{ { "-display", "none" }, "none" },
		{ { NULL }, "none" },
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		char *argv[12] = { "gpmm-qemu", "-kernel", "/k" };
		int argc = 3;

		for (int k = 0; c[i].args[k]; k++)
			argv[argc++] = (char *)c[i].args[k];
		if (qemu_args_parse(argc, argv, &q, err, sizeof(err))) {
			fprintf(stderr, "\n  serial case %zu: %s", i, err);
			CU_FAIL("a console gpmm has is accepted");
			continue;
		}
		if (strcmp(q.cfg.console, c[i].console)) {
			fprintf(stderr, "\n  serial case %zu: console %s, not %s", i, q.cfg.console,
				c[i].console);
			CU_FAIL("each -serial is the console kind it names");
		}
	}
	/* -serial none: no serial port at all, not one on a null back end */
	{
		char *argv[] = { "gpmm-qemu", "-kernel", "/k", "-nographic", "-serial", "none" };

		CU_ASSERT_EQUAL_FATAL(qemu_args_parse(ARGC(argv), argv, &q, err, sizeof(err)), 0);
		CU_ASSERT_EQUAL(q.serial, -1);
		CU_ASSERT(q.serial_chosen);
	}
}

struct size_case {
	const char *m, *smp;
	unsigned long long ram;
	unsigned int cpus;
};

static void test_sizes_and_cpus(void)
{
	static const struct size_case c[] = {
		{ "256", "2", 256ULL << 20, 2 },
		{ "1G", "cpus=2", 1ULL << 30, 2 },
		{ "size=256M", "sockets=2,cores=2", 256ULL << 20, 4 },
		{ "size=1024", "4,sockets=2,cores=2,threads=1", 1ULL << 30, 4 },
		{ "512M,slots=2,maxmem=512M", "1", 512ULL << 20, 1 },
		{ "2048k", "cpus=32", 2ULL << 20, 32 },
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		char *argv[] = { "gpmm-qemu", "-kernel", "/k", "-m", (char *)c[i].m,
			"-smp", (char *)c[i].smp };

		if (qemu_args_parse(ARGC(argv), argv, &q, err, sizeof(err))) {
			fprintf(stderr, "\n  -m %s -smp %s: %s", c[i].m, c[i].smp, err);
			CU_FAIL("QEMU's -m and -smp spellings are read");
			continue;
		}
		CU_ASSERT_EQUAL(q.cfg.ram_bytes, c[i].ram);
		CU_ASSERT_EQUAL(q.cfg.cpus, c[i].cpus);
	}
}

/* What changes nothing the guest sees is taken; -no-reboot is kept. */
static void test_accepted_habits(void)
{
	char *argv[] = { "gpmm-qemu", "-enable-kvm", "-accel", "kvm", "-machine", "q35,accel=kvm",
		"-M", "pc", "-cpu", "host", "-display", "none", "-vga", "none", "-monitor", "none",
		"-no-reboot", "--nographic", "-name", "web", "-kernel", "/k" };

	CU_ASSERT_EQUAL_FATAL(qemu_args_parse(ARGC(argv), argv, &q, err, sizeof(err)), 0);
	CU_ASSERT(q.no_reboot);
	CU_ASSERT_STRING_EQUAL(q.cfg.name, "web");
	CU_ASSERT_STRING_EQUAL(q.cfg.console, "stdio");
}

/* -drive as typed by hand: gpmm's one virtio disk, directly or through a -device. */
static void test_drive(void)
{
	char *direct[] = { "gpmm-qemu", "-kernel", "/k",
		"-drive", "file=/srv/d.img,format=raw,if=virtio,readonly=on,cache=none" };
	char *node[] = { "gpmm-qemu", "-kernel", "/k",
		"-drive", "if=none,id=d0,file=/srv/e.img,format=raw",
		"-device", "virtio-blk-pci,drive=d0,id=vd0" };
	char *two[] = { "gpmm-qemu", "-kernel", "/k",
		"-drive", "file=/a,format=raw,if=virtio", "-drive", "file=/b,format=raw,if=virtio" };

	CU_ASSERT_EQUAL_FATAL(qemu_args_parse(ARGC(direct), direct, &q, err, sizeof(err)), 0);
	CU_ASSERT_STRING_EQUAL(q.cfg.disk, "/srv/d.img");
	CU_ASSERT(q.cfg.disk_readonly);
	CU_ASSERT_EQUAL_FATAL(qemu_args_parse(ARGC(node), node, &q, err, sizeof(err)), 0);
	CU_ASSERT_STRING_EQUAL(q.cfg.disk, "/srv/e.img");
	CU_ASSERT_FALSE(q.cfg.disk_readonly);
	CU_ASSERT(qemu_args_parse(ARGC(two), two, &q, err, sizeof(err)) == -ENOTSUP);
	CU_ASSERT_STRING_EQUAL(err, "-drive file=/b,format=raw,if=virtio: gpmm gives a VM one disk");
}

struct hand_refusal {
	const char *args[6];
	const char *err;	/* the whole sentence (the CLI puts "gpmm: " before it) */
};

/* A hand-typed line gpmm cannot honour: the exact sentence the terminal shows. */
static void test_hand_refusals(void)
{
	static const struct hand_refusal r[] = {
		{ { "-serial", "vc" }, "-serial vc: gpmm's serial console is stdio, mon:stdio, pty, "
		  "file:PATH, unix:PATH,server=on, null, none or chardev:ID" },
		{ { "-serial", "unix:/tmp/s" }, "-serial unix:/tmp/s: gpmm's console socket is one it "
		  "listens on (unix:PATH,server=on)" },
		{ { "-serial", "pty", "-serial", "stdio" }, "-serial stdio: gpmm's machine has one serial port" },
		{ { "-nographic", "-daemonize" }, "-daemonize: the serial console is on stdio "
		  "(-nographic, -serial stdio), which a daemon leaves; give -serial pty or file:PATH" },
		{ { "-vga", "std" }, "-vga std: gpmm has no display adapter (-vga none)" },
		{ { "-monitor", "stdio" }, "-monitor stdio: gpmm has no human monitor; it speaks QMP "
		  "(-qmp unix:PATH,server=on,wait=off)" },
		{ { "-display", "gtk" }, "-display gtk: gpmm has no display (-nographic puts the serial "
		  "console on this terminal; libvirt: <graphics> none)" },
		{ { "-m", "1G,maxmem=2G" }, "-m 1G,maxmem=2G: gpmm has no memory hotplug (maxmem)" },
		{ { "-smp", "64" }, "-smp 64: gpmm runs 1 to 32 vCPUs" },
		{ { "-drive", "file=d.img" }, "-drive file=d.img: gpmm reads raw images only (format=raw)" },
		{ { "-drive", "file=d.img,format=raw" }, "-drive file=d.img,format=raw: gpmm has no ide "
		  "disk; its disk is virtio-blk (if=virtio)" },
		{ { "-drive", "file=d.img,format=raw,if=virtio,snapshot=on" }, "-drive file=d.img,"
		  "format=raw,if=virtio,snapshot=on: gpmm writes to the image itself (no snapshot=on)" },
		{ { "-hda", "d.img" }, "-hda: gpmm has no IDE disk (-drive file=F,format=raw,if=virtio "
		  "is a virtio one)" },
		{ { "-netdev", "user,id=n0" }, "-netdev user: gpmm networks through a host tap only "
		  "(-netdev tap,ifname=NAME or fd=N; libvirt: <interface type='network'>, 'bridge' "
		  "or 'ethernet')" },
		{ { "-nic", "tap" }, "-nic: gpmm has no -nic shorthand: -netdev tap + -device "
		  "virtio-net-pci" },
		{ { "-accel", "tcg" }, "-accel tcg: gpmm runs guests with KVM only" },
		{ { "-frobnicate" }, "-frobnicate: gpmm does not know this QEMU option "
		  "(gpmm-qemu -help lists those it takes)" },
	};

	for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++) {
		char *argv[12] = { "gpmm-qemu", "-kernel", "/k" };
		int argc = 3;

		for (int k = 0; r[i].args[k]; k++)
			argv[argc++] = (char *)r[i].args[k];
		err[0] = '\0';
		CU_ASSERT(qemu_args_parse(argc, argv, &q, err, sizeof(err)) < 0);
		if (strcmp(err, r[i].err)) {
			fprintf(stderr, "\n  hand refusal %zu said: %s", i, err);
			CU_FAIL("a hand-typed refusal says its sentence");
		}
	}
	{
		char *argv[] = { "gpmm-qemu", "-m", "256", "-nographic" };

		CU_ASSERT(qemu_args_parse(ARGC(argv), argv, &q, err, sizeof(err)) == -ENOTSUP);
		CU_ASSERT_STRING_EQUAL(err, "gpmm boots the kernel -kernel names (libvirt: the domain's "
				       "<kernel>); it has no firmware to boot a disk");
	}
}

static char *print_to_string(void (*print)(FILE *f))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	print(f);
	fclose(f);
	return buf;
}

/*
 * -version: QEMU's first line (what a script reads the version from)
 * that says it is gpmm, the version the QMP greeting gives. -help, -h,
 * --help and --version anywhere on the line, no -kernel needed.
 */
static void test_version_and_help_flags(void)
{
	static const char *const spellings[][2] = {
		{ "-version", "v" }, { "--version", "v" }, { "-help", "h" }, { "--help", "h" },
		{ "-h", "h" },
	};
	char *text = print_to_string(qemu_args_version);

	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	CU_ASSERT_STRING_EQUAL(text,
		"QEMU emulator version 7.2.0 (gpmm's QEMU front end, not QEMU)\n"
		"gpmm reads QEMU 7.2.0's command line and answers its QMP; the guest runs on gpmm, "
		"a KVM hypervisor.\n");
	free(text);
	for (size_t i = 0; i < sizeof(spellings) / sizeof(spellings[0]); i++) {
		char *argv[] = { "gpmm-qemu", "-m", "64", (char *)spellings[i][0], "-frobnicate" };

		CU_ASSERT_EQUAL(qemu_args_parse(ARGC(argv), argv, &q, err, sizeof(err)), 0);
		CU_ASSERT_EQUAL(q.version, spellings[i][1][0] == 'v');
		CU_ASSERT_EQUAL(q.help, spellings[i][1][0] == 'h');
	}
}

/*
 * -help names what the front end takes and refuses; every option it
 * names is one the parser knows (the text is made from the parser's
 * table, and this keeps it so), with each refused one's reason.
 */
static void test_help_text(void)
{
	static const char *const says[] = {
		"usage: gpmm-qemu [QEMU options]",
		"\n  -nographic                   the serial console on this terminal\n",
		"Ctrl-A x leaves",
		"\n  -serial DEV                  where the serial console goes: stdio, mon:stdio,\n",
		"\n  -m SIZE                      guest RAM: 256 (MiB), 1G, size=512M\n",
		"\n  -smp N                       vCPUs: 2, cpus=2, sockets=2,cores=2 (1 to 32)\n",
		"\n  -netdev tap,id=ID,ifname=NAME|fd=N\n",
		"\n  -nic          -nic shorthand: -netdev tap + -device virtio-net-pci\n",
		"\n  -hda          IDE disk (-drive file=F,format=raw,if=virtio is a virtio one)\n",
		" -chardev ", " -blockdev ",
	};
	char *text = print_to_string(qemu_args_usage), *save = NULL, *copy;
	unsigned int named = 0;
	char unknown[64];

	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	for (size_t i = 0; i < sizeof(says) / sizeof(says[0]); i++)
		if (!strstr(text, says[i])) {
			fprintf(stderr, "\n  -help lacks: '%s'", says[i]);
			CU_FAIL("-help says what a QEMU user needs");
		}
	for (char *l = text; (l = strchr(l, '\n')); l++)
		CU_ASSERT(strcspn(l + 1, "\n") <= 80);
	copy = strdup(text);
	for (char *w = strtok_r(copy, " \n", &save); w; w = strtok_r(NULL, " \n", &save)) {
		char *argv[] = { "gpmm-qemu", w, "x" };

		if (w[0] != '-' || w[1] < 'a' || w[1] > 'z' || strchr(w, '='))
			continue;
		if (w[strlen(w) - 1] == ')' || w[strlen(w) - 1] == ',' || w[strlen(w) - 1] == ';')
			w[strlen(w) - 1] = '\0';
		argv[1] = w;
		named++;
		snprintf(unknown, sizeof(unknown), "%s: gpmm does not know", w);
		if (qemu_args_parse(ARGC(argv), argv, &q, err, sizeof(err)) &&
		    !strncmp(err, unknown, strlen(unknown))) {
			fprintf(stderr, "\n  -help names %s, which the parser does not know", w);
			CU_FAIL("-help names only options the parser knows");
		}
	}
	CU_ASSERT(named >= 40);
	free(copy);
	free(text);
}

static const struct suite_test tests[] = {
	{ "the capability probe", test_probe },
	{ "a domain start as libvirt 9.0 writes it", test_domain_start },
	{ "QemuOpts spellings", test_qemuopts_forms },
	{ "a pty with its log, device ids", test_pty_log_and_devices },
	{ "refusals say why", test_refusals },
	{ "USB controllers and PCI ports: nothing behind them", test_plumbing_devices },
	{ "a QEMU user's plain command line", test_plain_command_line },
	{ "-serial back ends and -nographic", test_serial_backends },
	{ "-m and -smp spellings", test_sizes_and_cpus },
	{ "habits that change nothing are accepted", test_accepted_habits },
	{ "-drive for gpmm's one disk", test_drive },
	{ "hand-typed refusals, word for word", test_hand_refusals },
	{ "-version, -help and their spellings", test_version_and_help_flags },
	{ "-help's text", test_help_text },
};

int register_qemu_args_suite(void)
{
	return SUITE("qemu_args", tests);
}
