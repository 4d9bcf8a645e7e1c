# guest/mcount: the C function tracer runtime and `vmtrace run`.
#
#   $(OUT)/lib/libvmtrace-mcount.so       Linux runtime (LD_PRELOAD or link)
#   $(OUT)/lib/libvmtrace-mcount-free.a   freestanding runtime (kernels)
#   $(OUT)/guest/unikernel.elf            multiboot test guest (docs/format/unikernel.md)
#
# The runtimes live inside traced programs, so they are never built with
# the sanitizers (SAN=1 only changes the tools and tests around them).

# tests: uftrace reads our output, qemu runs the unikernel, objcopy makes
# its ELF32 container, /usr/bin/time measures the benchmark
TEST_DEPS += uftrace qemu-system-x86 binutils python3 time

VMTRACE_SRCS += guest/mcount/cmd_run.c guest/mcount/session.c guest/mcount/cmd_debugcon.c

MCOUNT_DIR    := guest/mcount
MCOUNT_OBJ    := $(OUT)/obj/mcount-rt
MCOUNT_BASE   := $(CSTD) -O2 -g $(WARN) -fno-omit-frame-pointer -D_GNU_SOURCE \
		 -I$(SRC)/lib -I$(SRC)
# Linux runtime: PIC, hidden by default, no vector code in the hot path
MCOUNT_CFLAGS := $(MCOUNT_BASE) -fPIC -fvisibility=hidden -ffunction-sections \
		 -fdata-sections -fno-instrument-functions
# freestanding runtime: no libc/builtins/SSE/red zone/stack protector,
# position independent so it links at any kernel address
MCOUNT_FREE_CFLAGS := $(MCOUNT_BASE) -ffreestanding -nostdlib -fno-builtin \
		 -fno-stack-protector -fno-stack-check -mgeneral-regs-only -mno-red-zone \
		 -fPIE -fvisibility=hidden -fno-asynchronous-unwind-tables \
		 -fno-instrument-functions -DVT_MCOUNT_FREESTANDING

TARGETS += $(OUT)/lib/libvmtrace-mcount.so $(OUT)/lib/libvmtrace-mcount-free.a \
	   $(OUT)/guest/unikernel.elf

# lib/ compiled for the runtime (PIC, no sanitizers); only what is used
# is linked (static archive + --gc-sections).  Listed here: lib/module.mk
# is read after this file.
MCOUNT_CORE_SRCS := lib/err.c lib/meta.c lib/utf8.c lib/uftrace_util.c lib/uftrace_write.c lib/elfread.c lib/cli.c \
		    lib/fileio.c
MCOUNT_CORE_OBJS := $(MCOUNT_CORE_SRCS:%.c=$(MCOUNT_OBJ)/%.o)

$(MCOUNT_OBJ)/lib/%.o: $(SRC)/lib/%.c
	@mkdir -p $(dir $@)
	$(CC) $(MCOUNT_CFLAGS) -MMD -MP -c -o $@ $<

$(MCOUNT_OBJ)/libvtcore-rt.a: $(MCOUNT_CORE_OBJS)
	rm -f $@ && ar rcs $@ $^

$(MCOUNT_OBJ)/linux.o: $(SRC)/$(MCOUNT_DIR)/linux.c
	@mkdir -p $(dir $@)
	$(CC) $(MCOUNT_CFLAGS) -mgeneral-regs-only -MMD -MP -c -o $@ $<

$(MCOUNT_OBJ)/session.o: $(SRC)/$(MCOUNT_DIR)/session.c
	@mkdir -p $(dir $@)
	$(CC) $(MCOUNT_CFLAGS) -MMD -MP -c -o $@ $<

$(MCOUNT_OBJ)/mcount.o: $(SRC)/$(MCOUNT_DIR)/mcount.S
	@mkdir -p $(dir $@)
	$(CC) $(MCOUNT_CFLAGS) -MMD -MP -c -o $@ $<

