// SPDX-License-Identifier: GPL-2.0
/*
 * The QEMU command line libvirt 9.0 generates (../shared/notes: the probe
 * and the start of a domain, with a pty or a virtlogd file serial, a
 * balloon and a raw disk), read into gpmm's config; and what gpmm refuses,
 * with the sentence libvirt will show.
 */
#define _GNU_SOURCE
#include <errno.h>
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
	CU_ASSERT_STRING_EQUAL(q.cfg.disk, "/srv/disk.img");
	CU_ASSERT(q.cfg.disk_readonly);
	CU_ASSERT(q.cfg.balloon && !q.cfg.balloon_no_reporting);
	CU_ASSERT_STRING_EQUAL(q.uuid, "0b3b6bd8-5a2c-4a41-9c0c-3e5a1a8b7c11");
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
		{ { "-device", "{\"driver\":\"virtio-net-pci\",\"netdev\":\"n0\"}" }, "virtio-net-pci" },
		{ { "-netdev", "tap,id=n0" }, "network" },
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

static const struct suite_test tests[] = {
	{ "the capability probe", test_probe },
	{ "a domain start as libvirt 9.0 writes it", test_domain_start },
	{ "QemuOpts spellings", test_qemuopts_forms },
	{ "a pty with its log, device ids", test_pty_log_and_devices },
	{ "refusals say why", test_refusals },
};

int register_qemu_args_suite(void)
{
	return SUITE("qemu_args", tests);
}
