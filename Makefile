# vmtrace: top-level Makefile.
#
# One non-recursive make over the whole tree: every directory describes its
# parts in a module.mk fragment that this file includes.  Outputs go to $(O)
# (build/ by default, build/san with SAN=1), never into the source tree.
#
#   make            build everything: build/bin/vmtrace, build/lib/*, build/python
#   make deps       install the missing Debian packages `make` and `make runkvm`
#                   need (quiet when all are there; else a summary of what came)
#   make test-deps  the same and what `make test` needs on top (test consumers,
#                   fuzzers, builds of other projects)
#   make test       test-deps + build + every test; ends with "N passed, N failed"
#   make test SAN=1 the same with ASan+UBSan
#   make bench      benchmarks against the peer tools (never part of make test)
#   make runkvm     the default end-to-end example (examples/python-virtio)
#   make fuzz       libFuzzer targets for every parser we own
#   make mutate     the mutation harness (tests/mutate, docs/testing.md)
#   make coverage   line/branch coverage of the fast tests -> docs/coverage.md

SRC     := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
ifeq ($(SAN),1)
O       ?= build/san
else
O       ?= build
endif
OUT     := $(abspath $(O))

CC      ?= gcc
PKG     := pkg-config
WARN    := -Wall -Wextra -Wno-unused-parameter -Wshadow -Wstrict-prototypes -Werror=implicit-function-declaration
OPT     ?= -O2
CSTD    := -std=gnu11
# Flags of installed packages come from $(OUT)/config.mk (tools/configure),
# made only after `make deps`: nothing here asks pkg-config at parse time,
# so the first `make` on a fresh machine installs, then configures, then
# builds.  `make clean` and `make deps` alone need no configuration.
MODULE_MKS := $(sort $(wildcard $(SRC)/*/module.mk $(SRC)/*/*/module.mk))
NOCONFIG_GOALS := clean deps test-deps
ifneq ($(MAKECMDGOALS),)
ifeq ($(filter-out $(NOCONFIG_GOALS),$(MAKECMDGOALS)),)
VT_NOCONFIG := 1
endif
endif
ifneq ($(VT_NOCONFIG),1)
include $(OUT)/config.mk
endif
CPPFLAGS_ALL := -D_GNU_SOURCE -I$(SRC)/lib -I$(SRC) $(TRACE_CFLAGS)
CFLAGS_ALL   := $(CSTD) $(OPT) -g $(WARN) -fno-omit-frame-pointer -fPIC $(CFLAGS)
LDFLAGS_ALL  := $(LDFLAGS)
ifeq ($(SAN),1)
SANFLAGS     := -fsanitize=address,undefined -fno-sanitize-recover=undefined
CFLAGS_ALL   += $(SANFLAGS)
LDFLAGS_ALL  += $(SANFLAGS)
endif

# Filled in by module.mk fragments.
DEPS          :=	# Debian packages needed to build and run the examples (make runkvm)
TEST_DEPS     :=	# the Debian packages `make test` needs on top of DEPS
CORE_SRCS     :=	# lib/: the shared format + TSC module -> libvtcore.a
VMTRACE_SRCS  :=	# sources of the vmtrace command
VMTRACE_LIBS  :=	# extra -l flags of the vmtrace command
TARGETS       :=	# extra things `make` builds (runtime libraries, python ext)
TEST_PROGS    :=	# C unit tests: tests/unit/t-*.c built to $(OUT)/tests/
TEST_TARGETS  :=	# extra things tests need built (fixtures, test programs)
BENCH_TARGETS :=

.PHONY: all deps test-deps test bench runkvm fuzz clean
all:

include $(MODULE_MKS)

CORE_OBJS    := $(CORE_SRCS:%.c=$(OUT)/obj/%.o)
VMTRACE_OBJS := $(VMTRACE_SRCS:%.c=$(OUT)/obj/%.o)
TEST_BINS    := $(TEST_PROGS:tests/unit/%.c=$(OUT)/tests/%)

all: $(OUT)/lib/libvtcore.a $(OUT)/bin/vmtrace $(TARGETS)

$(OUT)/obj/%.o: $(SRC)/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) -MMD -MP -c -o $@ $<

$(OUT)/obj/%.o: $(SRC)/%.S
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) -MMD -MP -c -o $@ $<

$(OUT)/lib/libvtcore.a: $(CORE_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(OUT)/bin/vmtrace: $(VMTRACE_OBJS) $(OUT)/lib/libvtcore.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) -o $@ $(VMTRACE_OBJS) $(OUT)/lib/libvtcore.a $(VMTRACE_LIBS) -lm

$(OUT)/tests/%: $(SRC)/tests/unit/%.c $(OUT)/lib/libvtcore.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) -I$(SRC)/tests $(CFLAGS_ALL) $(LDFLAGS_ALL) -o $@ $< $(OUT)/lib/libvtcore.a $(VMTRACE_LIBS) -lm -lpthread

-include $(shell find $(OUT)/obj -name '*.d' 2>/dev/null)

deps:
	@$(SRC)/tools/deps runkvm $(sort $(DEPS))

test-deps:
	@$(SRC)/tools/deps test $(sort $(DEPS) $(TEST_DEPS))

# deps first, then the flags of what deps installed (see tools/configure)
$(OUT)/config.mk: $(SRC)/Makefile $(MODULE_MKS) $(SRC)/tools/deps $(SRC)/tools/configure
	@$(SRC)/tools/deps runkvm $(sort $(DEPS))
	@mkdir -p $(dir $@)
	@$(SRC)/tools/configure $(PY) >$@.tmp && mv $@.tmp $@

test: test-deps
	@$(MAKE) --no-print-directory -s all $(TEST_BINS) $(TEST_TARGETS) >$(OUT).buildlog 2>&1 || \
		{ tail -40 $(OUT).buildlog; echo "build failed (log: $(OUT).buildlog)"; echo "0 passed, 1 failed"; exit 1; }
	@VT_SRC=$(SRC) VT_BUILD=$(OUT) VT_SAN=$(SAN) $(SRC)/tests/run $(T)

bench: test-deps all $(BENCH_TARGETS)
	@VT_SRC=$(SRC) VT_BUILD=$(OUT) $(SRC)/tests/bench/run $(B)

runkvm: deps all
	@$(MAKE) --no-print-directory -C $(SRC)/examples/python-virtio O=$(OUT) run

clean:
	rm -rf $(OUT)
