/*
 * tsc.c - the one place vmtrace decides the TSC frequency (see tsc.h):
 * CPUID leaves 15h/16h and the hypervisor leaf, the perf_event mmap page,
 * the kernel's boot messages, a calibration against CLOCK_MONOTONIC_RAW,
 * and (on request) tsc_khz from /proc/kcore via tools/tsc-khz-kcore.
 * For tools (vmtrace tsc, run, record): hosted, reads /proc and /dev/kmsg,
 * sleeps ~0.1 s.  Any thread.
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
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "err.h"
#include "meta.h"
#include "tsc.h"

#define HZ_PER_MHZ		1000000ULL
#define HZ_PER_KHZ		1000ULL
#define PPM			1000000.0

#define CPUID_LEAF_TSC		0x15
#define CPUID_LEAF_FREQ		0x16
#define CPUID_LEAF_HV		0x40000000U
#define CPUID_LEAF_HV_TSC	0x40000010U
#define CPUID_1_ECX_HV		(1U << 31)
#define CPUID_LEAF_EXT		0x80000000U
#define CPUID_LEAF_APM		0x80000007U
#define CPUID_APM_EDX_INVARIANT	(1U << 8)
#define CPUID_16_MHZ_MASK	0xffffU
#define VENDOR_LEN		12	/* hypervisor signature in EBX:ECX:EDX */
#define PERF_SEQ_TRIES		1000	/* retries of the mmap page seqlock */
#define PERF_SHIFT_LIMIT	64

#define CAL_ROUNDS		2
#define CAL_SLEEP_NS		50000000L	/* 50 ms per round */
#define CAL_SAMPLES		7		/* min-of-N bracketed reads */

#define KLOG_ACTION_READ_ALL	3
#define KLOG_ACTION_SIZE_BUFFER	10
#define KLOG_MAX_BYTES		(16 << 20)
#define JOURNAL_MAX_LINES	200000
#define KCORE_TOOL		"tsc-khz-kcore"
#define KCORE_TOOL_UP		3	/* levels above the binary's dir: build/san/bin */

static struct vt_tsc_method *add_method(struct vt_tsc_freq *f, const char *name)
{
	struct vt_tsc_method *m = &f->m[f->nr_methods++];

	m->name = name;
	m->status = VT_TSC_SKIPPED;
	m->hz = 0;
	m->note[0] = 0;
	return m;
}

static void note(struct vt_tsc_method *m, int status, const char *fmt, ...) VT_PRINTF(3, 4);
static void note(struct vt_tsc_method *m, int status, const char *fmt, ...)
{
	va_list ap;

	m->status = status;
	va_start(ap, fmt);
	vsnprintf(m->note, sizeof(m->note), fmt, ap);
	va_end(ap);
}

static void warn(struct vt_tsc_freq *f, const char *fmt, ...) VT_PRINTF(2, 3);
static void warn(struct vt_tsc_freq *f, const char *fmt, ...)
{
	va_list ap;

	if (f->nr_warnings >= VT_TSC_MAX_WARNINGS)
		return;
	va_start(ap, fmt);
	vsnprintf(f->warnings[f->nr_warnings++], sizeof(f->warnings[0]), fmt, ap);
	va_end(ap);
}

/* ---- CPUID ---- */

static void method_cpuid15(struct vt_tsc_freq *f)
{
	struct vt_tsc_method *m = add_method(f, "cpuid-15h");
	unsigned max = __get_cpuid_max(0, NULL), a, b, c, d;

	if (max < CPUID_LEAF_TSC) {
		note(m, VT_TSC_SKIPPED, "CPUID leaf 0x15 not present (max leaf %#x)", max);
		return;
	}
	__cpuid_count(CPUID_LEAF_TSC, 0, a, b, c, d);
	if (!a || !b) {
		note(m, VT_TSC_SKIPPED, "leaf 0x15 gives no TSC/crystal ratio");
		return;
	}
	if (!c) {
		note(m, VT_TSC_SKIPPED, "leaf 0x15: crystal frequency not enumerated (ratio %u/%u)",
		     b, a);
		return;
	}
	m->hz = (uint64_t)c * b / a;
	note(m, VT_TSC_OK, "crystal %u Hz * %u / %u", c, b, a);
}

