/*
 * t-tsc-machines.c - unit test of lib/tsc.c's machine-facing methods on
 * fake machines (for vmtrace's developers; t-tsc-choose tests the choice).
 * lib/tsc.c is included after its system headers with CPUID, perf_event,
 * /dev/kmsg, syslog(2), journalctl, the clocks, /proc/cpuinfo and the
 * clocksource file replaced by fakes (macros of the same names), so every
 * answer a CPU, hypervisor or kernel can give is fed in here: Intel's leaf
 * 15h with and without the crystal, 16h, KVM's and VMware's hypervisor
 * leaves, bare metal, perf pages a kernel refuses or gets wrong, kernel logs
 * of several kernels from each of the three sources, a calibration whose
 * clock fails or stands still, and where tools/tsc-khz-kcore is looked for.
 * Each check asserts the method's status, figure and note.
 */
#include <cpuid.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/klog.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "err.h"
#include "meta.h"
#include "tsc.h"
#include "check.h"

/* ---- the fake machine ---- */

struct fake_leaf {
	unsigned leaf, a, b, c, d;
};

static struct {
	unsigned max, ext_max;
	const struct fake_leaf *leaves;		/* ends with leaf 0 */
} cpu;

static int fake_get_cpuid_max(unsigned ext)
{
	return ext ? cpu.ext_max : cpu.max;
}

static void fake_cpuid(unsigned leaf, unsigned *a, unsigned *b, unsigned *c, unsigned *d)
{
	*a = *b = *c = *d = 0;
	for (const struct fake_leaf *l = cpu.leaves; l && l->leaf; l++) {
		if (l->leaf == leaf) {
			*a = l->a;
			*b = l->b;
			*c = l->c;
			*d = l->d;
			return;
		}
	}
}

/* perf_event_open fails with perf_errno (0: a descriptor); the mmap of its
 * page fails (mmap_fails) or gives perf_page; lock_busy loads of the page's
 * seqlock see a writer (each a new value) */
static int perf_errno, mmap_fails, lock_busy;
static struct perf_event_mmap_page perf_page;

static long fake_syscall(long nr, ...)
{
	if (nr != SYS_perf_event_open)
		return -1;
	if (perf_errno) {
		errno = perf_errno;
		return -1;
	}
	return open("/dev/null", O_RDONLY | O_CLOEXEC);
}

static void *fake_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (mmap_fails) {
		errno = ENODEV;
		return MAP_FAILED;
	}
	return &perf_page;
}

static int fake_munmap(void *p, size_t len)
{
	return p == &perf_page ? 0 : munmap(p, len);
}

static uint32_t fake_lock_load(const uint32_t *p)
{
	static uint32_t writer;

	if (lock_busy > 0) {
		lock_busy--;
		return ++writer;
	}
	return *p;
}

/* /dev/kmsg: open fails with kmsg_errno, else read gives kmsg[] one record
 * a call ("EPIPE"/"EINTR": that error), then EAGAIN */
static int kmsg_errno, kmsg_fd = -1;
static const char *const *kmsg;
static int kmsg_next;

