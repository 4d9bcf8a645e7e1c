# tools/: the vmtrace command dispatcher and setup helpers.
VMTRACE_SRCS += tools/vmtrace.c
DEPS += build-essential pkg-config