static void method_cpuid16(struct vt_tsc_freq *f)
{
	struct vt_tsc_method *m = add_method(f, "cpuid-16h");
	unsigned max = __get_cpuid_max(0, NULL), a, b, c, d;

	if (max < CPUID_LEAF_FREQ) {
		note(m, VT_TSC_SKIPPED, "CPUID leaf 0x16 not present (max leaf %#x)", max);
		return;
	}
	__cpuid_count(CPUID_LEAF_FREQ, 0, a, b, c, d);
	if (!(a & CPUID_16_MHZ_MASK)) {
		note(m, VT_TSC_SKIPPED, "leaf 0x16 gives no base frequency");
		return;
	}
	m->hz = (uint64_t)(a & CPUID_16_MHZ_MASK) * HZ_PER_MHZ;
	note(m, VT_TSC_OK, "nominal base frequency, 1 MHz resolution (not always the TSC's)");
}

static void method_cpuid_hv(struct vt_tsc_freq *f)
{
	struct vt_tsc_method *m = add_method(f, "cpuid-hv");
	unsigned a, b, c, d;
	char vendor[VENDOR_LEN + 1];

	__cpuid(1, a, b, c, d);
	if (!(c & CPUID_1_ECX_HV)) {
		note(m, VT_TSC_SKIPPED, "not running under a hypervisor");
		return;
	}
	__cpuid(CPUID_LEAF_HV, a, b, c, d);
	memcpy(vendor, &b, sizeof(b));
	memcpy(vendor + sizeof(b), &c, sizeof(c));
	memcpy(vendor + sizeof(b) + sizeof(c), &d, sizeof(d));
	vendor[VENDOR_LEN] = 0;
	for (int i = 0; i < VENDOR_LEN; i++)
		if (vendor[i] < ' ' || vendor[i] > '~')
			vendor[i] = '?';
	if (a < CPUID_LEAF_HV_TSC) {
		note(m, VT_TSC_SKIPPED, "hypervisor '%s' has no timing leaf 0x40000010", vendor);
		return;
	}
	__cpuid(CPUID_LEAF_HV_TSC, a, b, c, d);
	if (!a) {
		note(m, VT_TSC_SKIPPED, "hypervisor '%s' leaf 0x40000010 reports 0 kHz", vendor);
		return;
	}
	m->hz = (uint64_t)a * HZ_PER_KHZ;
	note(m, VT_TSC_OK, "hypervisor '%s' leaf 0x40000010: %u kHz", vendor, a);
}

/* ---- perf_event mmap page ---- */

static void method_perf(struct vt_tsc_freq *f)
{
	struct vt_tsc_method *m = add_method(f, "perf-mmap");
	struct perf_event_attr attr;
	struct perf_event_mmap_page *pg;
	long page = sysconf(_SC_PAGESIZE);
	uint32_t seq, mult = 0;
	uint16_t shift = 0;
	int fd, cap = 0, tries = 0;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_TASK_CLOCK;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		note(m, VT_TSC_SKIPPED, "perf_event_open: %s", strerror(errno));
		return;
	}
	pg = mmap(NULL, page, PROT_READ, MAP_SHARED, fd, 0);
	if (pg == MAP_FAILED) {
		note(m, VT_TSC_FAILED, "mmap of the perf page: %s", strerror(errno));
		close(fd);
		return;
	}
	do {
		seq = __atomic_load_n(&pg->lock, __ATOMIC_ACQUIRE);
		cap = pg->cap_user_time;
		mult = pg->time_mult;
		shift = pg->time_shift;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	} while (__atomic_load_n(&pg->lock, __ATOMIC_RELAXED) != seq && ++tries < PERF_SEQ_TRIES);
	munmap(pg, page);
	close(fd);
	if (!cap) {
		note(m, VT_TSC_SKIPPED, "cap_user_time=0 (kernel sched_clock is not a stable TSC)");
		return;
	}
	if (!mult || shift >= PERF_SHIFT_LIMIT) {
		note(m, VT_TSC_FAILED, "bad time_mult %u / time_shift %u", mult, shift);
		return;
	}
	/* ns = tsc * mult >> shift, so hz = 1e9 * 2^shift / mult */
	m->hz = (uint64_t)(((unsigned __int128)VT_NS_PER_SEC << shift) / mult);
	note(m, VT_TSC_OK, "time_mult %u, time_shift %u", mult, shift);
}

