/*
 * compiler.h - small compiler helpers shared by every vmtrace module,
 * including the freestanding guest runtime (no libc needed here).
 */
#ifndef VT_COMPILER_H
#define VT_COMPILER_H

#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)
#define VT_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define VT_NOTRACE	__attribute__((no_instrument_function))
#define VT_UNUSED	__attribute__((unused))
#define VT_PRINTF(a, b)	__attribute__((format(printf, a, b)))
#define VT_STATIC_ASSERT(c, msg) _Static_assert(c, msg)

#endif