static int fake_open(const char *path, int flags, ...)
{
	if (strcmp(path, "/dev/kmsg"))
		return open(path, flags);
	if (kmsg_errno) {
		errno = kmsg_errno;
		return -1;
	}
	kmsg_next = 0;
	return kmsg_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

static ssize_t fake_read(int fd, void *buf, size_t len)
{
	const char *r;

	if (fd != kmsg_fd)
		return read(fd, buf, len);
	r = kmsg ? kmsg[kmsg_next] : NULL;
	if (!r) {
		errno = EAGAIN;
		return -1;
	}
	kmsg_next++;
	if (!strcmp(r, "EPIPE") || !strcmp(r, "EINTR")) {
		errno = r[1] == 'P' ? EPIPE : EINTR;
		return -1;
	}
	snprintf(buf, len, "%s", r);
	return strlen(buf);
}

/* syslog(2): the buffer's size (klog_size; 0: the text's), the read
 * failing (klog_read_fails) or giving klog_text */
static int klog_size, klog_read_fails;
static const char *klog_text;

static int fake_klogctl(int type, char *buf, int len)
{
	if (type == 10)	/* SYSLOG_ACTION_SIZE_BUFFER */
		return klog_size ? klog_size : klog_text ? (int)strlen(klog_text) : -1;
	if (klog_read_fails || !klog_text) {
		errno = EPERM;
		return -1;
	}
	snprintf(buf, len + 1, "%s", klog_text);
	return strlen(klog_text) < (size_t)len ? (int)strlen(klog_text) : len;
}

/* journalctl: absent (no_journalctl), popen failing (journal_popen_fails),
 * or its output journal_text and exit status journal_status */
static int no_journalctl, journal_popen_fails, journal_status;
static const char *journal_text;
static FILE *journal_fp;

static int fake_access(const char *path, int mode)
{
	if (strstr(path, "bin/journalctl"))	/* 2: in /usr/bin only */
		return no_journalctl == 1 || (no_journalctl == 2 && strncmp(path, "/usr/", 5)) ?
		       -1 : 0;
	return access(path, mode);
}

/* popen of tools/tsc-khz-kcore fails when kcore_popen_fails */
static int kcore_popen_fails;

static FILE *fake_popen(const char *cmd, const char *mode)
{
	static char none[1];

	if (!strstr(cmd, "journalctl")) {
		if (kcore_popen_fails) {
			errno = EMFILE;
			return NULL;
		}
		return popen(cmd, mode);
	}
	if (journal_popen_fails) {
		errno = EAGAIN;
		return NULL;
	}
	journal_fp = journal_text && *journal_text ?
		     fmemopen((void *)journal_text, strlen(journal_text), "r") :
		     fmemopen(none, 1, "r");
	if (journal_fp && !(journal_text && *journal_text))
		fgetc(journal_fp);	/* empty: at the end already */
	return journal_fp;
}

static int fake_pclose(FILE *fp)
{
	if (fp != journal_fp)
		return pclose(fp);
	fclose(fp);
	journal_fp = NULL;
	return journal_status;
}

/* the clocks: clock_gettime failing on its clock_fail_at-th call (1 the
 * first; 0 never), or fake time (fake_time: the clock advancing 1 ns and
 * the TSC 3 ticks a read, nanosleep 50 ms of both at 3 GHz; tsc_backwards:
 * the TSC falling instead); nanosleep interrupted sleep_eintr times */
static int clock_fail_at, clock_calls, fake_time, tsc_backwards, sleep_eintr;
/* clock_still: the clock stands while the TSC runs; each sleep makes a TSC
 * read 1 tick slower */
static int clock_still;
static uint64_t tsc_step = 3;
static uint64_t now_ns = 1000000, now_tsc = 1ULL << 40;

static int fake_clock_gettime(clockid_t id, struct timespec *ts)
{
	if (clock_fail_at && ++clock_calls == clock_fail_at) {
		errno = EINVAL;
		return -1;
	}
	if (!fake_time)
		return clock_gettime(id, ts);
	now_ns += !clock_still;
	ts->tv_sec = now_ns / VT_NS_PER_SEC;
	ts->tv_nsec = now_ns % VT_NS_PER_SEC;
	return 0;
}

static uint64_t fake_rdtsc(void)
{
	if (!fake_time)
		return vt_rdtsc_ordered();
	now_tsc += tsc_backwards ? -tsc_step : tsc_step;
	return now_tsc;
}

static int fake_nanosleep(const struct timespec *req, struct timespec *rem)
{
	if (sleep_eintr > 0) {
		sleep_eintr--;
		errno = EINTR;
		return -1;
	}
	if (fake_time) {
		tsc_step++;
		now_ns += clock_still ? 0 : req->tv_nsec;
		now_tsc += tsc_backwards ? -(uint64_t)req->tv_nsec * 3 : (uint64_t)req->tv_nsec * 3;
	}
	return 0;
}

/* /proc/cpuinfo and the clocksource file: cpuinfo_text (NULL: cannot be
 * opened), clocksource_text likewise */
static const char *cpuinfo_text, *clocksource_text;

static FILE *fake_fopen(const char *path, const char *mode)
{
	const char *t;

	if (!strcmp(path, "/proc/cpuinfo"))
		t = cpuinfo_text;
	else if (strstr(path, "current_clocksource"))
		t = clocksource_text;
	else
		return fopen(path, mode);
	if (!t) {
		errno = ENOENT;
		return NULL;
	}
	return *t ? fmemopen((void *)t, strlen(t), "r") : fopen("/dev/null", "r");
}

/* realpath of /proc/self/exe: fake_exe (NULL: the real one; "" fails) */
static const char *fake_exe;

static char *fake_realpath(const char *path, char *out)
{
	if (!fake_exe || strcmp(path, "/proc/self/exe"))
		return realpath(path, out);
	if (!*fake_exe) {
		errno = ENOENT;
		return NULL;
	}
	snprintf(out, PATH_MAX, "%s", fake_exe);
	return out;
}

#undef __get_cpuid_max
#undef __cpuid
#undef __cpuid_count
#define __get_cpuid_max(ext, sig)	fake_get_cpuid_max(ext)
#define __cpuid(l, a, b, c, d)		fake_cpuid(l, &(a), &(b), &(c), &(d))
#define __cpuid_count(l, s, a, b, c, d)	fake_cpuid(l, &(a), &(b), &(c), &(d))
#define syscall				fake_syscall
#define mmap				fake_mmap
#define munmap				fake_munmap
#define __atomic_load_n(p, order)	fake_lock_load(p)
#define open				fake_open
#define read				fake_read
#define klogctl				fake_klogctl
#define access				fake_access
#define popen				fake_popen
#define pclose				fake_pclose
#define clock_gettime			fake_clock_gettime
#define vt_rdtsc_ordered		fake_rdtsc
#define nanosleep			fake_nanosleep
#define fopen				fake_fopen
#define realpath			fake_realpath
#include "tsc.c"
#undef access
#undef fopen
#undef open
#undef read

/* ---- CPUID ---- */

/* method @fn alone on the fake CPU: its one method */
static struct vt_tsc_method *run1(struct vt_tsc_freq *f, void (*fn)(struct vt_tsc_freq *))
{
	memset(f, 0, sizeof(*f));
	fn(f);
	CHECK(f->nr_methods == 1);
	return &f->m[0];
}

static void test_cpuid(void)
{
	/* an Intel part with the crystal enumerated: 38.4 MHz * 78 / 1,
	 * nominal 2995 MHz; a Skylake-client-like one without the crystal */
	static const struct fake_leaf crystal[] = {
		{ 0x15, 1, 78, 38400000, 0 }, { 0x16, 2995, 4000, 100, 0 }, { 0 },
	};
	static const struct fake_leaf ratio_only[] = {
		{ 0x15, 2, 334, 0, 0 }, { 0x16, 0, 0, 0, 0 }, { 0 },
	};
	/* a KVM guest: leaves 15h/16h present and zero */
	static const struct fake_leaf kvm_zero[] = {
		{ 0x15, 0, 0, 0, 0 }, { 0x16, 0, 0, 0, 0 }, { 0 },
	};
	struct vt_tsc_freq f;
	struct vt_tsc_method *m;

	/* AMD Zen: max basic leaf 0x10, neither leaf */
	cpu.max = 0x10;
	cpu.leaves = NULL;
	m = run1(&f, method_cpuid15);
	CHECK(m->status == VT_TSC_SKIPPED && m->hz == 0);
	CHECK_STR(m->note, "CPUID leaf 0x15 not present (max leaf 0x10)");
	m = run1(&f, method_cpuid16);
	CHECK(m->status == VT_TSC_SKIPPED);
	CHECK_STR(m->note, "CPUID leaf 0x16 not present (max leaf 0x10)");

	cpu.max = 0x16;
	cpu.leaves = crystal;
	m = run1(&f, method_cpuid15);
	CHECK(m->status == VT_TSC_OK && m->hz == 2995200000ULL);
	CHECK_STR(m->note, "crystal 38400000 Hz * 78 / 1");
	m = run1(&f, method_cpuid16);
	CHECK(m->status == VT_TSC_OK && m->hz == 2995000000ULL);

	cpu.leaves = ratio_only;
	m = run1(&f, method_cpuid15);
	CHECK(m->status == VT_TSC_SKIPPED && m->hz == 0);
	CHECK_STR(m->note, "leaf 0x15: crystal frequency not enumerated (ratio 334/2)");
	m = run1(&f, method_cpuid16);
	CHECK(m->status == VT_TSC_SKIPPED);
	CHECK_STR(m->note, "leaf 0x16 gives no base frequency");

	cpu.leaves = kvm_zero;
	m = run1(&f, method_cpuid15);
	CHECK_STR(m->note, "leaf 0x15 gives no TSC/crystal ratio");
	{
		/* a numerator without a denominator is no ratio either */
		static const struct fake_leaf half[] = { { 0x15, 2, 0, 24000000, 0 }, { 0 } };

		cpu.leaves = half;
		m = run1(&f, method_cpuid15);
		CHECK(m->status == VT_TSC_SKIPPED);
		CHECK_STR(m->note, "leaf 0x15 gives no TSC/crystal ratio");
	}
}

/* "KVMKVMKVM\0\0\0" and "VMwareVMware" in EBX:ECX:EDX */
#define SIG(s)	((unsigned)(s)[0] | (unsigned)(s)[1] << 8 | (unsigned)(s)[2] << 16 | \
		 (unsigned)(s)[3] << 24)

