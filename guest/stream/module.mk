# guest/stream: `vmtrace stream`, the guest side of the trace stream: follows
# a trace directory while it is written and sends it over a virtio-serial
# port (lib/stream.c owns the format; `vmtrace unpack` rebuilds it on the host).
VMTRACE_SRCS += guest/stream/cmd_stream.c
