# lib/: the shared module: trace formats (read + write) and TSC helpers.
# Built into libvtcore.a; guest/, host/, align/ and merge/ all link it.
CORE_SRCS += lib/err.c lib/meta.c
