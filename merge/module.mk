# merge/: `vmtrace merge`: readers -> sorter -> flows -> sinks (docs/merge.md).
VMTRACE_SRCS += merge/cmd_merge.c merge/pipeline.c merge/plan.c merge/tables.c merge/sort.c \
	merge/flow.c merge/reader_uftrace.c merge/reader_tracedat.c merge/reader_markers.c merge/sink.c \
	merge/sink_perfetto.c merge/sink_chrome.c merge/sink_uftrace.c
# CPython USDT uprobe events -> python slices (guest/usdt's records)
VMTRACE_SRCS += merge/usdt_python.c
# guest stack samples of tools/vmtrace-sample (samples.tsv) -> instants
VMTRACE_SRCS += merge/reader_samples.c
VMTRACE_LIBS += -ltracecmd -ltracefs -ltraceevent
DEPS += libtracecmd-dev libtraceevent-dev libtracefs-dev
# the tests' consumers of its outputs (protoc --decode, uftrace) and timing
TEST_DEPS += protobuf-compiler uftrace time

# the synthetic trace generator of tests/merge and tests/bench/b-merge.sh
TEST_TARGETS += $(OUT)/tests/merge/gen-trace
BENCH_TARGETS += $(OUT)/tests/merge/gen-trace
$(OUT)/tests/merge/gen-trace: $(SRC)/tests/merge/gen-trace.c $(OUT)/lib/libvtcore.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) $(LDFLAGS_ALL) -o $@ $< $(OUT)/lib/libvtcore.a -lm

# the per-event path (readers -> sorter -> sinks) is worth -O3, unless the
# build names its own level (OPT=-O0 of tools/coverage: at -O3 gcov counts
# an inline helper's branches once per call site it is inlined into)
ifeq ($(origin OPT),file)
$(OUT)/obj/merge/%.o: CFLAGS_ALL += -O3
endif

# a synthetic trace.dat (kvm events in real tracefs formats) for tests/merge
TEST_TARGETS += $(OUT)/tests/merge/gen-tracedat
$(OUT)/tests/merge/gen-tracedat: $(SRC)/tests/merge/gen-tracedat.c $(OUT)/lib/libvtcore.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) $(LDFLAGS_ALL) -o $@ $< $(OUT)/lib/libvtcore.a \
		$(VMTRACE_LIBS) -lm

# tests/unit/t-merge-*: merge's pure parts, linked from their objects (the
# string/track tables, the sink helpers, the sorter, the flow matcher, the
# Chrome sink, the markers' reader) and align's clock maps (the sorter converts every stamp
# through one)
MERGE_UNIT_OBJS := $(addprefix $(OUT)/obj/merge/,tables.o sink.o sort.o flow.o plan.o derive.o \
		     sink_chrome.o reader_markers.o) \
		   $(ALIGN_MODEL_OBJS)
MERGE_UNIT_TESTS := $(patsubst $(SRC)/tests/unit/%.c,$(OUT)/tests/%,\
		    $(wildcard $(SRC)/tests/unit/t-merge-*.c))
$(MERGE_UNIT_TESTS): $(MERGE_UNIT_OBJS)
$(MERGE_UNIT_TESTS): LDFLAGS_ALL += $(MERGE_UNIT_OBJS)
# the tests that include a sink's source to reach its static functions
$(OUT)/tests/t-merge-perfetto-enc: $(SRC)/merge/sink_perfetto.c
$(OUT)/tests/t-merge-sink-uftrace: $(SRC)/merge/sink_uftrace.c

# syscall slices (merge/derive.c) name raw_syscalls' numbers: x86-64's table
# from the kernel headers (linux-libc-dev), made at build time
VMTRACE_SRCS += merge/derive.c
$(OUT)/gen/merge/syscall_names.h:
	@mkdir -p $(dir $@)
	echo '#include <asm/unistd_64.h>' | $(CC) -dM -E - | \
		awk '$$1 == "#define" && $$2 ~ /^__NR_/ && $$3 ~ /^[0-9]+$$/ \
		{ sub("^__NR_", "", $$2); print "\t[" $$3 "] = \"" $$2 "\"," }' | sort -t[ -k2 -n > $@.tmp
	test -s $@.tmp && mv $@.tmp $@
$(OUT)/obj/merge/derive.o: $(OUT)/gen/merge/syscall_names.h
$(OUT)/obj/merge/derive.o: CPPFLAGS_ALL += -I$(OUT)/gen/merge