$(OUT)/lib/libvmtrace-mcount.so: $(MCOUNT_OBJ)/linux.o $(MCOUNT_OBJ)/session.o \
		$(MCOUNT_OBJ)/mcount.o $(MCOUNT_OBJ)/libvtcore-rt.a
	@mkdir -p $(dir $@)
	$(CC) -shared -o $@ $(filter %.o,$^) $(MCOUNT_OBJ)/libvtcore-rt.a \
		-Wl,--gc-sections -Wl,--exclude-libs,ALL -Wl,-z,defs -Wl,-z,noexecstack -lm

$(MCOUNT_OBJ)/free/free.o: $(SRC)/$(MCOUNT_DIR)/free.c
	@mkdir -p $(dir $@)
	$(CC) $(MCOUNT_FREE_CFLAGS) -MMD -MP -c -o $@ $<

$(MCOUNT_OBJ)/free/mcount.o: $(SRC)/$(MCOUNT_DIR)/mcount.S
	@mkdir -p $(dir $@)
	$(CC) $(MCOUNT_FREE_CFLAGS) -MMD -MP -c -o $@ $<

$(OUT)/lib/libvmtrace-mcount-free.a: $(MCOUNT_OBJ)/free/free.o $(MCOUNT_OBJ)/free/mcount.o
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# ---- the multiboot test guest (tests/guest/unikernel) ----------------------
UNIK_DIR := tests/guest/unikernel
UNIK_CFLAGS := $(MCOUNT_BASE) -ffreestanding -nostdlib -fno-builtin -fno-stack-protector \
	       -fno-stack-check -mgeneral-regs-only -mno-red-zone -fno-pic -fno-pie \
	       -mcmodel=small -fno-asynchronous-unwind-tables -I$(SRC)/$(MCOUNT_DIR)/include

$(OUT)/guest/unikernel/boot.o: $(SRC)/$(UNIK_DIR)/boot.S
	@mkdir -p $(dir $@)
	$(CC) $(UNIK_CFLAGS) -c -o $@ $<

# main.c calls the runtime (no -pg); work.c is the traced code
$(OUT)/guest/unikernel/main.o: $(SRC)/$(UNIK_DIR)/main.c $(SRC)/$(UNIK_DIR)/unikernel.h
	@mkdir -p $(dir $@)
	$(CC) $(UNIK_CFLAGS) -c -o $@ $<

$(OUT)/guest/unikernel/work.o: $(SRC)/$(UNIK_DIR)/work.c $(SRC)/$(UNIK_DIR)/work.h \
		$(SRC)/$(UNIK_DIR)/unikernel.h
	@mkdir -p $(dir $@)
	$(CC) $(UNIK_CFLAGS) -pg -O1 -fno-inline -fno-optimize-sibling-calls -c -o $@ $<

$(OUT)/guest/unikernel64.elf: $(OUT)/guest/unikernel/boot.o $(OUT)/guest/unikernel/main.o \
		$(OUT)/guest/unikernel/work.o $(OUT)/lib/libvmtrace-mcount-free.a \
		$(SRC)/$(UNIK_DIR)/link.ld
	$(CC) -nostdlib -static -no-pie -Wl,-T,$(SRC)/$(UNIK_DIR)/link.ld -Wl,--build-id=none \
		-Wl,-z,noexecstack -o $@ $(filter %.o,$^) $(OUT)/lib/libvmtrace-mcount-free.a

# QEMU's multiboot loader takes ELF32 only: same bytes, 32-bit container
$(OUT)/guest/unikernel.elf: $(OUT)/guest/unikernel64.elf
	objcopy -O elf32-i386 $< $@

# the sampling image (tools/vmtrace-sample, tests/tools/t-vmsample-unikernel.sh):
# the same guest, spinning UNIK_SPIN_MS ms in spin.c (untraced) before its
# traced run; the default image above is built without it
UNIK_SPIN_MS ?= 20000
UNIK_SPIN_OBJ := $(OUT)/guest/unikernel-spin
TEST_TARGETS += $(OUT)/guest/unikernel-spin.elf $(OUT)/guest/unikernel-spin64.elf

$(UNIK_SPIN_OBJ)/main.o: $(SRC)/$(UNIK_DIR)/main.c $(SRC)/$(UNIK_DIR)/unikernel.h \
		$(SRC)/$(UNIK_DIR)/spin.h
	@mkdir -p $(dir $@)
	$(CC) $(UNIK_CFLAGS) -DUNIK_SPIN_MS=$(UNIK_SPIN_MS) -c -o $@ $<

