# gpmm — one Makefile. `make` builds build/gpmm, `make test` runs every CUnit
# suite, `make demo` runs the main job, `make fuzz` the libFuzzer targets
# (tests/fuzz/Makefile.inc), `make install` installs (docs/install.md).
# SANITIZE=1 builds under ASan+UBSan into build/san, V=1 shows the
# commands, WERROR=0 drops -Werror.

# Debian packages, in two sets, each installed the first time a goal needs
# it (deps below). PKGS: building gpmm, its payloads and the Linux guest
# image (make, make install, make guest-linux). PKGS_TEST, besides: the
# tests, the fuzzers and the demos (the test VM's QEMU, libvirt, CUnit,
# clang-14's libFuzzer, stress-ng for the Linux guest); an installed gpmm
# under libvirt needs QEMU and libvirt too, which docs/install.md has the
# operator install.
PKGS       := gcc make binutils libjansson-dev libinih-dev libseccomp-dev \
              busybox-static xz-utils
PKGS_TEST  := procps iproute2 socat libcunit1-dev qemu-system-x86 \
              libvirt-daemon-system libvirt-daemon-driver-qemu libvirt-clients virtinst udev \
              clang-14 libclang-rt-14-dev stress-ng
BUILD      := build
ifeq ($(SANITIZE),1)
BUILD      := build/san
SANFLAGS   := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
endif
# TSAN=1: ThreadSanitizer over the concurrent suites (allocator, pcp,
# compaction, owners, lumpy, stress, pool service) and the integration suites.
ifeq ($(TSAN),1)
BUILD      := build/tsan
SANFLAGS   := -fsanitize=thread -fno-omit-frame-pointer
endif

# make's own default CC is cc; gcc is what the build is tested with
ifeq ($(origin CC),default)
CC         := gcc
endif
WERROR     ?= 1
CFLAGS     := -O2 -g -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Wshadow \
              -Wstrict-prototypes -Wno-missing-field-initializers -MMD -MP -pthread -I. $(SANFLAGS)
ifeq ($(WERROR),1)
CFLAGS     += -Werror
endif
LDFLAGS    := -pthread $(SANFLAGS)
LDLIBS     := -ljansson -linih -lseccomp -lm
# FAULT_INJECT=1 (the default): fault injection's sites (mm.h) are compiled
# in, idle unless GPMM_FAULT arms them; FAULT_INJECT=0 compiles them away.
FAULT_INJECT ?= 1
ifeq ($(FAULT_INJECT),1)
CFLAGS     += -DGPMM_FAULT_INJECT
endif

ifneq ($(V),1)
Q          := @
say         = @printf '  %-6s %s\n' $(1) $(2);
endif

MM_SRCS    := mm/pool.c \
              mm/pageblock.c \
              mm/buddy.c \
              mm/fallback.c \
              mm/pcp.c \
              mm/alloc.c \
              mm/owner.c \
              mm/owned.c \
              mm/migrate.c \
              mm/lumpy.c \
              mm/compaction.c \
              mm/hostmem.c \
              mm/pbfile.c \
              mm/thread.c \
              mm/stats.c \
              mm/fault.c