static void test_cpuid_hv(void)
{
	static const struct fake_leaf bare[] = { { 1, 0, 0, 0x7ffafbff, 0 }, { 0 } };
	static const struct fake_leaf kvm[] = {
		{ 1, 0, 0, 1U << 31, 0 },
		{ 0x40000000, 0x40000001, SIG("KVMK"), SIG("VMKV"), SIG("M\0\0\0") }, { 0 },
	};
	static const struct fake_leaf vmware[] = {
		{ 1, 0, 0, 1U << 31, 0 },
		{ 0x40000000, 0x40000010, SIG("VMwa"), SIG("reVM"), SIG("ware") },
		{ 0x40000010, 2995200, 66000, 0, 0 }, { 0 },
	};
	static const struct fake_leaf zero[] = {
		{ 1, 0, 0, 1U << 31, 0 },
		{ 0x40000000, 0x40000010, SIG("Test"), SIG("HV\x7f\x80"), SIG("~ ab") },
		{ 0x40000010, 0, 0, 0, 0 }, { 0 },
	};
	struct vt_tsc_freq f;
	struct vt_tsc_method *m;

	cpu.leaves = bare;
	m = run1(&f, method_cpuid_hv);
	CHECK(m->status == VT_TSC_SKIPPED);
	CHECK_STR(m->note, "not running under a hypervisor");
	cpu.leaves = kvm;
	m = run1(&f, method_cpuid_hv);
	CHECK(m->status == VT_TSC_SKIPPED);
	CHECK_STR(m->note, "hypervisor 'KVMKVMKVM\?\?\?' has no timing leaf 0x40000010");
	cpu.leaves = vmware;
	m = run1(&f, method_cpuid_hv);
	CHECK(m->status == VT_TSC_OK && m->hz == 2995200000ULL);
	CHECK_STR(m->note, "hypervisor 'VMwareVMware' leaf 0x40000010: 2995200 kHz");
	/* bytes outside printable ASCII shown as '?' */
	cpu.leaves = zero;
	m = run1(&f, method_cpuid_hv);
	CHECK(m->status == VT_TSC_SKIPPED);
	CHECK_STR(m->note, "hypervisor 'TestHV\?\?~ ab' leaf 0x40000010 reports 0 kHz");
}

