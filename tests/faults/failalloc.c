/*
 * failalloc.c - an LD_PRELOAD shim for tests/faults/t-fault-oom.sh: it makes
 * exactly one allocation of the program fail, so that the "out of memory"
 * paths of vmtrace's host-side tools (lib/, align/, merge/) run in a test.
 *
 * Counted are the calls of malloc, calloc, realloc, aligned_alloc, strdup,
 * strndup, asprintf, vasprintf and open_memstream made from the main executable's
 * own text (its executable PT_LOAD segments, found once with
 * dl_iterate_phdr: the first object it lists is the main program);
 * allocations inside libc, libtraceevent, libtracecmd, libzstd, ... are
 * never failed nor counted.  (free is wrapped only to ignore the bump
 * buffer's blocks, below; vmtrace uses no reallocarray.)
 *
 *   VT_FAILALLOC=N        the Nth counted allocation (1-based) fails, with
 *                         errno ENOMEM; the others succeed (0 or unset: none)
 *   VT_FAILALLOC_COUNT=F  at exit, write the number of counted allocations
 *                         to the file F (a test runs with N=0 to learn it)
 *   VT_FAILALLOC_WHERE=1  say on stderr where the failed one was asked for:
 *                         "failalloc: N failed at 0xOFFSET 0xOFFSET...", the
 *                         caller and the program's frames above it
 *                         (addr2line -e PROGRAM OFFSET... names the lines)
 *
 * Everything goes to the next definition (dlsym(RTLD_NEXT): libc's, or the
 * sanitizer's in the SAN build).  dlsym itself may allocate: what is asked
 * for before the real functions are known comes from a small static bump
 * buffer and is never freed.  Not part of vmtrace; tests only.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <link.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void *(*real_aligned_alloc)(size_t, size_t);
static void (*real_free)(void *);
static char *(*real_strdup)(const char *);
static char *(*real_strndup)(const char *, size_t);
static int (*real_vasprintf)(char **, const char *, va_list);
static FILE *(*real_open_memstream)(char **, size_t *);

static uintptr_t text_lo, text_hi;	/* the main program's code */
static uintptr_t load_base;		/* ... and where it was loaded */
static int say_where;
static unsigned long fail_at;		/* VT_FAILALLOC; 0: none */
static unsigned long counted;		/* counted allocations so far */
static pid_t init_pid;			/* a fork's child writes no count */
static int registered, exiting;		/* at_exit() registered, run */
static int initing;

/* the bump buffer of allocations made while looking the real ones up */
static _Alignas(16) char boot[16384];
static size_t boot_used;

static int in_boot(const void *p)
{
	return (const char *)p >= boot && (const char *)p < boot + sizeof(boot);
}

static void *boot_alloc(size_t size)
{
	size_t n = (size + 15) & ~(size_t)15;
	void *p;

	if (n > sizeof(boot) - boot_used)
		return NULL;
	p = boot + boot_used;
	boot_used += n;
	return p;	/* static storage: already zero */
}

/* a boot block of @size bytes that starts with @n bytes of @src */
static void *boot_copy(const void *src, size_t n, size_t size)
{
	void *p = boot_alloc(size);

	if (p && n)
		memcpy(p, src, n);
	return p;
}

static int find_text(struct dl_phdr_info *info, size_t size, void *data)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		if (!text_lo || lo < text_lo)
			text_lo = lo;
		if (lo + ph->p_memsz > text_hi)
			text_hi = lo + ph->p_memsz;
	}
	load_base = info->dlpi_addr;
	return 1;	/* the first object only: the main program */
}

static void init(void)
{
	if (real_malloc || initing)
		return;
	initing = 1;
	real_calloc = dlsym(RTLD_NEXT, "calloc");
	real_realloc = dlsym(RTLD_NEXT, "realloc");
	real_aligned_alloc = dlsym(RTLD_NEXT, "aligned_alloc");
	real_free = dlsym(RTLD_NEXT, "free");
	real_strdup = dlsym(RTLD_NEXT, "strdup");
	real_strndup = dlsym(RTLD_NEXT, "strndup");
	real_vasprintf = dlsym(RTLD_NEXT, "vasprintf");
	real_open_memstream = dlsym(RTLD_NEXT, "open_memstream");
	dl_iterate_phdr(find_text, NULL);
	init_pid = getpid();
	real_malloc = dlsym(RTLD_NEXT, "malloc");	/* last: the "done" flag */
	initing = 0;
}

/* The environment is read here, after libc's own start-up: the sanitizer
 * runtime's first malloc comes before it, when getenv() sees nothing. */
__attribute__((constructor)) static void failalloc_init(void)
{
	const char *n = getenv("VT_FAILALLOC");

	init();
	say_where = !!getenv("VT_FAILALLOC_WHERE");
	fail_at = n ? strtoul(n, NULL, 10) : 0;
}

/* "failalloc: N failed at" the return address @pc and the program's
 * frames above it, as offsets in the program (the line before each) */
