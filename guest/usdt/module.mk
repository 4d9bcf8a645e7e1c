# guest/usdt: CPython USDT markers -> uprobe events (vmtrace record --python).
VMTRACE_SRCS += guest/usdt/usdt.c guest/usdt/top.c
DEPS += libtracefs-dev
$(OUT)/obj/guest/usdt/%.o: CPPFLAGS_ALL += $(shell pkg-config --cflags libtracefs 2>/dev/null)