/* ---- perf_event mmap page ---- */

static void test_perf(void)
{
	struct vt_tsc_freq f;
	struct vt_tsc_method *m;

	/* perf_event_paranoid or seccomp say no */
	perf_errno = EACCES;
	m = run1(&f, method_perf);
	CHECK(m->status == VT_TSC_SKIPPED);
	CHECK_STR(m->note, "perf_event_open: Permission denied");
	perf_errno = 0;
	mmap_fails = 1;
	m = run1(&f, method_perf);
	CHECK(m->status == VT_TSC_FAILED);
	CHECK_STR(m->note, "mmap of the perf page: No such device");
	mmap_fails = 0;

	/* the kernel's sched_clock is not the TSC */
	memset(&perf_page, 0, sizeof(perf_page));
	m = run1(&f, method_perf);
	CHECK(m->status == VT_TSC_SKIPPED && m->hz == 0);
	CHECK(strstr(m->note, "cap_user_time=0") != NULL);
	/* a page with cap_user_time and no usable conversion */
	perf_page.cap_user_time = 1;
	perf_page.time_shift = 31;
	m = run1(&f, method_perf);
	CHECK(m->status == VT_TSC_FAILED);
	CHECK_STR(m->note, "bad time_mult 0 / time_shift 31");
	perf_page.time_mult = 1;
	perf_page.time_shift = 64;
	m = run1(&f, method_perf);
	CHECK(m->status == VT_TSC_FAILED);
	CHECK_STR(m->note, "bad time_mult 1 / time_shift 64");

	/* 3 GHz: ns = tsc * mult >> 31 with mult = 2^31 / 3; read again
	 * while a writer holds the seqlock */
	perf_page.time_mult = 715827883;
	perf_page.time_shift = 31;
	lock_busy = 3;
	m = run1(&f, method_perf);
	CHECK(m->status == VT_TSC_OK);
	CHECK(m->hz == 2999999998ULL);
	CHECK_STR(m->note, "time_mult 715827883, time_shift 31");
	CHECK(lock_busy == 0);
	/* a writer that never lets go: the last read is taken after
	 * PERF_SEQ_TRIES */
	lock_busy = 2 * PERF_SEQ_TRIES + 10;
	m = run1(&f, method_perf);
	CHECK(m->status == VT_TSC_OK && m->hz == 2999999998ULL);
	CHECK(lock_busy == 10);
	lock_busy = 0;
}

/* ---- kernel messages ---- */

static void klog_reset(void)
{
	kmsg_errno = 0;
	kmsg = NULL;
	klog_size = klog_read_fails = 0;
	klog_text = NULL;
	no_journalctl = journal_popen_fails = journal_status = 0;
	journal_text = NULL;
}

static void kernel(struct vt_tsc_freq *f, unsigned flags)
{
	memset(f, 0, sizeof(*f));
	method_kernel(f, flags);
	CHECK(f->nr_methods == 2);
	CHECK_STR(f->m[0].name, "kernel-refined");
	CHECK_STR(f->m[1].name, "kernel-detected");
}

