# gpmm — one Makefile. `make` builds build/gpmm, `make test` runs every CUnit
# suite, `make demo` runs the main job, `make fuzz` the libFuzzer targets
# (tests/fuzz/Makefile.inc). SANITIZE=1 builds under ASan+UBSan
# into build/san, V=1 shows the commands, WERROR=0 drops -Werror.

PKGS       := gcc make binutils procps libcunit1-dev libjansson-dev libinih-dev \
              qemu-system-x86 busybox-static xz-utils \
              libvirt-daemon-system libvirt-daemon-driver-qemu libvirt-clients \
              libseccomp-dev clang-14 libclang-rt-14-dev
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
              mm/migrate.c \
              mm/lumpy.c \
              mm/compaction.c \
              mm/hostmem.c \
              mm/thread.c \
              mm/stats.c \
              mm/fault.c

VMM_SRCS   := vmm/memory/pool_own.c \
              vmm/pool_service/pool_remote.c \
              vmm/pool_service/pool_wire.c \
              vmm/pool_service/pool_client.c \
              vmm/pool_service/pool_service.c \
              vmm/control/metrics.c \
              cli/cmd_fragmenting_tenant.c \
              vmm/qemu/qemu_args.c vmm/qemu/qmp_qemu.c cli/cmd_qemu.c \
              vmm/core/kvm.c \
              vmm/sys/host.c \
              vmm/memory/guest_mem.c \
              vmm/memory/guest_access.c \
              vmm/memory/page_move.c \
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
              cli/cmd_frag.c \
              cli/cmd_host.c \
              vmm/control/console_buf.c \
              vmm/control/console.c \
              vmm/sys/sandbox.c \
              vmm/sys/unix_socket.c

# devices/ is a library of its own: it reaches the machine only through
# devices/machine.h, and links without vmm/ (tests/devices/ proves it).
DEV_SRCS   := devices/device.c \
              devices/machine.c \
              devices/legacy/serial8250.c \
              devices/legacy/debugport.c \
              devices/legacy/power.c \
              devices/virtio/virtio_queue.c \
              devices/virtio/virtio_mmio.c \
              devices/virtio/virtio_blk.c \
              devices/virtio/virtio_balloon.c

APP_SRCS   := $(VMM_SRCS) \
              bench/prng.c \
              bench/workload.c \
              bench/trace.c \
              bench/progress.c \
              bench/bench_frag.c \
              bench/bench_alloc.c \
              bench/bench_vm.c \
              bench/bench_boot_linux.c \
              bench/bench_hugeback.c \
              bench/bench_isolation.c \
              cli/cli.c

