# align/: the clock model guest TSC <-> host TSC <-> ns (model.c, match.c,
# clock.c: pure), the alignment sources one file each (src_*.c: estimator
# and loader, registered in model.c), the gathering layer that reads the
# files (sources.c), the inside check (inside.c), `vmtrace align` and the
# guest's `vmtrace marker`.
ALIGN_MODEL_SRCS := align/model.c align/match.c align/clock.c
ALIGN_MODEL_SRCS += align/src_markers.c align/src_debugfs.c align/src_tracepoint.c \
	align/src_tsync.c align/src_user.c align/sources.c align/inside.c
VMTRACE_SRCS += $(ALIGN_MODEL_SRCS) align/cmd_align.c align/cmd_marker.c
VMTRACE_LIBS += $(TRACECMD_LIBS)

# tests/unit/t-align, t-align-model, t-align-inside and t-clockmap link align's
# objects (the model's queries and clock maps, the inside check; the sources'
# loaders come along, unused)
ALIGN_MODEL_OBJS := $(ALIGN_MODEL_SRCS:%.c=$(OUT)/obj/%.o)
ALIGN_UNIT_TESTS := $(addprefix $(OUT)/tests/,t-align t-align-model t-align-inside t-clockmap)
$(ALIGN_UNIT_TESTS): $(ALIGN_MODEL_OBJS)
$(ALIGN_UNIT_TESTS): LDFLAGS_ALL += $(ALIGN_MODEL_OBJS)

# tests/align: a generator of host/guest fixture directories with known answers
TEST_TARGETS += $(OUT)/tests/align/mkfixture
$(OUT)/tests/align/mkfixture: $(SRC)/tests/align/mkfixture.c $(SRC)/tests/align/kvm_formats.h $(OUT)/lib/libvtcore.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) $(LDFLAGS_ALL) -o $@ $< $(OUT)/lib/libvtcore.a \
		$(VMTRACE_LIBS) -lm

# tests/align: a trace-cmd-shaped host-guest pair (TIME_SHIFT, GUEST options)
TEST_TARGETS += $(OUT)/tests/align/mktcpair
$(OUT)/tests/align/mktcpair: $(SRC)/tests/align/mktcpair.c $(SRC)/tests/align/kvm_formats.h $(OUT)/lib/libvtcore.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) $(LDFLAGS_ALL) -o $@ $< $(OUT)/lib/libvtcore.a \
		$(VMTRACE_LIBS) -lm

# tests/align: a freestanding multiboot guest emitting markers (real-data
# tests under TCG and KVM); chardev markers, and a PIO-marker variant
MARKER_GUEST_FLAGS := -m32 -ffreestanding -nostdlib -static -no-pie -fno-pic -O2 \
	-fno-stack-protector -I$(SRC)/lib -Wl,--build-id=none -Wl,-Ttext=0x100000
TEST_TARGETS += $(OUT)/tests/align/marker-guest.elf $(OUT)/tests/align/marker-guest-pio.elf \
	$(OUT)/tests/align/marker-guest-tscw.elf $(OUT)/tests/align/marker-guest-hc.elf \
	$(OUT)/tests/align/marker-guest-hctscw.elf $(OUT)/tests/align/marker-guest-hcadj.elf
$(OUT)/tests/align/marker-guest.elf: $(SRC)/tests/align/marker-guest.c $(SRC)/lib/marker.h
	@mkdir -p $(dir $@)
	$(CC) $(MARKER_GUEST_FLAGS) -o $@ $<
$(OUT)/tests/align/marker-guest-pio.elf: $(SRC)/tests/align/marker-guest.c $(SRC)/lib/marker.h
	@mkdir -p $(dir $@)
	$(CC) $(MARKER_GUEST_FLAGS) -DMARKER_PIO -o $@ $<
# PIO markers, and a write of IA32_TSC halfway (two offset segments)
$(OUT)/tests/align/marker-guest-tscw.elf: $(SRC)/tests/align/marker-guest.c $(SRC)/lib/marker.h
	@mkdir -p $(dir $@)
	$(CC) $(MARKER_GUEST_FLAGS) -DMARKER_PIO -DMARKER_TSC_WRITE -o $@ $<
# in-band hypercall markers (issue 15), and with the IA32_TSC write too
$(OUT)/tests/align/marker-guest-hc.elf: $(SRC)/tests/align/marker-guest.c $(SRC)/lib/marker.h
	@mkdir -p $(dir $@)
	$(CC) $(MARKER_GUEST_FLAGS) -DMARKER_HYPERCALL -o $@ $<
$(OUT)/tests/align/marker-guest-hctscw.elf: $(SRC)/tests/align/marker-guest.c $(SRC)/lib/marker.h
	@mkdir -p $(dir $@)
	$(CC) $(MARKER_GUEST_FLAGS) -DMARKER_HYPERCALL -DMARKER_TSC_WRITE -o $@ $<
$(OUT)/tests/align/marker-guest-hcadj.elf: $(SRC)/tests/align/marker-guest.c $(SRC)/lib/marker.h
	@mkdir -p $(dir $@)
	$(CC) $(MARKER_GUEST_FLAGS) -DMARKER_HYPERCALL -DMARKER_TSC_WRITE=0x3b -o $@ $<
# the save/restore test's guest: 40 in-band markers ~0.2 s apart, a progress
# byte after each (tests/align/t-align-restore.sh migrates it halfway)
TEST_TARGETS += $(OUT)/tests/align/marker-guest-hcmig.elf
$(OUT)/tests/align/marker-guest-hcmig.elf: $(SRC)/tests/align/marker-guest.c $(SRC)/lib/marker.h
	@mkdir -p $(dir $@)
	$(CC) $(MARKER_GUEST_FLAGS) -DMARKER_HYPERCALL -DMARKER_PROGRESS -DN_MARKERS=40 \
		-DGAP_TSC=500000000ull -o $@ $<

# tests/fuzz/fuzz-markers: the markers.dat reader + the model on its output
ALIGN_FUZZ_OBJS := $(ALIGN_MODEL_SRCS:%.c=$(OUT)/fuzz/obj/%.o)
$(OUT)/fuzz/fuzz-markers: $(ALIGN_FUZZ_OBJS)
$(OUT)/fuzz/fuzz-markers: FUZZ_EXTRA_LIBS += $(ALIGN_FUZZ_OBJS)
# and its replay binary (tests/fuzz/replay-main.c), with the build's objects
$(OUT)/fuzz/replay-markers: $(ALIGN_MODEL_SRCS:%.c=$(OUT)/obj/%.o)
$(OUT)/fuzz/replay-markers: REPLAY_EXTRA += $(ALIGN_MODEL_SRCS:%.c=$(OUT)/obj/%.o)

# the alignment benchmark's guests (tests/bench/b-align-kvm.sh): 100 in-band
# markers, 0.2 / 2 / 20 ms apart (at ~2 GHz)
MARKER_BENCH_GAPS := 400000 4000000 40000000
BENCH_TARGETS += $(MARKER_BENCH_GAPS:%=$(OUT)/tests/align/marker-guest-hc100-%.elf)
$(OUT)/tests/align/marker-guest-hc100-%.elf: $(SRC)/tests/align/marker-guest.c $(SRC)/lib/marker.h
	@mkdir -p $(dir $@)
	$(CC) $(MARKER_GUEST_FLAGS) -DMARKER_HYPERCALL -DN_MARKERS=100 -DGAP_TSC=$*ull -o $@ $<