static void test_kernel(void)
{
	/* /dev/kmsg records of a 6.x kernel on bare metal, some lost */
	static const char *const kmsg_metal[] = {
		"6,18,24,-;tsc: Fast TSC calibration using PIT",
		"EPIPE",
		"6,19,24,-;tsc: Detected 3392.144 MHz processor",
		"EINTR",
		"6,300,1400000,-;tsc: Refined TSC clocksource calibration: 3392.142 MHz",
		NULL,
	};
	/* a KVM guest's: the boot figure only */
	static const char *const kmsg_guest[] = {
		"6,18,24,-;tsc: Detected 2445.404 MHz processor",
		"6,19,30,-;clocksource: Switched to clocksource kvm-clock",
		NULL,
	};
	static const char *const kmsg_rotated[] = {
		"6,90000,9000000000,-;virtio_net virtio1 eth0: link up", NULL,
	};
	/* syslog(2) text of an older kernel, the TSC marked unstable */
	static const char klog_unstable[] =
		"<6>[    0.000000] tsc: Detected 2200.000 MHz processor\n"
		"<4>[    5.120000] clocksource: timekeeping watchdog on CPU1: Marking clocksource "
		"'tsc' as unstable because the skew is too large:\n"
		"<6>[    5.120100] tsc: Marking TSC unstable due to clocksource watchdog\n";
	static const char journal[] =
		"Linux version 6.1.0-18-amd64\n"
		"tsc: Refined TSC clocksource calibration: 2095.077 MHz\n";
	struct vt_tsc_freq f;

	klog_reset();
	kmsg = kmsg_metal;
	kernel(&f, 0);
	CHECK(f.m[0].status == VT_TSC_OK && f.m[0].hz == 3392142000ULL);
	CHECK_STR(f.m[0].note, "\"Refined TSC clocksource calibration\" (/dev/kmsg)");
	CHECK(f.m[1].status == VT_TSC_OK && f.m[1].hz == 3392144000ULL);
	CHECK_STR(f.m[1].note, "\"tsc: Detected ... MHz processor\" (/dev/kmsg)");
	CHECK(kmsg_next == 5);	/* past both errors */

	kmsg = kmsg_guest;
	kernel(&f, 0);
	CHECK(f.m[0].status == VT_TSC_SKIPPED);
	CHECK_STR(f.m[0].note, "no refined calibration in the log");
	CHECK(f.m[1].hz == 2445404000ULL);

	/* the ring buffer rotated: syslog(2) (the same buffer, a record
	 * kept) */
	kmsg = kmsg_rotated;
	klog_text = klog_unstable;
	kernel(&f, 0);
	CHECK(f.m[0].status == VT_TSC_SKIPPED);
	CHECK_STR(f.m[0].note, "no refined calibration in the log (kernel marked the TSC unstable)");
	CHECK(f.m[1].status == VT_TSC_OK && f.m[1].hz == 2200000000ULL);
	CHECK_STR(f.m[1].note, "\"tsc: Detected ... MHz processor\" (syslog(2))");

	/* no /dev/kmsg (EPERM: dmesg_restrict), syslog(2) empty of it, sized
	 * past 16 MiB, unreadable: the journal */
	kmsg_errno = EPERM;
	klog_text = "<6>[    0.0] Linux version 5.10.0\n";
	journal_text = journal;
	kernel(&f, 0);
	CHECK(f.m[0].status == VT_TSC_OK && f.m[0].hz == 2095077000ULL);
	CHECK_STR(f.m[0].note, "\"Refined TSC clocksource calibration\" (journalctl -k)");
	CHECK(f.m[1].status == VT_TSC_SKIPPED);
	CHECK_STR(f.m[1].note, "no \"tsc: Detected\" line in the log (journalctl -k)");
	klog_size = KLOG_MAX_BYTES + 1;
	kernel(&f, 0);
	CHECK(f.m[0].status == VT_TSC_OK);
	klog_size = 0;
	klog_read_fails = 1;
	kernel(&f, 0);
	CHECK(f.m[0].status == VT_TSC_OK);

	/* quick mode: no journal; with it: none installed, popen failing,
	 * journalctl failing, silent, or without a tsc: line */
	kernel(&f, VT_TSC_NO_CALIBRATE);
	CHECK(f.m[0].status == VT_TSC_SKIPPED && f.m[1].status == VT_TSC_SKIPPED);
	CHECK_STR(f.m[0].note, "no tsc: line in /dev/kmsg, syslog(2) (ring buffer rotated or no "
		  "permission)");
	CHECK_STR(f.m[1].note, f.m[0].note);
	no_journalctl = 1;
	kernel(&f, 0);
	CHECK(f.m[0].status == VT_TSC_SKIPPED);
	CHECK_STR(f.m[0].note, "no tsc: line in /dev/kmsg, syslog(2) or the journal (ring buffer "
		  "rotated or no permission)");
	no_journalctl = 0;
	journal_popen_fails = 1;
	kernel(&f, 0);
	CHECK(f.m[0].status == VT_TSC_SKIPPED && strstr(f.m[0].note, "or the journal"));
	journal_popen_fails = 0;
	journal_status = 1 << 8;
	kernel(&f, 0);
	CHECK(f.m[0].status == VT_TSC_SKIPPED && f.m[1].status == VT_TSC_SKIPPED);
	journal_status = 0;
	journal_text = "";
	kernel(&f, 0);
	CHECK(f.m[0].status == VT_TSC_SKIPPED);
	journal_text = "Linux version 6.1.0-18-amd64\n";
	kernel(&f, 0);
	CHECK(f.m[0].status == VT_TSC_SKIPPED && strstr(f.m[0].note, "or the journal"));

	/* refined figures only, from each source; the journal's boot figure
	 * from journalctl in /usr/bin only */
	{
		static const char *const kmsg_refined[] = {
			"6,300,1400000,-;tsc: Refined TSC clocksource calibration: 2095.077 MHz",
			NULL,
		};

		klog_reset();
		kmsg = kmsg_refined;
		kernel(&f, 0);
		CHECK(f.m[0].hz == 2095077000ULL && f.m[1].status == VT_TSC_SKIPPED);
		CHECK_STR(f.m[1].note, "no \"tsc: Detected\" line in the log (/dev/kmsg)");
		kmsg = kmsg_rotated;
		klog_text = "<6>[ 1.4] tsc: Refined TSC clocksource calibration: 2095.077 MHz\n";
		kernel(&f, 0);
		CHECK(f.m[0].hz == 2095077000ULL);
		CHECK_STR(f.m[0].note, "\"Refined TSC clocksource calibration\" (syslog(2))");
		klog_text = NULL;
		no_journalctl = 2;
		journal_text = "tsc: Detected 2095.080 MHz processor\n";
		kernel(&f, 0);
		CHECK(f.m[0].status == VT_TSC_SKIPPED);
		CHECK(f.m[1].status == VT_TSC_OK && f.m[1].hz == 2095080000ULL);
		CHECK_STR(f.m[1].note, "\"tsc: Detected ... MHz processor\" (journalctl -k)");
	}
	/* the journal is read up to JOURNAL_MAX_LINES lines */
	{
		static const char tail[] = "tsc: Detected 2095.080 MHz processor\n";
		char *big = malloc(2 * (JOURNAL_MAX_LINES + 1) + sizeof(tail));

		CHECK(big != NULL);
		if (big) {
			for (int i = 0; i <= JOURNAL_MAX_LINES; i++)
				memcpy(big + 2 * i, "x\n", 2);
			memcpy(big + 2 * (JOURNAL_MAX_LINES + 1), tail, sizeof(tail));
			journal_text = big;
			kernel(&f, 0);
			CHECK(f.m[1].status == VT_TSC_SKIPPED);
			memcpy(big + 2 * (JOURNAL_MAX_LINES - 1), tail, sizeof(tail));
			kernel(&f, 0);
			CHECK(f.m[1].status == VT_TSC_OK && f.m[1].hz == 2095080000ULL);
			free(big);
		}
	}
	klog_reset();
}

