# tools/: the vmtrace command dispatcher and setup helpers.
VMTRACE_SRCS += tools/vmtrace.c
# commands over every format: vmtrace tsc, info, convert (lib/ reads and writes)
VMTRACE_SRCS += tools/cmd_tsc.c tools/cmd_info.c tools/cmd_convert.c
# commands over the Python tracer's output and processes: vmtrace top (a
# uftrace dir, live; --python: CPython's USDT markers, guest/usdt), attach
# (start the tracer in a running Python), finalize (fold a killed tracer's
# stage files, lib/pystage.c)
VMTRACE_SRCS += tools/cmd_top.c tools/cmd_attach.c tools/cmd_finalize.c

# `vmtrace lab` (tools/cmd_lab.c) runs the lab program installed beside the
# binary: tools/kvm-lab, told where the tree's tools are (debian-kernel)
VMTRACE_SRCS += tools/cmd_lab.c
TARGETS += $(OUT)/bin/vmtrace-lab
$(OUT)/bin/vmtrace-lab: $(SRC)/tools/kvm-lab
	@mkdir -p $(dir $@)
	sed 's|^VT_LAB_TOOLS=.*|VT_LAB_TOOLS=$(SRC)/tools|' $< >$@.tmp && chmod 755 $@.tmp && mv $@.tmp $@
DEPS += build-essential pkg-config

# `vmtrace meta`: scripts mark their output directories (tools/uftrace-tsc).
VMTRACE_SRCS += tools/cmd_meta.c

# Test helpers of tests/tools/: the TSC printer (brackets recorded runs).
TEST_TARGETS += $(OUT)/tests/tools/rdtsc
$(OUT)/tests/tools/rdtsc: $(SRC)/tests/tools/rdtsc.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) $(LDFLAGS_ALL) -o $@ $<

# patches/ (tools/debian-source, build-uftrace-tsc, build-virtiofsd-nosandbox):
# unpacking and building Debian 12's uftrace 0.13 and qemu 7.2 (virtiofsd).
TEST_DEPS += dpkg-dev patch xz-utils git libelf-dev
TEST_DEPS += meson ninja-build libglib2.0-dev libpixman-1-dev libcap-ng-dev libseccomp-dev
# gdb tools (tools/gdb/), tsc-khz-kcore, the sampler's guest (TCG)
TEST_DEPS += gdb python3 qemu-system-x86 gcc-multilib
# tools/debian-kernel (the examples' guests, the KVM lab): objcopy reads
# module dependencies; xz / zstd decompress .ko.xz / .ko.zst modules
DEPS += binutils xz-utils zstd

# Reads a sampler's samples.tsv through lib/samples.c (t-vmsample.sh).
TEST_TARGETS += $(OUT)/tests/tools/samples-cat
$(OUT)/tests/tools/samples-cat: $(SRC)/tests/tools/samples-cat.c $(OUT)/lib/libvtcore.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) $(LDFLAGS_ALL) -o $@ $< $(OUT)/lib/libvtcore.a $(VMTRACE_LIBS) -lm

# The traced program whose core the gdb extension reads (t-gdb-dump.sh).
TEST_TARGETS += $(OUT)/tests/tools/crashme
$(OUT)/tests/tools/crashme: $(SRC)/tests/tools/crashme.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O1 -g -pg -fno-inline -fno-optimize-sibling-calls -pthread -o $@ $<

# The sampling test guest: multiboot, 32-bit, spins in a known call tree
# (qemu-system-i386 -kernel; tests/tools/t-vmsample.sh).
SPIN_SRC := tests/tools/spinguest
SPIN_CFLAGS := -m32 -std=gnu11 -O1 -g -ffreestanding -fno-pic -fno-pie -fno-stack-protector \
	       -fno-omit-frame-pointer -fno-asynchronous-unwind-tables
TEST_TARGETS += $(OUT)/tests/tools/spin.elf
$(OUT)/tests/tools/spin.elf: $(SRC)/$(SPIN_SRC)/boot.S $(SRC)/$(SPIN_SRC)/spin.c $(SRC)/$(SPIN_SRC)/link.ld
	@mkdir -p $(dir $@)
	$(CC) $(SPIN_CFLAGS) -c -o $(OUT)/tests/tools/spin-boot.o $(SRC)/$(SPIN_SRC)/boot.S
	$(CC) $(SPIN_CFLAGS) -c -o $(OUT)/tests/tools/spin.o $(SRC)/$(SPIN_SRC)/spin.c
	$(LD) -m elf_i386 -nostdlib -static --build-id=none --no-warn-rwx-segments -T $(SRC)/$(SPIN_SRC)/link.ld \
		-o $@ $(OUT)/tests/tools/spin-boot.o $(OUT)/tests/tools/spin.o

# vt-kvm-probe: can this machine run a KVM guest (open /dev/kvm, API
# version, KVM_CREATE_VM, KVM_CREATE_VCPU)?  Used by the examples
# (examples/common/vm.sh) and the KVM tests' gate (tests/lib/kvm.sh).
TARGETS += $(OUT)/bin/vt-kvm-probe
$(OUT)/bin/vt-kvm-probe: $(SRC)/tools/kvm-probe.c $(SRC)/lib/err.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) $(LDFLAGS_ALL) -o $@ $<