UNIT_SRCS  := $(wildcard tests/unit/*.c) tests/runner.c
DEVT_SRCS  := $(wildcard tests/devices/*.c) tests/runner.c
INTEG_SRCS := $(wildcard tests/integration/*.c)

MM_OBJS    := $(MM_SRCS:%.c=$(BUILD)/%.o)
DEV_OBJS   := $(DEV_SRCS:%.c=$(BUILD)/%.o)
APP_OBJS   := $(APP_SRCS:%.c=$(BUILD)/%.o)
UNIT_OBJS  := $(UNIT_SRCS:%.c=$(BUILD)/%.o)
DEVT_OBJS  := $(DEVT_SRCS:%.c=$(BUILD)/%.o)
INTEG_OBJS := $(INTEG_SRCS:%.c=$(BUILD)/%.o)
LIBMM      := $(BUILD)/libgpmm-mm.a
LIBDEV     := $(BUILD)/libgpmm-devices.a
LIBAPP     := $(BUILD)/libgpmm.a
GPMM       := $(BUILD)/gpmm
# libvirt's <emulator>: gpmm under a name that makes it `gpmm qemu`
GPMM_QEMU  := $(BUILD)/gpmm-qemu
UNIT       := $(BUILD)/tests/unit-tests
DEVTEST    := $(BUILD)/tests/device-tests
INTEG      := $(BUILD)/tests/integration-tests
DEPS_OK    := build/.deps-ok

.PHONY: all test test-unit test-where test-kernels demo libvirt-demo deps clean
all: $(GPMM) $(GPMM_QEMU) guests

include guests/Makefile.inc
include guests/linux/Makefile.inc
include tests/fuzz/Makefile.inc

# A fresh machine needs nothing by hand: install what is missing, once (the
# stamp build/.deps-ok skips the check afterwards). Says what it installs,
# and why it cannot where it cannot (not Debian, not root).
deps: $(DEPS_OK)
$(DEPS_OK):
	@missing=""; for p in $(PKGS); do \
	  dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "deps: installing from Debian:$$missing"; \
	  if ! command -v apt-get >/dev/null; then \
	    echo "deps: no apt-get here (not Debian?): install these by hand:$$missing" >&2; exit 1; fi; \
	  if [ "$$(id -u)" != 0 ]; then \
	    echo "deps: not root: run 'sudo apt-get install$$missing', or make as root" >&2; exit 1; fi; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >build.apt.log 2>&1 || \
	    { echo "deps: apt-get install failed; its output:" >&2; tail -20 build.apt.log >&2; rm -f build.apt.log; exit 1; }; \
	  rm -f build.apt.log; \
	fi
	@mkdir -p build && touch $@

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

$(UNIT): $(UNIT_OBJS) $(LIBAPP) $(LIBDEV) $(LIBMM)
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) -lcunit

# the devices' own suites: the devices library and the machine double, no vmm/
$(DEVTEST): $(DEVT_OBJS) $(LIBDEV)
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(CC) $(LDFLAGS) -o $@ $^ -lcunit

$(INTEG): $(INTEG_OBJS) $(LIBAPP) $(LIBDEV) $(LIBMM)
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) -lcunit

# Unit suites need nothing; integration suites boot real KVM guests: on this
# host where /dev/kvm exists, else inside the nested-KVM test VM (tests/vm/run,
# TESTVM_KERNEL picks its kernel). The first line says which. Both kinds of
# suite run even if one fails.
TESTVM_KERNEL ?= 6.12
TEST_KERNELS  ?= 6.1 6.12
# Budgets (s) for one test-VM run, retries included: a normal run takes
# 4-5 minutes (8 under SANITIZE=1); CI has 30 for make test + make
# test-kernels together, so a guest that stalls fails its run instead of
# eating the whole budget.
TESTVM_TEST_TIMEOUT   ?= 900
TESTVM_KERNEL_TIMEOUT ?= 720
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
# that, up to 4 times), only its group runs again.
INTEG_GROUPS  := vm,cli,migrate,virtio linux,hostpool libvirt hardening
ifeq ($(HAVE_KVM),yes)
INTEG_RUN      = env $(INTEG_ENV) $(INTEG) vm cli migrate virtio hostpool hardening || rc=1; \
                 tests/vm/run --kernel $(TESTVM_KERNEL) --timeout $(TESTVM_TEST_TIMEOUT) -- \
                 env $(INTEG_ENV) $(INTEG) linux libvirt || rc=1
else
INTEG_RUN      = for g in $(INTEG_GROUPS); do \
                   TESTVM_TRIES=4 $(IN_KVM) env $(INTEG_ENV) $(INTEG) $$(echo $$g | tr , ' ') || rc=1; \
                 done
endif

# The fuzz targets in make test: every committed input replayed (past
# crashes stay fixed), then TEST_FUZZ_SECONDS of fuzzing each (about a
# minute in all); long runs are `make fuzz FUZZ_SECONDS=N`.
TEST_FUZZ_SECONDS ?= 8
test: test-where $(UNIT) $(DEVTEST) $(INTEG) $(GPMM) $(GPMM_QEMU) guests guest-linux fuzz-build
	@rc=0; env $(UNIT_ENV) $(UNIT) || rc=1; \
	env $(UNIT_ENV) $(DEVTEST) || rc=1; \
	$(MAKE) --no-print-directory fuzz-regress || rc=1; \
	$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=$(TEST_FUZZ_SECONDS) || rc=1; \
	$(INTEG_RUN); exit $$rc

# The unit and device suites alone: what CI runs again under ASan+UBSan and TSan
# (SANITIZE=1, TSAN=1), where a whole sanitized make test would not fit.
test-unit: $(UNIT) $(DEVTEST)
	@rc=0; env $(UNIT_ENV) $(UNIT) || rc=1; env $(UNIT_ENV) $(DEVTEST) || rc=1; exit $$rc

# The runner's own check (tests/vm/selftest), then the integration suites
# once per host kernel, each in the test VM, and a table kernel x suite.
test-kernels: $(INTEG) $(GPMM) $(GPMM_QEMU) guests guest-linux
	@tests/vm/selftest
	@$(INTEG_ENV) TESTVM_TIMEOUT=$(TESTVM_KERNEL_TIMEOUT) tests/vm/kernels $(TEST_KERNELS) -- $(INTEG)

# The demo's guest is Linux (Debian's stock kernel and our initramfs): it
# churns memory with memwork, frees every other 2 MiB, lets free page
# reporting hand it back, and powers off; --stats prints its report. Linux
# boots in the test VM (the emulated KVM some hosts have cannot boot it).
DEMO_APPEND := quiet gpmm.run=memwork,--mib,96,--rounds,2,--free,alternate;sleep,8;poweroff
demo: $(GPMM) guests guest-linux
	@echo "demo: Linux guest in the nested-KVM test VM (tests/vm/run); $(KVM_WHERE)"
	tests/vm/run --kernel $(TESTVM_KERNEL) -- $(GPMM) run --kernel $(BUILD)/guests/linux/bzImage \
		--initrd $(BUILD)/guests/linux/initramfs.cpio.gz --ram 256M --cpus 2 --pool 512M \
		--name demo --stats --console stdio --append "$(DEMO_APPEND)" </dev/null
	$(GPMM) bench frag

# libvirt drives gpmm (configs/libvirt/): libvirtd and virtlogd started in a
# private mount namespace (tests/libvirt/env), two domains on the host pool
# service, their stats and report, shutdown and clean-up. In the test VM,
# like the demo: its Linux guest needs it, and the host's libvirt is left alone.
libvirt-demo: $(GPMM) $(GPMM_QEMU) guests guest-linux
	@echo "libvirt-demo: in the nested-KVM test VM (tests/vm/run); $(KVM_WHERE)"
	tests/vm/run --kernel $(TESTVM_KERNEL) -- tests/libvirt/env tests/libvirt/demo </dev/null

clean:
	rm -rf build

-include $(shell find build -name '*.d' 2>/dev/null)