/* ---- calibration ---- */

static void test_calibrate(void)
{
	struct vt_tsc_freq f;
	struct vt_tsc_method *m;

	/* the clock fails in the first sample or the second */
	clock_fail_at = 1;
	clock_calls = 0;
	memset(&f, 0, sizeof(f));
	method_calibrate(&f, 0);
	m = &f.m[0];
	CHECK(m->status == VT_TSC_FAILED);
	CHECK_STR(m->note, "clock_gettime(CLOCK_MONOTONIC_RAW): Invalid argument");
	clock_fail_at = CAL_SAMPLES + 1;
	clock_calls = 0;
	memset(&f, 0, sizeof(f));
	method_calibrate(&f, 0);
	CHECK(m->status == VT_TSC_FAILED);
	CHECK_STR(m->note, "clock or TSC did not advance");
	clock_fail_at = 0;

	/* fake time at 3 GHz, the sleep interrupted twice */
	fake_time = 1;
	sleep_eintr = 2;
	memset(&f, 0, sizeof(f));
	method_calibrate(&f, 0);
	CHECK(m->status == VT_TSC_OK);
	CHECK(m->hz > 2999990000ULL && m->hz < 3000010000ULL);
	/* the reads got slower, 3 4 | 4 5 ticks: the widest bracket */
	CHECK(strstr(m->note, "read bracket <= 5 ticks") != NULL);
	CHECK(sleep_eintr == 0);
	tsc_step = 3;
	/* a clock that stands still */
	clock_still = 1;
	memset(&f, 0, sizeof(f));
	method_calibrate(&f, 0);
	CHECK(m->status == VT_TSC_FAILED);
	CHECK_STR(m->note, "clock or TSC did not advance");
	clock_still = 0;

	/* a TSC that falls (unsynchronised sockets) */
	tsc_backwards = 1;
	memset(&f, 0, sizeof(f));
	method_calibrate(&f, 0);
	CHECK(m->status == VT_TSC_FAILED);
	CHECK_STR(m->note, "clock or TSC did not advance");
	tsc_backwards = 0;
	fake_time = 0;
}

