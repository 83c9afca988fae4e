# gpmm — one Makefile. `make` builds build/gpmm, `make test` runs every CUnit
# suite, `make demo` runs the main job. SANITIZE=1 builds under ASan+UBSan
# into build/san, V=1 shows the commands, WERROR=0 drops -Werror.

PKGS       := gcc make pkg-config libcunit1-dev libjansson-dev
BUILD      := build
ifeq ($(SANITIZE),1)
BUILD      := build/san
SANFLAGS   := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
endif

CC         ?= gcc
WERROR     ?= 1
CFLAGS     := -O2 -g -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Wshadow \
              -Wstrict-prototypes -MMD -MP -pthread -I. $(SANFLAGS)
ifeq ($(WERROR),1)
CFLAGS     += -Werror
endif
LDFLAGS    := -pthread $(SANFLAGS)
LDLIBS     := -ljansson -lm

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
              mm/stats.c

APP_SRCS   := tests/bench/prng.c \
              tests/bench/workload.c \
              tests/bench/trace.c \
              tests/bench/bench_frag.c \
              tests/bench/bench_alloc.c \
              vmm/cli.c

UNIT_SRCS  := $(wildcard tests/unit/*.c)

MM_OBJS    := $(MM_SRCS:%.c=$(BUILD)/%.o)
APP_OBJS   := $(APP_SRCS:%.c=$(BUILD)/%.o)
UNIT_OBJS  := $(UNIT_SRCS:%.c=$(BUILD)/%.o)
LIBMM      := $(BUILD)/libgpmm-mm.a
LIBAPP     := $(BUILD)/libgpmm.a
GPMM       := $(BUILD)/gpmm
UNIT       := $(BUILD)/tests/unit-tests
DEPS_OK    := build/.deps-ok

.PHONY: all test demo deps clean
all: $(GPMM)

# A fresh machine needs nothing by hand: install what is missing, once.
deps: $(DEPS_OK)
$(DEPS_OK):
	@missing=""; for p in $(PKGS); do \
	  dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null || exit 1; \
	fi
	@mkdir -p build && touch $@

$(BUILD)/%.o: %.c | $(DEPS_OK)
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(CFLAGS) -c -o $@ $<

$(LIBMM): $(MM_OBJS)
	$(call say,AR,$@)$(AR) rcs $@ $^

$(LIBAPP): $(APP_OBJS)
	$(call say,AR,$@)$(AR) rcs $@ $^

$(GPMM): $(BUILD)/vmm/main.o $(LIBAPP) $(LIBMM)
	$(call say,LD,$@)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(UNIT): $(UNIT_OBJS) $(LIBAPP) $(LIBMM)
	@mkdir -p $(dir $@)
	$(call say,LD,$@)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) -lcunit

test: $(UNIT) $(GPMM)
	$(UNIT)

demo: $(GPMM)
	$(GPMM) bench frag

clean:
	rm -rf build

-include $(shell find build -name '*.d' 2>/dev/null)