/* ---- kernel messages ---- */

/* Parse "<int>.<frac> MHz" at @s into Hz; 0 if malformed. */
static uint64_t parse_mhz(const char *s)
{
	uint64_t hz = 0, scale = HZ_PER_MHZ;
	int digits = 0;

	while (*s == ' ')
		s++;
	if (*s < '0' || *s > '9')
		return 0;
	for (; *s >= '0' && *s <= '9' && digits < 9; s++, digits++)
		hz = hz * 10 + (*s - '0');
	hz *= HZ_PER_MHZ;
	if (*s == '.') {
		for (s++; *s >= '0' && *s <= '9'; s++) {
			scale /= 10;
			hz += (*s - '0') * scale;
		}
	}
	while (*s == ' ')
		s++;
	return strncmp(s, "MHz", 3) ? 0 : hz;
}

struct klog_find {
	uint64_t detected_hz, refined_hz;
	int marked_unstable;
};

static void scan_line(struct klog_find *k, const char *line)
{
	const char *p;

	if ((p = strstr(line, "tsc: Detected ")))
		k->detected_hz = parse_mhz(p + strlen("tsc: Detected "));
	if ((p = strstr(line, "Refined TSC clocksource calibration: ")))
		k->refined_hz = parse_mhz(p + strlen("Refined TSC clocksource calibration: "));
	if (strstr(line, "Marking TSC unstable"))
		k->marked_unstable = 1;
}

/* /dev/kmsg: one record per read(); returns 0 if it could be read. */
static int scan_kmsg(struct klog_find *k)
{
	char rec[8192];
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return -1;
	for (;;) {
		ssize_t n = read(fd, rec, sizeof(rec) - 1);

		if (n < 0 && (errno == EPIPE || errno == EINTR))
			continue;	/* overwritten records: go on */
		if (n <= 0)
			break;
		rec[n] = 0;
		scan_line(k, rec);
	}
	close(fd);
	return 0;
}

/* syslog(2) ring buffer read, when /dev/kmsg is not readable. */
static int scan_klogctl(struct klog_find *k)
{
	int size = klogctl(KLOG_ACTION_SIZE_BUFFER, NULL, 0), n;
	char *buf, *line, *save;

	if (size <= 0 || size > KLOG_MAX_BYTES)
		return -1;
	buf = malloc(size + 1);
	if (!buf)
		return -1;
	n = klogctl(KLOG_ACTION_READ_ALL, buf, size);
	if (n < 0) {
		free(buf);
		return -1;
	}
	buf[n] = 0;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		scan_line(k, line);
	free(buf);
	return 0;
}

/* The journal keeps boot messages the ring buffer has lost. */
static int scan_journal(struct klog_find *k)
{
	char line[1024];
	int lines = 0;
	FILE *fp;

	if (access("/bin/journalctl", X_OK) && access("/usr/bin/journalctl", X_OK))
		return -1;
	fp = popen("journalctl -k -b 0 -q --no-pager -o cat 2>/dev/null", "re");
	if (!fp)
		return -1;
	while (fgets(line, sizeof(line), fp) && lines++ < JOURNAL_MAX_LINES)
		scan_line(k, line);
	return pclose(fp) == 0 && lines ? 0 : -1;
}