/* ---- flags ---- */

static void test_flags(void)
{
	static const struct fake_leaf invariant[] = { { 0x80000007, 0, 0, 0, 1U << 8 }, { 0 } };
	static const struct fake_leaf variant[] = { { 0x80000007, 0, 0, 0, 0 }, { 0 } };
	struct vt_tsc_freq f;

	cpuinfo_text = "processor\t: 0\nflags\t\t: fpu tsc constant_tsc nonstop_tsc "
		       "tsc_known_freq\n";
	clocksource_text = "tsc\n";
	memset(&f, 0, sizeof(f));
	read_flags(&f);
	CHECK(f.constant_tsc == 1 && f.nonstop_tsc == 1 && f.known_freq == 1);
	CHECK_STR(f.clocksource, "tsc");

	/* a CPU without them (Pentium 4 era) */
	cpuinfo_text = "processor\t: 0\nflags\t\t: fpu tsc\n";
	clocksource_text = "";
	read_flags(&f);
	CHECK(f.constant_tsc == 0 && f.nonstop_tsc == 0 && f.known_freq == 0);
	CHECK_STR(f.clocksource, "unknown");

	/* no /proc/cpuinfo, or no flags line: CPUID's invariant TSC bit */
	cpuinfo_text = NULL;
	clocksource_text = NULL;
	cpu.ext_max = 0x80000008;
	cpu.leaves = invariant;
	read_flags(&f);
	CHECK(f.constant_tsc == 1 && f.nonstop_tsc == 1 && f.known_freq == -1);
	CHECK_STR(f.clocksource, "unknown");
	cpuinfo_text = "processor\t: 0\n";
	cpu.leaves = variant;
	read_flags(&f);
	CHECK(f.constant_tsc == 0 && f.nonstop_tsc == 0);
	/* nor the extended leaf: unknown */
	cpu.ext_max = 0x80000004;
	read_flags(&f);
	CHECK(f.constant_tsc == -1 && f.nonstop_tsc == -1 && f.known_freq == -1);
	cpuinfo_text = clocksource_text = NULL;
}

/* ---- where tools/tsc-khz-kcore is ---- */

static void touch_tool(const char *path)
{
	FILE *fp = fopen(path, "w");

	CHECK(fp != NULL);
	if (fp) {
		fputs("#!/bin/sh\necho 1\n", fp);
		fclose(fp);
	}
	CHECK(chmod(path, 0755) == 0);
}