VMM_SRCS   := vmm/memory/pool_own.c \
              vmm/pool_service/pool_remote.c \
              vmm/pool_service/pool_wire.c \
              vmm/pool_service/pool_client.c \
              vmm/pool_service/pool_files.c \
              vmm/pool_service/pool_service.c \
              vmm/control/metrics.c \
              cli/cmd_fragmenting_tenant.c \
              vmm/qemu/qemu_args.c vmm/qemu/qmp_qemu.c cli/cmd_qemu.c \
              vmm/core/kvm.c \
              vmm/sys/host.c \
              vmm/sys/tap.c \
              vmm/sys/uffd.c \
              vmm/memory/guest_mem.c \
              vmm/memory/guest_access.c \
              vmm/memory/page_move.c \
              vmm/memory/swap.c \
              vmm/memory/pressure.c \
              vmm/memory/huge_backing.c \
              vmm/memory/assembler.c \
              vmm/control/report.c \
              vmm/boot/boot.c \
              vmm/boot/boot_linux.c \
              vmm/boot/boot_pvh.c \
              vmm/boot/acpi.c \
              vmm/core/vcpu.c \
              vmm/core/vm.c \
              vmm/core/vm_create.c \
              vmm/core/vm_machine.c \
              vmm/core/config.c \
              vmm/control/qmp.c \
              vmm/control/qmp_client.c \
              vmm/control/qmp_wire.c \
              vmm/control/daemon.c \
              cli/cmd_vm.c \
              cli/cmd_ctl.c \
              cli/options.c \
              cli/cmd_frag.c \
              cli/cmd_host.c \
              cli/sandbox.c \
              vmm/control/console_buf.c \
              vmm/control/console.c \
              vmm/sys/sandbox.c \
              vmm/sys/landlock.c \
              vmm/sys/unix_socket.c

# devices/ is a library of its own: it reaches the machine only through
# devices/machine.h, and links without vmm/ (tests/devices/ proves it).
DEV_SRCS   := devices/device.c \
              devices/machine.c \
              devices/net_spec.c \
              devices/legacy/serial8250.c \
              devices/legacy/debugport.c \
              devices/legacy/power.c \
              devices/virtio/virtio_queue.c \
              devices/virtio/virtio_mmio.c \
              devices/virtio/virtio_blk.c \
              devices/virtio/virtio_balloon.c \
              devices/virtio/virtio_net.c

APP_SRCS   := $(VMM_SRCS) \
              bench/prng.c \
              bench/bigmem.c \
              bench/workload.c \
              bench/trace.c \
              bench/progress.c \
              bench/bench_frag.c \
              bench/bench_alloc.c \
              bench/bench_report.c \
              bench/bench_pool_fds.c \
              bench/bench_vm.c \
              bench/bench_boot_linux.c \
              bench/bench_net.c \
              bench/bench_hugeback.c \
              bench/bench_isolation.c \
              cli/cli.c

