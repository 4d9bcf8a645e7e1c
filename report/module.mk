# report/: `vmtrace report` (I/O chain analysis, text + HTML) and
# `vmtrace export --sqlite`: merge sinks fed by merge's event pipeline.
VMTRACE_SRCS += report/cmd_report.c report/chain.c report/text.c report/html.c \
	report/sink_sqlite.c
VMTRACE_LIBS += -lsqlite3
# sqlite3 (CLI) and chromium (headless) are the tests' real consumers
DEPS += libsqlite3-dev sqlite3 chromium
