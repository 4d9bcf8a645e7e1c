# host/: the tracefs recorder (`vmtrace record`, also `--guest` inside a
# VM) and the KVM facts collector.  Needs libtracefs/libtraceevent.
VMTRACE_SRCS += host/record.c host/kvmfacts.c host/proc.c host/cmd_record.c
# the recorder's other concerns (host/record_int.h lists them)
VMTRACE_SRCS += host/record_splice.c host/record_tracefs.c host/record_registry.c
VMTRACE_SRCS += host/record_tracedat.c host/record_finish.c
# CPython's USDT markers as uprobe events (record --python, top --python)
VMTRACE_SRCS += host/usdt_probes.c
# extents.tsv: QEMU image files' extents at the start and end (report maps bios)
VMTRACE_SRCS += host/extents.c
# `vmtrace unpack`: the host end of the guest's trace stream (lib/stream.c)
VMTRACE_SRCS += host/cmd_unpack.c
VMTRACE_LIBS += $(TRACEFS_LIBS) -lpthread
DEPS += libtracefs-dev libtraceevent-dev libtracecmd-dev qemu-system-x86
# the tests read its trace.dat files with Debian's trace-cmd
TEST_DEPS += trace-cmd

# tests/host: a libtracecmd read-back checker, a syscall generator (bench),
# and a multiboot guest that writes a known PIO sequence.
TEST_TARGETS += $(OUT)/tests/host/tdcount $(OUT)/tests/host/pio-guest.elf $(OUT)/tests/host/sysloop
# a command whose first action is a syscall burst from new tasks (t-record-burst)
TEST_TARGETS += $(OUT)/tests/host/burst
$(OUT)/tests/host/burst: $(SRC)/tests/host/burst.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) $(LDFLAGS_ALL) -o $@ $< -lpthread
BENCH_TARGETS += $(OUT)/tests/host/sysloop $(OUT)/tests/host/tdcount $(OUT)/tests/host/pio-loop.elf
$(OUT)/tests/host/tdcount: $(SRC)/tests/host/tdcount.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) $(LDFLAGS_ALL) -o $@ $< $(TRACECMD_LIBS)
$(OUT)/tests/host/sysloop: $(SRC)/tests/host/sysloop.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) $(LDFLAGS_ALL) -o $@ $<
$(OUT)/tests/host/pio-guest.elf: $(SRC)/tests/host/pio-guest.S
	@mkdir -p $(dir $@)
	$(CC) -m32 -c -o $@.o $<
	ld -m elf_i386 --build-id=none -Ttext=0x100000 -e _start -o $@ $@.o
# unit test of the KVM facts collector against a fake debugfs tree
TEST_TARGETS += $(OUT)/tests/t-kvmfacts
$(OUT)/tests/t-kvmfacts: $(SRC)/tests/host/t-kvmfacts.c $(OUT)/obj/host/kvmfacts.o \
		$(OUT)/obj/host/proc.o $(OUT)/lib/libvtcore.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) -I$(SRC)/host -I$(SRC)/tests $(CFLAGS_ALL) $(LDFLAGS_ALL) -o $@ $< \
		$(OUT)/obj/host/kvmfacts.o $(OUT)/obj/host/proc.o $(OUT)/lib/libvtcore.a -lpthread -lm

# the KVM recorder benchmark's guest (tests/bench/b-kvm.sh): a PIO exit loop
$(OUT)/tests/host/pio-loop.elf: $(SRC)/tests/host/pio-loop.c
	@mkdir -p $(dir $@)
	$(CC) -m32 -ffreestanding -nostdlib -static -no-pie -fno-pic -O2 -fno-stack-protector \
		-Wl,--build-id=none -Wl,-Ttext=0x100000 -o $@ $<
