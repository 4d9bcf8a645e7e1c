# lib/: the shared module: trace formats (read + write) and TSC helpers; no
# command lives here (their mains are in the module that owns their work).
# Built into libvtcore.a; guest/, host/, align/ and merge/ all link it.
CORE_SRCS += lib/err.c lib/grow.c lib/meta.c lib/meta_kvm.c lib/elfread.c lib/tsc.c
# the one UTF-8 sanitizer of every writer of names (lib/utf8.h)
CORE_SRCS += lib/utf8.c
# uftrace data directories (lib/uftrace.h): one file a job, helpers shared
# through lib/uftrace_int.h
CORE_SRCS += lib/uftrace_util.c lib/uftrace_write.c lib/uftrace_read.c lib/uftrace_stream.c
CORE_SRCS += lib/uftrace_convert.c lib/uftrace_fold.c
# atomic whole-file replace (vmtrace.meta, uftrace side files)
CORE_SRCS += lib/fileio.c
# what a file is, from its first bytes (messages for the wrong kind of input)
CORE_SRCS += lib/filekind.c
# number parsing of options and environment variables (also in the mcount runtime)
CORE_SRCS += lib/cli.c
CORE_SRCS += lib/tracedat_write.c
# trace.dat reader half (merge/align): libtracecmd + libtraceevent
# (tracedat_check.c guards libtracecmd; tracedat_unzip.c inflates compressed
# v7 files with zlib and libzstd, whatever libtracecmd was built with)
CORE_SRCS += lib/tracedat_read.c lib/tracedat_check.c lib/tracedat_unzip.c
DEPS += libtracecmd-dev libtraceevent-dev zlib1g-dev libzstd-dev
# guest<->host sync markers (markers.dat, emitters): align/ owns the design
CORE_SRCS += lib/marker.c
# ring-buffer page builder (fixtures): added by align/ for its trace.dat fixtures
CORE_SRCS += lib/tracedat_page.c
CORE_SRCS += lib/uftrace-append.c	# incremental .sym appends, .dat trim (guest/python)
# the Python tracer's stage files: read (docs/format/python.md); the fold is
# lib/uftrace_fold.c (the uftrace module uses pystage.c, not the other way)
CORE_SRCS += lib/pystage.c
# extents.tsv: QEMU image files' extents (FIEMAP) in a host recording
CORE_SRCS += lib/extents.c
# t-elf uses <sys/sdt.h>; the consumer tests read our output with the real
# uftrace and check its JSON with Debian's python3
TEST_DEPS += systemtap-sdt-dev uftrace python3
# the debugcon frame stream of freestanding guests (docs/format/unikernel.md)
CORE_SRCS += lib/debugcon.c
# guest stack samples of tools/vmtrace-sample (docs/format/samples.md): reader
CORE_SRCS += lib/samples.c
# the guest->host trace stream (docs/format/stream.md): writer of `vmtrace
# stream` (guest), reader/unpacker of `vmtrace unpack` (host)
CORE_SRCS += lib/stream.c
# SystemTap SDT notes (USDT markers) of ELF files -> uprobe fetch args
CORE_SRCS += lib/usdt_note.c