static void where(uintptr_t pc)
{
	void *frames[16];
	char buf[512];
	int n = backtrace(frames, 16), len;

	len = snprintf(buf, sizeof(buf), "failalloc: %lu failed at 0x%lx", fail_at,
		       (unsigned long)(pc - load_base - 1));
	for (int i = 0, seen = 0; i < n && len < (int)sizeof(buf) - 24; i++) {
		uintptr_t f = (uintptr_t)frames[i];

		seen |= f == pc;
		if (seen && f != pc && f >= text_lo && f < text_hi)
			len += snprintf(buf + len, sizeof(buf) - len, " 0x%lx",
					(unsigned long)(f - load_base - 1));
	}
	buf[len++] = '\n';
	if (write(STDERR_FILENO, buf, len) != len)
		(void)0;
}

/* exit() has begun: the program's own destructors (gcov's dump in a
 * coverage build, linked into the program) are neither counted nor failed.
 * Registered at the first counted allocation, so after libc's own exit
 * handler that runs the destructors: it runs before them. */
static void at_exit(void)
{
	exiting = 1;
}

/* Count an allocation made from @caller: nonzero when it is the one to fail. */
static int fail_now(const void *caller)
{
	uintptr_t pc = (uintptr_t)caller;

	if (pc < text_lo || pc >= text_hi || exiting)
		return 0;
	if (!__atomic_exchange_n(&registered, 1, __ATOMIC_RELAXED))
		atexit(at_exit);
	if (__atomic_add_fetch(&counted, 1, __ATOMIC_RELAXED) != fail_at)
		return 0;
	if (say_where)
		where(pc);
	errno = ENOMEM;
	return 1;
}

EXPORT void *malloc(size_t size)
{
	if (!real_malloc) {
		init();
		if (!real_malloc)
			return boot_alloc(size);
	}
	if (fail_now(__builtin_return_address(0)))
		return NULL;
	return real_malloc(size);
}

EXPORT void *calloc(size_t nmemb, size_t size)
{
	if (!real_malloc) {
		init();
		if (!real_malloc)
			return size && nmemb > SIZE_MAX / size ? NULL : boot_alloc(nmemb * size);
	}
	if (fail_now(__builtin_return_address(0)))
		return NULL;
	return real_calloc(nmemb, size);
}

EXPORT void *realloc(void *ptr, size_t size)
{
	size_t room = in_boot(ptr) ? (size_t)(boot + sizeof(boot) - (char *)ptr) : 0;
	size_t keep = size < room ? size : room;
	void *p;

	if (!real_malloc) {
		init();
		if (!real_malloc)
			return boot_copy(ptr, keep, size);
	}
	if (fail_now(__builtin_return_address(0)))
		return NULL;
	if (!room)
		return real_realloc(ptr, size);
	/* a boot block's size is unknown: copy what the buffer holds past it */
	p = real_malloc(size);
	if (p)
		memcpy(p, ptr, keep);
	return p;
}

EXPORT void *aligned_alloc(size_t align, size_t size)
{
	init();
	if (!real_malloc)
		return NULL;	/* not asked for while dlsym runs */
	if (fail_now(__builtin_return_address(0)))
		return NULL;
	return real_aligned_alloc(align, size);
}

EXPORT void free(void *ptr)
{
	if (in_boot(ptr))
		return;
	if (!real_free)
		init();
	if (real_free)
		real_free(ptr);
}

EXPORT char *strdup(const char *s)
{
	init();
	if (!real_malloc)
		return boot_copy(s, strlen(s) + 1, strlen(s) + 1);
	if (fail_now(__builtin_return_address(0)))
		return NULL;
	return real_strdup(s);
}

EXPORT char *strndup(const char *s, size_t n)
{
	size_t len = strnlen(s, n);
	char *p;

	init();
	if (!real_malloc) {
		p = boot_copy(s, len, len + 1);
		if (p)
			p[len] = 0;
		return p;
	}
	if (fail_now(__builtin_return_address(0)))
		return NULL;
	return real_strndup(s, n);
}

/* vasprintf and asprintf: -1 on failure, *strp left as it was (glibc's
 * contents are undefined then) */
EXPORT int vasprintf(char **strp, const char *fmt, va_list ap)
{
	init();
	if (fail_now(__builtin_return_address(0)))
		return -1;
	return real_vasprintf(strp, fmt, ap);
}

EXPORT int asprintf(char **strp, const char *fmt, ...)
{
	va_list ap;
	int r;

	init();
	if (fail_now(__builtin_return_address(0)))
		return -1;
	va_start(ap, fmt);
	r = real_vasprintf(strp, fmt, ap);
	va_end(ap);
	return r;
}

EXPORT FILE *open_memstream(char **ptr, size_t *sizeloc)
{
	init();
	if (fail_now(__builtin_return_address(0)))
		return NULL;
	return real_open_memstream(ptr, sizeloc);
}

__attribute__((destructor)) static void failalloc_fini(void)
{
	const char *path = getenv("VT_FAILALLOC_COUNT");
	char buf[32];
	int fd, len;

	if (!path || getpid() != init_pid)
		return;
	len = snprintf(buf, sizeof(buf), "%lu\n",
		       __atomic_load_n(&counted, __ATOMIC_RELAXED));
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	if (write(fd, buf, len) != len)
		(void)0;	/* the test sees a short count file */
	close(fd);
}