static void test_find_tool(const char *dir)
{
	char buf[PATH_MAX], p[PATH_MAX], want[PATH_MAX];
	static char huge[PATH_MAX + 16];
	struct vt_tsc_freq f;

	unsetenv("VT_TOOLS_DIR");
	unsetenv("VT_SRC");
	/* an empty VT_TOOLS_DIR or VT_SRC is not set; one longer than a
	 * path is not found there */
	setenv("VT_TOOLS_DIR", "", 1);
	memset(huge, 'a', sizeof(huge) - 1);
	huge[0] = '/';
	setenv("VT_SRC", huge, 1);
	fake_exe = "";		/* realpath fails */
	CHECK(find_kcore_tool(buf, sizeof(buf)) == -1);
	setenv("VT_SRC", "", 1);
	fake_exe = "vmtrace";	/* no directory in it */
	CHECK(find_kcore_tool(buf, sizeof(buf)) == -1);

	/* an install: bin/../libexec/vmtrace */
	snprintf(p, sizeof(p), "%s/bin", dir);
	CHECK(mkdir(p, 0755) == 0);
	snprintf(p, sizeof(p), "%s/libexec", dir);
	CHECK(mkdir(p, 0755) == 0);
	snprintf(p, sizeof(p), "%s/libexec/vmtrace", dir);
	CHECK(mkdir(p, 0755) == 0);
	snprintf(want, sizeof(want), "%s/libexec/vmtrace/tsc-khz-kcore", dir);
	touch_tool(want);
	snprintf(p, sizeof(p), "%s/bin/vmtrace", dir);
	fake_exe = p;
	CHECK(find_kcore_tool(buf, sizeof(buf)) == 0);
	snprintf(want, sizeof(want), "%s/bin/../libexec/vmtrace/tsc-khz-kcore", dir);
	CHECK_STR(buf, want);
	snprintf(want, sizeof(want), "%s/libexec/vmtrace/tsc-khz-kcore", dir);
	unlink(want);

	/* a build tree: build/san/bin/vmtrace finds tools/ three levels up,
	 * not four */
	snprintf(p, sizeof(p), "%s/tools", dir);
	CHECK(mkdir(p, 0755) == 0);
	snprintf(want, sizeof(want), "%s/tools/tsc-khz-kcore", dir);
	touch_tool(want);
	snprintf(p, sizeof(p), "%s/build/san/bin/vmtrace", dir);
	fake_exe = p;
	CHECK(find_kcore_tool(buf, sizeof(buf)) == 0);
	CHECK_STR(buf, want);
	snprintf(p, sizeof(p), "%s/x/build/san/bin/vmtrace", dir);
	CHECK(find_kcore_tool(buf, sizeof(buf)) == -1);
	/* the root reached first: at "/", or (the root's own) at "" */
	fake_exe = "/bin/vmtrace";
	CHECK(find_kcore_tool(buf, sizeof(buf)) == -1);
	fake_exe = "/vmtrace";
	CHECK(find_kcore_tool(buf, sizeof(buf)) == -1);

	/* found but popen fails */
	setenv("VT_KCORE", "/dev/null", 1);
	snprintf(p, sizeof(p), "%s/tools", dir);
	setenv("VT_TOOLS_DIR", p, 1);
	kcore_popen_fails = 1;
	memset(&f, 0, sizeof(f));
	method_kcore(&f, VT_TSC_KCORE);
	CHECK(f.m[0].status == VT_TSC_FAILED);
	CHECK(strstr(f.m[0].note, "cannot run ") && strstr(f.m[0].note, "Too many open files"));
	kcore_popen_fails = 0;
	/* its shell killed, nothing said */
	{
		FILE *fp = fopen(want, "w");

		CHECK(fp != NULL);
		if (fp) {
			fputs("#!/bin/sh\nkill -9 $PPID\n", fp);
			fclose(fp);
		}
	}
	memset(&f, 0, sizeof(f));
	method_kcore(&f, VT_TSC_KCORE);
	CHECK(f.m[0].status == VT_TSC_FAILED);
	CHECK_STR(f.m[0].note, "tsc-khz-kcore failed");
	unsetenv("VT_KCORE");
	unsetenv("VT_TOOLS_DIR");
	unsetenv("VT_SRC");
	fake_exe = NULL;
	unlink(want);
	snprintf(p, sizeof(p), "%s/tools", dir);
	rmdir(p);
	snprintf(p, sizeof(p), "%s/libexec/vmtrace", dir);
	rmdir(p);
	snprintf(p, sizeof(p), "%s/libexec", dir);
	rmdir(p);
	snprintf(p, sizeof(p), "%s/bin", dir);
	rmdir(p);
}

/* ---- whole machines ---- */

static void test_machines(void)
{
	static const struct fake_leaf amd[] = { { 1, 0, 0, 0, 0 }, { 0 } };
	static const struct fake_leaf vmware[] = {
		{ 1, 0, 0, 1U << 31, 0 },
		{ 0x40000000, 0x40000010, SIG("VMwa"), SIG("reVM"), SIG("ware") },
		{ 0x40000010, 2995200, 66000, 0, 0 }, { 0 },
	};
	static const char *const no_tsc[] = { "6,1,0,-;Linux version 6.12.0", NULL };
	struct vt_tsc_freq f;

	/* an AMD host whose kernel log, perf page and kcore say nothing, in
	 * quick mode: no figure */
	cpu.max = 0x10;
	cpu.ext_max = 0x80000008;
	cpu.leaves = amd;
	cpuinfo_text = "flags\t\t: fpu tsc constant_tsc nonstop_tsc\n";
	clocksource_text = "hpet\n";
	perf_errno = EACCES;
	klog_reset();
	kmsg = no_tsc;
	setenv("VT_KCORE", "/nonexistent/kcore", 1);
	CHECK(vt_tsc_freq_opts(&f, VT_TSC_NO_CALIBRATE) == -1);
	CHECK_STR(vt_err_msg(), "no method could tell the TSC frequency");
	CHECK(f.hz == 0 && f.nr_methods == 8 && f.nr_warnings == 0);
	CHECK_STR(f.source, "none");
	CHECK_STR(f.clocksource, "hpet");

	/* a VMware guest: the hypervisor's leaf */
	cpu.max = 0xd;
	cpu.leaves = vmware;
	CHECK(vt_tsc_freq_opts(&f, VT_TSC_NO_CALIBRATE) == 0);
	CHECK_STR(f.source, "cpuid-hv");
	CHECK(f.hz == 2995200000ULL);

	unsetenv("VT_KCORE");
	perf_errno = 0;
	klog_reset();
	cpuinfo_text = clocksource_text = NULL;
}

int main(void)
{
	char dir[] = "/tmp/t-tsc-machines.XXXXXX";

	CHECK(mkdtemp(dir) != NULL);
	test_cpuid();
	test_cpuid_hv();
	test_perf();
	test_kernel();
	test_calibrate();
	test_flags();
	test_find_tool(dir);
	test_machines();
	CHECK(rmdir(dir) == 0);
	return check_done();
}