static void method_kernel(struct vt_tsc_freq *f, unsigned flags)
{
	struct vt_tsc_method *ref = add_method(f, "kernel-refined");
	struct vt_tsc_method *det = add_method(f, "kernel-detected");
	struct klog_find k = { 0 };
	const char *src = "/dev/kmsg";

	if (scan_kmsg(&k) || (!k.detected_hz && !k.refined_hz)) {
		src = "syslog(2)";
		if (scan_klogctl(&k) || (!k.detected_hz && !k.refined_hz)) {
			src = "journalctl -k";
			/* quick mode runs in traced programs: no child process */
			if ((flags & VT_TSC_NO_CALIBRATE) || scan_journal(&k) ||
			    (!k.detected_hz && !k.refined_hz)) {
				note(ref, VT_TSC_SKIPPED, "no tsc: line in /dev/kmsg, syslog(2)%s "
				     "(ring buffer rotated or no permission)",
				     (flags & VT_TSC_NO_CALIBRATE) ? "" : " or the journal");
				note(det, VT_TSC_SKIPPED, "%s", ref->note);
				return;
			}
		}
	}
	if (k.refined_hz) {
		ref->hz = k.refined_hz;
		note(ref, VT_TSC_OK, "\"Refined TSC clocksource calibration\" (%s)", src);
	} else {
		note(ref, VT_TSC_SKIPPED, "no refined calibration in the log%s",
		     k.marked_unstable ? " (kernel marked the TSC unstable)" : "");
	}
	if (k.detected_hz) {
		det->hz = k.detected_hz;
		note(det, VT_TSC_OK, "\"tsc: Detected ... MHz processor\" (%s)", src);
	} else {
		note(det, VT_TSC_SKIPPED, "no \"tsc: Detected\" line in the log (%s)", src);
	}
}

/* ---- calibration ---- */

struct tsc_ns {
	uint64_t tsc;
	uint64_t ns;
	uint64_t width;		/* TSC ticks the clock read took */
};

uint64_t vt_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * VT_NS_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* A (TSC, CLOCK_MONOTONIC_RAW) pair: the narrowest of several brackets. */
static int sample_pair(struct tsc_ns *out)
{
	out->width = UINT64_MAX;
	out->tsc = 0;
	out->ns = 0;
	for (int i = 0; i < CAL_SAMPLES; i++) {
		struct timespec ts;
		uint64_t t0, t1;

		t0 = vt_rdtsc_ordered();
		if (clock_gettime(CLOCK_MONOTONIC_RAW, &ts))
			return -1;
		t1 = vt_rdtsc_ordered();
		if (t1 - t0 < out->width) {
			out->width = t1 - t0;
			out->tsc = t0 + (t1 - t0) / 2;
			out->ns = (uint64_t)ts.tv_sec * VT_NS_PER_SEC + ts.tv_nsec;
		}
	}
	return 0;
}

