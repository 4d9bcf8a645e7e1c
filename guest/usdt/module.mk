# guest/usdt: CPython USDT markers -> uprobe events (vmtrace record --python).
VMTRACE_SRCS += guest/usdt/usdt.c guest/usdt/top.c
DEPS += libtracefs-dev
