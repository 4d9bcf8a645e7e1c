# merge/: `vmtrace merge`: readers -> sorter -> flows -> sinks (docs/merge.md).
VMTRACE_SRCS += merge/cmd_merge.c merge/tables.c merge/sort.c \
	merge/flow.c merge/reader_uftrace.c merge/reader_tracedat.c merge/reader_markers.c merge/sink.c \
	merge/sink_perfetto.c merge/sink_chrome.c merge/sink_uftrace.c
# CPython USDT uprobe events -> python slices (guest/usdt's records)
VMTRACE_SRCS += merge/usdt_python.c
# guest stack samples of tools/vmtrace-sample (samples.tsv) -> instants
VMTRACE_SRCS += merge/reader_samples.c
VMTRACE_LIBS += -ltracecmd -ltracefs -ltraceevent
DEPS += libtracecmd-dev libtraceevent-dev libtracefs-dev protobuf-compiler uftrace time

# the synthetic trace generator of tests/merge and tests/bench/b-merge.sh
TEST_TARGETS += $(OUT)/tests/merge/gen-trace
BENCH_TARGETS += $(OUT)/tests/merge/gen-trace
$(OUT)/tests/merge/gen-trace: $(SRC)/tests/merge/gen-trace.c $(OUT)/lib/libvtcore.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) $(LDFLAGS_ALL) -o $@ $< $(OUT)/lib/libvtcore.a -lm

# the per-event path (readers -> sorter -> sinks) is worth -O3
$(OUT)/obj/merge/%.o: CFLAGS_ALL += -O3

# a synthetic trace.dat (kvm events in real tracefs formats) for tests/merge
TEST_TARGETS += $(OUT)/tests/merge/gen-tracedat
$(OUT)/tests/merge/gen-tracedat: $(SRC)/tests/merge/gen-tracedat.c $(OUT)/lib/libvtcore.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) $(LDFLAGS_ALL) -o $@ $< $(OUT)/lib/libvtcore.a \
		$(VMTRACE_LIBS) -lm

# tests/unit/t-merge-*: merge's pure parts, linked from their objects (the
# string/track tables, the sink helpers, the sorter, the flow matcher) and
# align's clock maps (the sorter converts every stamp through one)
MERGE_UNIT_OBJS := $(addprefix $(OUT)/obj/merge/,tables.o sink.o sort.o flow.o) \
		   $(ALIGN_MODEL_OBJS)
MERGE_UNIT_TESTS := $(patsubst $(SRC)/tests/unit/%.c,$(OUT)/tests/%,\
		    $(wildcard $(SRC)/tests/unit/t-merge-*.c))
$(MERGE_UNIT_TESTS): $(MERGE_UNIT_OBJS)
$(MERGE_UNIT_TESTS): LDFLAGS_ALL += $(MERGE_UNIT_OBJS)