static void method_calibrate(struct vt_tsc_freq *f, unsigned flags)
{
	struct vt_tsc_method *m = add_method(f, "calibrate");
	double hz[CAL_ROUNDS], sum = 0, spread;
	uint64_t worst_width = 0;

	if (flags & VT_TSC_NO_CALIBRATE) {
		note(m, VT_TSC_SKIPPED, "not run (--no-calibrate)");
		return;
	}
	for (int r = 0; r < CAL_ROUNDS; r++) {
		struct timespec nap = { 0, CAL_SLEEP_NS };
		struct tsc_ns a, b;

		if (sample_pair(&a)) {
			note(m, VT_TSC_FAILED, "clock_gettime(CLOCK_MONOTONIC_RAW): %s",
			     strerror(errno));
			return;
		}
		while (nanosleep(&nap, &nap) && errno == EINTR)
			;
		if (sample_pair(&b) || b.ns <= a.ns || b.tsc <= a.tsc) {
			note(m, VT_TSC_FAILED, "clock or TSC did not advance");
			return;
		}
		hz[r] = (double)(b.tsc - a.tsc) * VT_NS_PER_SEC / (double)(b.ns - a.ns);
		sum += hz[r];
		if (a.width > worst_width)
			worst_width = a.width;
		if (b.width > worst_width)
			worst_width = b.width;
	}
	m->hz = (uint64_t)(sum / CAL_ROUNDS + 0.5);
	spread = 0;
	for (int r = 0; r < CAL_ROUNDS; r++) {
		double d = (hz[r] - m->hz) / m->hz * PPM;

		if (d < 0)
			d = -d;
		if (d > spread)
			spread = d;
	}
	note(m, VT_TSC_OK, "%d x %ld ms against CLOCK_MONOTONIC_RAW: rounds within %.0f ppm, "
	     "read bracket <= %" PRIu64 " ticks", CAL_ROUNDS, CAL_SLEEP_NS / 1000000, spread,
	     worst_width);
}

/* ---- /proc/kcore: tsc_khz read by gdb (tools/tsc-khz-kcore) ---- */

/* Is @dir/@rel/KCORE_TOOL executable?  1 with @buf filled, else 0. */
static int kcore_tool_at(char *buf, size_t len, const char *dir, const char *rel)
{
	int n = snprintf(buf, len, "%s%s%s", dir, rel, KCORE_TOOL);

	return (size_t)n < len && !access(buf, X_OK);	/* n < 0: huge as a size_t */
}

/* Where tools/tsc-khz-kcore is: $VT_TOOLS_DIR, else $VT_SRC/tools, else
 * in the source tree above the running vmtrace's real path (build/bin or
 * build/san/bin: the first ancestor holding tools/, at most
 * KCORE_TOOL_UP levels up), else an install (bin/../libexec/vmtrace).
 * 0 and @buf filled, or -1. */
static int find_kcore_tool(char *buf, size_t len)
{
	const char *env = getenv("VT_TOOLS_DIR");
	const char *src = getenv("VT_SRC");
	char exe[PATH_MAX], *slash;

	if (env && *env) {
		snprintf(buf, len, "%s/%s", env, KCORE_TOOL);
		return access(buf, X_OK);
	}
	if (src && *src && kcore_tool_at(buf, len, src, "/tools/"))
		return 0;
	if (!realpath("/proc/self/exe", exe))
		return -1;
	slash = strrchr(exe, '/');
	if (!slash)
		return -1;
	*slash = 0;
	if (kcore_tool_at(buf, len, exe, "/../libexec/vmtrace/"))
		return 0;
	for (int up = 0; up < KCORE_TOOL_UP; up++) {
		slash = strrchr(exe, '/');
		if (!slash || slash == exe)
			return -1;
		*slash = 0;
		if (kcore_tool_at(buf, len, exe, "/tools/"))
			return 0;
	}
	return -1;
}

static void method_kcore(struct vt_tsc_freq *f, unsigned flags)
{
	struct vt_tsc_method *m = add_method(f, "kcore");
	const char *kcore = getenv("VT_KCORE") ? getenv("VT_KCORE") : "/proc/kcore";
	char tool[PATH_MAX], cmd[PATH_MAX + 16], line[256], last[256] = "";
	unsigned long long hz = 0;
	FILE *fp;
	int st;

	if (access(kcore, F_OK)) {
		note(m, VT_TSC_SKIPPED, "no %s", kcore);
		return;
	}
	if (!(flags & VT_TSC_KCORE)) {
		note(m, VT_TSC_SKIPPED, "not run (slow: gdb on %s; vmtrace tsc --kcore)", kcore);
		return;
	}
	if (find_kcore_tool(tool, sizeof(tool)) || strchr(tool, '\'')) {
		note(m, VT_TSC_SKIPPED, "%s not found (set VT_TOOLS_DIR or VT_SRC)", KCORE_TOOL);
		return;
	}
	snprintf(cmd, sizeof(cmd), "'%s' 2>&1", tool);
	fp = popen(cmd, "re");
	if (!fp) {
		note(m, VT_TSC_FAILED, "cannot run %s: %s", tool, strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), fp)) {
		line[strcspn(line, "\n")] = 0;
		snprintf(last, sizeof(last), "%s", line);
	}
	st = pclose(fp);
	if (st == 0 && sscanf(last, "%llu", &hz) == 1 && hz > 0) {
		m->hz = hz;
		note(m, VT_TSC_OK, "tsc_khz read by gdb from %s", kcore);
		return;
	}
	note(m, WIFEXITED(st) && WEXITSTATUS(st) == VT_EXIT_UNSUPPORTED ? VT_TSC_SKIPPED :
	     VT_TSC_FAILED, "%s", last[0] ? last : "tsc-khz-kcore failed");
}

