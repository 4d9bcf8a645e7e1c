# merge/report/: `vmtrace report` (I/O chain analysis, text + HTML) and
# `vmtrace export --sqlite`: merge sinks fed by merge's event pipeline.
VMTRACE_SRCS += merge/report/cmd_report.c merge/report/chain.c merge/report/text.c merge/report/html.c \
	merge/report/chain_finish.c merge/report/chain_query.c merge/report/chain_hmap.c \
	merge/report/sink_sqlite.c merge/report/vstate.c merge/report/critpath.c \
	merge/report/chain_extents.c
VMTRACE_LIBS += -lsqlite3
DEPS += libsqlite3-dev
# sqlite3 (CLI) and chromium (headless) are the tests' real consumers
TEST_DEPS += sqlite3 chromium
# dmsetup: the dm-delay target of tests/report/t-report-faults-lab (a slow
# host disk; losetup and blockdev are util-linux's)
TEST_DEPS += dmsetup
# tests/unit/t-report-extents: extents.tsv's reader (libvtcore) and the
# report's mapping of QEMU's bios through it, linked from their objects
REPORT_UNIT_OBJS := $(addprefix $(OUT)/obj/merge/report/,chain_extents.o chain_hmap.o)
$(OUT)/tests/t-report-extents: $(REPORT_UNIT_OBJS)
$(OUT)/tests/t-report-extents: LDFLAGS_ALL += $(REPORT_UNIT_OBJS)
# tests/unit/t-report-chain: the analyser and the state tracker fed events
# directly, and the outputs (text, HTML, the SQLite sink) of what they
# found, linked from their objects and merge's string/track tables
REPORT_CHAIN_OBJS := $(addprefix $(OUT)/obj/merge/report/,chain.o chain_finish.o chain_query.o \
	chain_hmap.o chain_extents.o vstate.o critpath.o text.o html.o sink_sqlite.o) \
	$(addprefix $(OUT)/obj/merge/,tables.o sink.o)
$(OUT)/tests/t-report-chain: $(REPORT_CHAIN_OBJS)
$(OUT)/tests/t-report-chain: LDFLAGS_ALL += $(REPORT_CHAIN_OBJS)