UNIT_SRCS  := $(wildcard tests/unit/*.c) tests/runner.c tests/svg_check.c
DEVT_SRCS  := $(wildcard tests/devices/*.c) tests/runner.c
USAGE_SRCS := $(wildcard tests/usage/*.c) tests/runner.c
INTEG_SRCS := $(wildcard tests/integration/*.c) tests/svg_check.c

MM_OBJS    := $(MM_SRCS:%.c=$(BUILD)/%.o)
DEV_OBJS   := $(DEV_SRCS:%.c=$(BUILD)/%.o)
APP_OBJS   := $(APP_SRCS:%.c=$(BUILD)/%.o)
UNIT_OBJS  := $(UNIT_SRCS:%.c=$(BUILD)/%.o)
DEVT_OBJS  := $(DEVT_SRCS:%.c=$(BUILD)/%.o)
USAGE_OBJS := $(USAGE_SRCS:%.c=$(BUILD)/%.o)
INTEG_OBJS := $(INTEG_SRCS:%.c=$(BUILD)/%.o)
LIBMM      := $(BUILD)/libgpmm-mm.a
LIBDEV     := $(BUILD)/libgpmm-devices.a
LIBAPP     := $(BUILD)/libgpmm.a
GPMM       := $(BUILD)/gpmm
# libvirt's <emulator>: gpmm under a name that makes it `gpmm qemu`
GPMM_QEMU  := $(BUILD)/gpmm-qemu
UNIT       := $(BUILD)/tests/unit-tests
DEVTEST    := $(BUILD)/tests/device-tests
USAGE      := $(BUILD)/tests/usage-tests
INTEG      := $(BUILD)/tests/integration-tests
# The stamps of the two package sets (deps below). Every compile waits for
# DEPS_OK: the build set, or both sets when a goal on the command line
# needs the test set, so that make test on a fresh clone says what it
# installs, and installs it, before its first compile.
DEPS_BUILD_OK := build/.deps-ok
DEPS_TEST_OK  := build/.deps-test-ok
TEST_GOALS := test test-unit test-kernels demo libvirt-demo fuzz fuzz-build fuzz-regress deps-test
DEPS_OK    := $(if $(filter $(TEST_GOALS),$(MAKECMDGOALS)),$(DEPS_TEST_OK),$(DEPS_BUILD_OK))
# The libvirt domains for this build tree: `virsh define build/libvirt/linux.xml`
LIBVIRT_XML := $(BUILD)/libvirt/linux.xml $(BUILD)/libvirt/payload.xml

.PHONY: all test test-unit test-where test-kernels demo libvirt-demo deps deps-test install uninstall clean
all: $(GPMM) $(GPMM_QEMU) guests $(LIBVIRT_XML)

include guests/Makefile.inc
include guests/linux/Makefile.inc
include tests/fuzz/Makefile.inc

# A fresh machine needs nothing by hand: install what is missing, once per
# set (the stamps skip the check afterwards). Says, before apt-get runs,
# what it installs and for what, and why it cannot where it cannot (not
# Debian, not root). $(call install_pkgs,FOR WHAT,PACKAGES)
define install_pkgs
	@missing=""; for p in $(2); do \
	  dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "deps: installing from Debian for $(1):$$missing"; \
	  if ! command -v apt-get >/dev/null; then \
	    echo "deps: no apt-get here (not Debian?): install these by hand:$$missing" >&2; exit 1; fi; \
	  if [ "$$(id -u)" != 0 ]; then \
	    echo "deps: not root: run 'sudo apt-get install$$missing', or make as root" >&2; exit 1; fi; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >build.apt.log 2>&1 || \
	    { echo "deps: apt-get install failed; its output:" >&2; tail -20 build.apt.log >&2; rm -f build.apt.log; exit 1; }; \
	  rm -f build.apt.log; \
	fi
	@mkdir -p build && touch $@
endef
deps: $(DEPS_BUILD_OK)
deps-test: $(DEPS_TEST_OK)
$(DEPS_BUILD_OK):
	$(call install_pkgs,building gpmm and its guests (make and make install),$(PKGS))
$(DEPS_TEST_OK): | $(DEPS_BUILD_OK)
	$(call install_pkgs,the tests and demos,$(PKGS_TEST))
# The payloads' compiler is gcc too; whatever builds a test or a fuzzer by
# its path needs the test set.
$(GUEST_OBJS) $(GUEST_COMMON): | $(DEPS_OK)
$(UNIT_OBJS) $(DEVT_OBJS) $(USAGE_OBJS) $(INTEG_OBJS) $(UNIT) $(DEVTEST) $(USAGE) $(INTEG) \
$(FUZZ_BINS): | $(DEPS_TEST_OK)

$(BUILD)/%.o: %.c | $(DEPS_OK)
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(CFLAGS) -c -o $@ $<

# rm first: ar keeps the members of objects a rename left behind
$(LIBMM): $(MM_OBJS)
	$(call say,AR,$@)rm -f $@ && $(AR) rcs $@ $^

$(LIBDEV): $(DEV_OBJS)
	$(call say,AR,$@)rm -f $@ && $(AR) rcs $@ $^

$(LIBAPP): $(APP_OBJS)
	$(call say,AR,$@)rm -f $@ && $(AR) rcs $@ $^

$(GPMM): $(BUILD)/cli/main.o $(LIBAPP) $(LIBDEV) $(LIBMM)
	$(call say,LD,$@)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(GPMM_QEMU): | $(GPMM)
	$(call say,LN,$@)ln -sf gpmm $@

# GPMM_VERSION (gpmm --version): `git describe --always`, with -dirty when
# tracked files changed, in a git checkout; else the first line of VERSION
# (a release tarball); else "unknown". Neither git command writes: `sudo
# make install` must leave a user's .git/index alone (describe --dirty
# rewrites it, as root). Only cli/cli.o is compiled with it, and
# $(BUILD)/version, rewritten only when the version changes, rebuilds that
# one object: a new commit does not rebuild the rest.
GIT        := GIT_OPTIONAL_LOCKS=0 git -c safe.directory='$(CURDIR)'
ifeq ($(origin GPMM_VERSION),undefined)
GPMM_VERSION := $(or $(shell [ -e .git ] && v=$$($(GIT) describe --always 2>/dev/null) && \
                  if [ -n "$$($(GIT) status --porcelain -uno 2>/dev/null)" ]; then echo $$v-dirty; \
                  else echo $$v; fi),$(shell head -n1 VERSION 2>/dev/null),unknown)
endif
VERSION_STAMP := $(BUILD)/version
$(VERSION_STAMP): FORCE
	@mkdir -p $(dir $@)
	@[ "$$(cat $@ 2>/dev/null)" = '$(GPMM_VERSION)' ] || echo '$(GPMM_VERSION)' > $@
$(BUILD)/cli/cli.o: $(VERSION_STAMP)
$(BUILD)/cli/cli.o: CFLAGS += -DGPMM_VERSION='"$(GPMM_VERSION)"'
.PHONY: FORCE
FORCE:

# configs/libvirt/NAME.xml.in are templates: @TOP@/build/gpmm-qemu stands for
# the emulator, @TOP@/build/guests for the guests' directory, @RUN_DIR@ for
# gpmm's run directory (the integration suite libvirt fills them in for its
# own run). make fills them in for the build tree, make install for the
# installed files. $(call libvirt_fill,EMULATOR,GUESTS): that sed.
RUN_DIR    := /run/gpmm
libvirt_fill = sed -e 's|@TOP@/build/gpmm-qemu|$(1)|g' -e 's|@TOP@/build/guests|$(2)|g' \
               -e 's|@RUN_DIR@|$(RUN_DIR)|g'
$(LIBVIRT_XML): $(BUILD)/libvirt/%.xml: configs/libvirt/%.xml.in Makefile
	@mkdir -p $(dir $@)
	$(call say,GEN,$@)$(call libvirt_fill,$(abspath $(GPMM_QEMU)),$(abspath $(BUILD)/guests)) $< > $@.tmp
	$(Q)mv $@.tmp $@

$(UNIT): $(UNIT_OBJS) $(LIBAPP) $(LIBDEV) $(LIBMM)
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) -lcunit

# the devices' own suites: the devices library and the machine double, no vmm/
$(DEVTEST): $(DEVT_OBJS) $(LIBDEV)
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(CC) $(LDFLAGS) -o $@ $^ -lcunit

# the gpmm binary's messages, run as users run it: no KVM needed
$(USAGE): $(USAGE_OBJS)
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(CC) $(LDFLAGS) -o $@ $^ -lcunit

$(INTEG): $(INTEG_OBJS) $(LIBAPP) $(LIBDEV) $(LIBMM)
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) -lcunit

# Unit suites need nothing; integration suites boot real KVM guests: on this
# host where /dev/kvm exists, else inside the nested-KVM test VM (tests/vm/run,
# TESTVM_KERNEL picks its kernel). The first line says which. Both kinds of
# suite run even if one fails; tests/summary ends the run with what failed.
TESTVM_KERNEL ?= 6.12
TEST_KERNELS  ?= 6.1 6.12
# Budgets (s) for one test-VM run, retries included: a group of make
# test takes 4-7 minutes (the libvirt group, with its network test, the
# longest; more under SANITIZE=1); make test-kernels runs every suite of a
# kernel in one VM, 15-20 minutes on 6.12 since the libvirt suite boots
# Linux four times (it overran 720 s on a loaded 2-core host), so a guest
# that stalls fails its run instead of eating the whole budget.
# Sanitized binaries run 2-3 times slower, and a budget guards against a
# hang, it is no verdict on speed: the first group of a sanitized make test
# beside a CI rehearsal outgrew 1200 s (stop 41) in a test that passes
# alone in 5 minutes.
ifneq ($(filter 1,$(SANITIZE) $(TSAN)),)
TESTVM_TEST_TIMEOUT   ?= 2400
endif
TESTVM_TEST_TIMEOUT   ?= 1200
TESTVM_KERNEL_TIMEOUT ?= 2100
INTEG_ENV      = GPMM=$(GPMM) GUESTS=$(BUILD)/guests
UNIT_ENV       =
ifeq ($(TSAN),1)
INTEG_ENV     += TSAN_OPTIONS=suppressions=$(CURDIR)/tests/tsan.supp
# the pool_service suite forks clients that start threads of their own:
# separate processes, whose races TSan could not see in this one anyway
UNIT_ENV       = TSAN_OPTIONS="suppressions=$(CURDIR)/tests/tsan.supp die_after_fork=0"
endif

HAVE_KVM      := $(shell [ -c /dev/kvm ] && [ -r /dev/kvm ] && echo yes)
ifeq ($(HAVE_KVM),yes)
KVM_WHERE      = /dev/kvm is present: guests run on this host ($(shell uname -r))
IN_KVM         =
else
KVM_WHERE      = no /dev/kvm here: guests run in the nested-KVM test VM (Linux $(TESTVM_KERNEL), tests/vm/run)
IN_KVM         = tests/vm/run --kernel $(TESTVM_KERNEL) --timeout $(TESTVM_TEST_TIMEOUT) --
endif

test-where:
	@echo "integration: $(KVM_WHERE)"

# Linux guests boot in the test VM even where /dev/kvm exists: the emulated
# KVM of these machines stops a Linux kernel early (DESIGN.md).
# Without /dev/kvm the suites run in the test VM in four groups, one VM
# each: when the VM's own kernel freezes under TCG (tests/vm/run retries
# that, up to 4 times, here and in test-kernels), only its group runs
# again, from the test the freeze cut short, and a test it froze during
# twice is not run a third time (tests/integration/resume.c): 4 tries let
# the tests after it run even if the VM freezes once more.
INTEG_GROUPS  := vm,cli,migrate,overcommit,virtio linux,hostpool libvirt hardening
ifeq ($(HAVE_KVM),yes)
INTEG_RUN      = tests/part integration -- env $(INTEG_ENV) $(INTEG) vm cli migrate overcommit virtio hostpool hardening; \
                 TESTVM_TRIES=4 tests/part integration-linux,libvirt -- tests/vm/run --kernel $(TESTVM_KERNEL) \
                   --timeout $(TESTVM_TEST_TIMEOUT) -- env $(INTEG_ENV) $(INTEG) linux libvirt
else
INTEG_RUN      = for g in $(INTEG_GROUPS); do \
                   TESTVM_TRIES=4 tests/part integration-$$g -- $(IN_KVM) env $(INTEG_ENV) $(INTEG) $$(echo $$g | tr , ' '); \
                 done
endif

# The fuzz targets in make test: every committed input replayed (past
# crashes stay fixed), then TEST_FUZZ_SECONDS of fuzzing each (about a
# minute in all); long runs are `make fuzz FUZZ_SECONDS=N`.
TEST_FUZZ_SECONDS ?= 8
# Each part's output is also kept in TEST_LOGS (tests/part); CI shows only
# a run's tail, so tests/summary ends it with what failed, and where.
TEST_LOGS ?= $(BUILD)/test-logs
test: test-where $(UNIT) $(DEVTEST) $(USAGE) $(INTEG) $(GPMM) $(GPMM_QEMU) guests guest-linux guest-linux-stress fuzz-build
	@rm -f $(TEST_LOGS)/failed $(TEST_LOGS)/notrun; export TEST_LOGS=$(TEST_LOGS); \
	tests/part unit -- env $(UNIT_ENV) $(UNIT); \
	tests/part devices -- env $(UNIT_ENV) $(DEVTEST); \
	tests/part usage -- env $(UNIT_ENV) GPMM=$(GPMM) $(USAGE); \
	tests/part fuzz-regress -- $(MAKE) --no-print-directory fuzz-regress; \
	tests/part fuzz -- $(MAKE) --no-print-directory fuzz FUZZ_SECONDS=$(TEST_FUZZ_SECONDS); \
	$(INTEG_RUN); tests/summary

# The unit and device suites alone: what CI runs again under ASan+UBSan and TSan
# (SANITIZE=1, TSAN=1), where a whole sanitized make test would not fit.
test-unit: $(UNIT) $(DEVTEST) $(USAGE) $(GPMM)
	@rc=0; env $(UNIT_ENV) $(UNIT) || rc=1; env $(UNIT_ENV) $(DEVTEST) || rc=1; \
	env $(UNIT_ENV) GPMM=$(GPMM) $(USAGE) || rc=1; exit $$rc

# The runner's own check (tests/vm/selftest), then the integration suites
# once per host kernel, each in the test VM, and a table kernel x suite.
test-kernels: $(INTEG) $(GPMM) $(GPMM_QEMU) guests guest-linux guest-linux-stress
	@$(INTEG_ENV) INTEG=$(INTEG) tests/vm/selftest
	@$(INTEG_ENV) TESTVM_TRIES=4 TESTVM_TIMEOUT=$(TESTVM_KERNEL_TIMEOUT) tests/vm/kernels $(TEST_KERNELS) -- $(INTEG)

# The demo: first the allocator alone (bench frag: grouping against the
# plain buddy allocator), then gpmm's job on a fragmented host
# (tests/demo/fragmented-host): a host pool service, another tenant holding
# one page in four of it, and a Linux guest (Debian's stock kernel and our
# initramfs) that churns memory with memwork, frees every other 2 MiB, lets
# free page reporting hand it back, and powers off; its report comes last.
# Linux boots in the test VM (the emulated KVM some hosts have cannot boot it).
DEMO_APPEND := quiet gpmm.run=memwork,--mib,96,--rounds,2,--free,alternate;sleep,8;poweroff
demo: $(GPMM) guests guest-linux
	$(GPMM) bench frag
	@echo "demo: Linux guest in the nested-KVM test VM (tests/vm/run); $(KVM_WHERE)"
	tests/vm/run --kernel $(TESTVM_KERNEL) -- tests/demo/fragmented-host $(GPMM) \
		$(BUILD)/guests/linux "$(DEMO_APPEND)" </dev/null

# libvirt drives gpmm (configs/libvirt/): libvirtd and virtlogd started in a
# private mount namespace (tests/libvirt/env), two domains on the host pool
# service, their stats and report, shutdown and clean-up. In the test VM,
# like the demo: its Linux guest needs it, and the host's libvirt is left alone.
libvirt-demo: $(GPMM) $(GPMM_QEMU) guests guest-linux $(LIBVIRT_XML)
	@echo "libvirt-demo: in the nested-KVM test VM (tests/vm/run); $(KVM_WHERE)"
	tests/vm/run --kernel $(TESTVM_KERNEL) -- env GPMM_BUILD=$(abspath $(BUILD)) \
		tests/libvirt/env tests/libvirt/demo </dev/null

# make install [PREFIX=/usr/local] [DESTDIR=...] (docs/install.md): gpmm and
# its gpmm-qemu link in BINDIR; the flat payloads and, when built (make
# guest-linux), the Linux guest under DATADIR/guests; the example configs,
# the libvirt domains and qemu.conf lines under DATADIR/configs, their paths
# pointing at the installed files; the unit gpmm-daemon.service in UNITDIR,
# neither enabled nor started. Builds nothing of the tests.
PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
DATADIR    ?= $(PREFIX)/share/gpmm
UNITDIR    ?= $(PREFIX)/lib/systemd/system
INST_GUESTS  = $(DESTDIR)$(DATADIR)/guests
INST_CONFIGS = $(DESTDIR)$(DATADIR)/configs
LINUX_FILES := bzImage initramfs.cpio.gz
# the example configs' paths (build/guests/ or, relative to the config,
# ../build/guests/): the installed guests, and the installed configs
ini_fill    = sed -e 's|\(\.\./\)\{0,1\}build/guests/|$(DATADIR)/guests/|g' \
                  -e 's|gpmm run configs/|gpmm run $(DATADIR)/configs/|g'
install: all
	$(Q)install -d $(DESTDIR)$(BINDIR) $(INST_GUESTS) $(INST_CONFIGS)/libvirt $(DESTDIR)$(UNITDIR)
	$(call say,INSTALL,$(DESTDIR)$(BINDIR)/gpmm)install -m 755 $(GPMM) $(DESTDIR)$(BINDIR)/gpmm
	$(Q)ln -sf gpmm $(DESTDIR)$(BINDIR)/gpmm-qemu
	$(call say,INSTALL,$(INST_GUESTS))install -m 644 $(GUEST_BINS) $(INST_GUESTS)/
	$(call say,INSTALL,$(INST_CONFIGS))$(ini_fill) configs/memtest.ini > $(INST_CONFIGS)/memtest.ini
	$(Q)$(call libvirt_fill,$(BINDIR)/gpmm-qemu,$(DATADIR)/guests) configs/libvirt/payload.xml.in \
		> $(INST_CONFIGS)/libvirt/payload.xml
	$(Q)install -m 644 configs/libvirt/qemu.conf configs/libvirt/60-gpmm-userfaultfd.rules $(INST_CONFIGS)/libvirt/
	$(Q)if [ -f $(BUILD)/guests/linux/bzImage ] && [ -f $(BUILD)/guests/linux/initramfs.cpio.gz ]; then \
	  install -d $(INST_GUESTS)/linux && \
	  install -m 644 $(LINUX_FILES:%=$(BUILD)/guests/linux/%) $(INST_GUESTS)/linux/ && \
	  $(ini_fill) configs/linux.ini > $(INST_CONFIGS)/linux.ini && \
	  $(call libvirt_fill,$(BINDIR)/gpmm-qemu,$(DATADIR)/guests) configs/libvirt/linux.xml.in \
	    > $(INST_CONFIGS)/libvirt/linux.xml; \
	else \
	  echo "install: no Linux guest in $(BUILD)/guests/linux: it, configs/linux.ini and libvirt/linux.xml left out (make guest-linux, then make install)"; \
	fi
	$(call say,INSTALL,$(DESTDIR)$(UNITDIR)/gpmm-daemon.service)sed -e 's|@BINDIR@|$(BINDIR)|g' \
		-e 's|@RUN_DIR@|$(RUN_DIR)|g' -e 's|@RUNTIME_DIR@|$(RUN_DIR:/run/%=%)|g' \
		configs/systemd/gpmm-daemon.service.in > $(DESTDIR)$(UNITDIR)/gpmm-daemon.service
	$(Q)chmod 644 $(INST_CONFIGS)/*.ini $(INST_CONFIGS)/libvirt/*.xml $(DESTDIR)$(UNITDIR)/gpmm-daemon.service
	@echo "install: gpmm $(GPMM_VERSION) in $(DESTDIR)$(BINDIR); gpmm-daemon.service neither enabled nor started" \
	  "(systemctl daemon-reload && systemctl enable --now gpmm-daemon)"

uninstall:
	$(call say,UNINST,$(DESTDIR)$(PREFIX))rm -f $(DESTDIR)$(BINDIR)/gpmm $(DESTDIR)$(BINDIR)/gpmm-qemu $(DESTDIR)$(UNITDIR)/gpmm-daemon.service \
	  $(GUEST_NAMES:%=$(INST_GUESTS)/%.bin) $(LINUX_FILES:%=$(INST_GUESTS)/linux/%) \
	  $(INST_CONFIGS)/memtest.ini $(INST_CONFIGS)/linux.ini \
	  $(addprefix $(INST_CONFIGS)/libvirt/,linux.xml payload.xml qemu.conf 60-gpmm-userfaultfd.rules)
	$(Q)rmdir $(INST_GUESTS)/linux $(INST_GUESTS) $(INST_CONFIGS)/libvirt $(INST_CONFIGS) \
	  $(DESTDIR)$(DATADIR) 2>/dev/null || true

clean:
	rm -rf build

-include $(shell find build -name '*.d' 2>/dev/null)