/* ---- flags, choice ---- */

static void read_flags(struct vt_tsc_freq *f)
{
	char line[8192];
	FILE *fp;
	unsigned a, b, c, d;

	f->constant_tsc = f->nonstop_tsc = f->known_freq = -1;
	fp = fopen("/proc/cpuinfo", "re");
	if (fp) {
		while (fgets(line, sizeof(line), fp)) {
			if (strncmp(line, "flags", 5))
				continue;
			f->constant_tsc = strstr(line, " constant_tsc") != NULL;
			f->nonstop_tsc = strstr(line, " nonstop_tsc") != NULL;
			f->known_freq = strstr(line, " tsc_known_freq") != NULL;
			break;
		}
		fclose(fp);
	}
	if (f->constant_tsc < 0 &&
	    (unsigned)__get_cpuid_max(CPUID_LEAF_EXT, NULL) >= CPUID_LEAF_APM) {
		__cpuid(CPUID_LEAF_APM, a, b, c, d);
		f->constant_tsc = f->nonstop_tsc = !!(d & CPUID_APM_EDX_INVARIANT);
	}
	snprintf(f->clocksource, sizeof(f->clocksource), "unknown");
	fp = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "re");
	if (fp) {
		if (fgets(f->clocksource, sizeof(f->clocksource), fp))
			f->clocksource[strcspn(f->clocksource, "\n")] = 0;
		fclose(fp);
	}
}

static struct vt_tsc_method *find(struct vt_tsc_freq *f, const char *name)
{
	for (int i = 0; i < f->nr_methods; i++)
		if (!strcmp(f->m[i].name, name) && f->m[i].status == VT_TSC_OK)
			return &f->m[i];
	return NULL;
}

/* |a - b| / b in parts per million. */
static double ppm_off(uint64_t a, uint64_t b)
{
	double d = ((double)a - (double)b) / (double)b * PPM;

	return d < 0 ? -d : d;
}

static void choose(struct vt_tsc_freq *f)
{
	struct vt_tsc_method *cal = find(f, "calibrate"), *c;
	static const char *const order[] = {
		"perf-mmap", "kcore", "cpuid-15h", "cpuid-hv",
	};

	if ((c = find(f, "kernel-refined"))) {
		snprintf(f->why, sizeof(f->why), "the kernel's refined calibration: the figure "
			 "the kernel itself converts TSC with");
		goto done;
	}
	c = find(f, "kernel-detected");
	if (c && (f->known_freq == 1 || !cal || ppm_off(c->hz, cal->hz) <= VT_TSC_AGREE_PPM)) {
		snprintf(f->why, sizeof(f->why), "the kernel's boot figure%s",
			 f->known_freq == 1 ? " (tsc_known_freq: taken from CPUID/the hypervisor, "
			 "not measured)" : cal ? ", confirmed by calibration within 0.1%" : "");
		goto done;
	}
	for (size_t i = 0; i < VT_ARRAY_SIZE(order); i++) {
		if ((c = find(f, order[i]))) {
			snprintf(f->why, sizeof(f->why), "no trusted kernel figure; %s is exact "
				 "where present", c->name);
			goto done;
		}
	}
	if ((c = cal)) {
		snprintf(f->why, sizeof(f->why), "only measurement available%s",
			 find(f, "kernel-detected") ? " (the kernel's unrefined boot figure "
			 "disagrees with it)" : "");
		goto done;
	}
	if ((c = find(f, "cpuid-16h"))) {
		snprintf(f->why, sizeof(f->why), "only the nominal CPUID figure is available "
			 "(1 MHz resolution)");
		goto done;
	}
	f->hz = 0;
	f->source = "none";
	snprintf(f->why, sizeof(f->why), "no method gave a figure");
	return;
done:
	f->hz = c->hz;
	f->source = c->name;
}