$(UNIK_SPIN_OBJ)/spin.o: $(SRC)/$(UNIK_DIR)/spin.c $(SRC)/$(UNIK_DIR)/spin.h
	@mkdir -p $(dir $@)
	$(CC) $(UNIK_CFLAGS) -c -o $@ $<

$(OUT)/guest/unikernel-spin64.elf: $(OUT)/guest/unikernel/boot.o $(UNIK_SPIN_OBJ)/main.o \
		$(UNIK_SPIN_OBJ)/spin.o $(OUT)/guest/unikernel/work.o \
		$(OUT)/lib/libvmtrace-mcount-free.a $(SRC)/$(UNIK_DIR)/link.ld
	$(CC) -nostdlib -static -no-pie -Wl,-T,$(SRC)/$(UNIK_DIR)/link.ld -Wl,--build-id=none \
		-Wl,-z,noexecstack -o $@ $(filter %.o,$^) $(OUT)/lib/libvmtrace-mcount-free.a

$(OUT)/guest/unikernel-spin.elf: $(OUT)/guest/unikernel-spin64.elf
	objcopy -O elf32-i386 $< $@

# ---- test programs (tests/guest/progs) --------------------------------------
GPROG_SRC := tests/guest/progs
GPROG_OUT := $(OUT)/tests/guest
GPROG_CFLAGS := -std=gnu11 -O1 -g -fno-inline -fno-optimize-sibling-calls -pthread
GPROGS := $(GPROG_OUT)/mt-pg $(GPROG_OUT)/mt-fentry $(GPROG_OUT)/mt-cyg $(GPROG_OUT)/deep-pg \
	  $(GPROG_OUT)/threxit-pg $(GPROG_OUT)/killme-pg $(GPROG_OUT)/loop-pg \
	  $(GPROG_OUT)/freestanding-test $(GPROG_OUT)/ljmp-pg
TEST_TARGETS += $(GPROGS)
BENCH_TARGETS += $(GPROG_OUT)/loop-pg $(GPROG_OUT)/loop-nopg

# the untraced baseline of the benchmark: the same loop without -pg
$(GPROG_OUT)/loop-nopg: $(SRC)/$(GPROG_SRC)/loop.c
	@mkdir -p $(dir $@)
	$(CC) $(GPROG_CFLAGS) -o $@ $<

$(GPROG_OUT)/mt-pg: $(SRC)/$(GPROG_SRC)/mt.c
	@mkdir -p $(dir $@)
	$(CC) $(GPROG_CFLAGS) -pg -o $@ $<

$(GPROG_OUT)/mt-fentry: $(SRC)/$(GPROG_SRC)/mt.c
	@mkdir -p $(dir $@)
	$(CC) $(GPROG_CFLAGS) -pg -mfentry -o $@ $<

$(GPROG_OUT)/mt-cyg: $(SRC)/$(GPROG_SRC)/mt.c
	@mkdir -p $(dir $@)
	$(CC) $(GPROG_CFLAGS) -finstrument-functions -o $@ $<

$(GPROG_OUT)/%-pg: $(SRC)/$(GPROG_SRC)/%.c
	@mkdir -p $(dir $@)
	$(CC) $(GPROG_CFLAGS) -pg -o $@ $<

# -nostdlib static program: own _start, raw syscalls, the freestanding .a
$(GPROG_OUT)/freestanding-test: $(SRC)/$(GPROG_SRC)/freestanding.c \
		$(OUT)/lib/libvmtrace-mcount-free.a
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O1 -g -ffreestanding -nostdlib -static -no-pie -fno-pie \
		-fno-stack-protector -mgeneral-regs-only -fno-builtin \
		-I$(SRC)/lib -I$(SRC)/$(MCOUNT_DIR)/include -pg -o $@ $< $(OUT)/lib/libvmtrace-mcount-free.a

-include $(shell find $(MCOUNT_OBJ) -name '*.d' 2>/dev/null)
