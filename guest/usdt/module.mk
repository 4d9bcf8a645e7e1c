# guest/usdt: `vmtrace top --python` (the markers: lib/usdt_note.c; their
# uprobe events: host/usdt_probes.c, shared with `vmtrace record --python`).
VMTRACE_SRCS += guest/usdt/top.c
DEPS += libtracefs-dev