static void cross_check(struct vt_tsc_freq *f)
{
	if (f->constant_tsc == 0)
		warn(f, "the TSC is not constant (no constant_tsc): its rate changes with the "
		     "CPU frequency, timestamps are not time");
	if (f->nonstop_tsc == 0)
		warn(f, "the TSC is not nonstop (no nonstop_tsc): it may stop in deep C-states");
	if (!f->hz)
		return;
	for (int i = 0; i < f->nr_methods; i++) {
		const struct vt_tsc_method *m = &f->m[i];
		double off;

		if (m->status != VT_TSC_OK || !strcmp(m->name, f->source))
			continue;
		off = ppm_off(m->hz, f->hz);
		if (off > VT_TSC_AGREE_PPM)
			warn(f, "%s says %.6f MHz, %.3f%% away from the chosen %.6f MHz (%s)",
			     m->name, m->hz / 1e6, off / 1e4, f->hz / 1e6, f->source);
	}
}

int vt_tsc_freq_opts(struct vt_tsc_freq *f, unsigned flags)
{
	memset(f, 0, sizeof(*f));
	read_flags(f);
	method_cpuid15(f);
	method_cpuid16(f);
	method_cpuid_hv(f);
	method_perf(f);
	method_kernel(f, flags);
	method_calibrate(f, flags);
	method_kcore(f, flags);
	choose(f);
	cross_check(f);
	if (!f->hz)
		return vt_err_set("no method could tell the TSC frequency");
	return 0;
}

int vt_tsc_freq(struct vt_tsc_freq *f)
{
	return vt_tsc_freq_opts(f, 0);
}

int vt_tsc_freq_span(struct vt_tsc_freq *f, uint64_t tsc0, uint64_t ns0, uint64_t tsc1,
		     uint64_t ns1)
{
	double hz;

	memset(f, 0, sizeof(*f));
	if (ns1 <= ns0 || ns1 - ns0 < VT_TSC_SPAN_MIN_NS || tsc1 <= tsc0)
		return vt_err_set("a run of %.3f ms is too short to measure the TSC frequency",
				  ns1 > ns0 ? (ns1 - ns0) / 1e6 : 0.0);
	hz = (double)(tsc1 - tsc0) * VT_NS_PER_SEC / (double)(ns1 - ns0);
	if (hz < 1e6 || hz > 1e11)
		return vt_err_set("the run measured an implausible TSC frequency (%.0f Hz)", hz);
	f->hz = (uint64_t)(hz + 0.5);
	f->source = "run-span";
	snprintf(f->why, sizeof(f->why), "measured over the run's own %.3f s",
		 (ns1 - ns0) / 1e9);
	return 0;
}

int vt_tsc_meta_set(struct vt_meta *m, const struct vt_tsc_freq *f)
{
	if (!f->hz)
		return vt_err_set("no TSC frequency to record");
	if (vt_meta_set_u64(m, VT_MK_TSC_HZ, f->hz) ||
	    vt_meta_set(m, VT_MK_TSC_HZ_SOURCE, "%s", f->source))
		return -1;
	return 0;
}
