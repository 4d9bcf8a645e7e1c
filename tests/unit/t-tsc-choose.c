/*
 * t-tsc-choose.c - unit test of lib/tsc.c's machine-independent parts (the
 * file is included here to reach its static functions): the kernel log's
 * "MHz" figures parsed (fractions, spaces, malformed), which method is
 * chosen and why for every combination of figures (refined, boot figure
 * with tsc_known_freq, confirmed or contradicted by calibration, exact
 * methods in order, calibration alone, CPUID 16h alone, none), the
 * cross-check's warnings (capped), the kcore method run through a stand-in
 * tools/tsc-khz-kcore (a figure, unsupported, failed, not found, not asked
 * for), the run-span frequency's bounds and tsc.hz into a meta; the whole
 * of vt_tsc_freq_opts in quick mode gives a sound report on any machine.
 */
#include "tsc.c"
#include <sys/stat.h>
#include "check.h"

/* A freq with the methods @names (NULL-terminated), each OK at @hz[i] Hz
 * (0: skipped). */
static void freq_of(struct vt_tsc_freq *f, const char *const *names, const uint64_t *hz)
{
	memset(f, 0, sizeof(*f));
	f->constant_tsc = f->nonstop_tsc = 1;
	f->known_freq = 0;
	for (int i = 0; names[i]; i++) {
		struct vt_tsc_method *m = add_method(f, names[i]);

		if (hz[i]) {
			m->hz = hz[i];
			note(m, VT_TSC_OK, "test %d", i);
		} else {
			note(m, VT_TSC_SKIPPED, "test %d skipped", i);
		}
	}
}

static void test_parse_mhz(void)
{
	struct klog_find k = { 0 };

	CHECK(parse_mhz("2995.199 MHz processor") == 2995199000ULL);
	CHECK(parse_mhz("  2400 MHz") == 2400000000ULL);
	CHECK(parse_mhz("2400.5   MHz") == 2400500000ULL);
	/* no space before the unit */
	CHECK(parse_mhz("2400MHz") == 2400000000ULL);
	CHECK(parse_mhz("2400.25MHz") == 2400250000ULL);
	CHECK(parse_mhz("1.000001 MHz") == 1000001ULL);
	CHECK(parse_mhz("x2400 MHz") == 0);
	CHECK(parse_mhz("2400 GHz") == 0);
	CHECK(parse_mhz("2400.") == 0);
	CHECK(parse_mhz("") == 0);
	/* digits past nine are not read: not MHz then */
	CHECK(parse_mhz("12345678901 MHz") == 0);

	scan_line(&k, "[    0.000000] tsc: Detected 2995.199 MHz processor");
	CHECK(k.detected_hz == 2995199000ULL && !k.refined_hz && !k.marked_unstable);
	scan_line(&k, "[    1.2] tsc: Refined TSC clocksource calibration: 2995.210 MHz");
	CHECK(k.refined_hz == 2995210000ULL);
	scan_line(&k, "clocksource: Marking TSC unstable due to clocksource watchdog");
	CHECK(k.marked_unstable == 1);
	scan_line(&k, "tsc: Detected garbage");
	CHECK(k.detected_hz == 0);
}

static void test_choose(void)
{
	struct vt_tsc_freq f;
	static const char *const all[] = {
		"cpuid-15h", "cpuid-16h", "cpuid-hv", "perf-mmap", "kernel-refined",
		"kernel-detected", "calibrate", "kcore", NULL,
	};
	uint64_t hz[8];

	/* the refined figure first */
	for (int i = 0; i < 8; i++)
		hz[i] = 3000000000ULL + i;
	freq_of(&f, all, hz);
	choose(&f);
	CHECK_STR(f.source, "kernel-refined");
	CHECK(f.hz == 3000000004ULL);
	CHECK(strstr(f.why, "refined calibration") != NULL);

	/* the boot figure: tsc_known_freq, confirmed by calibration, no
	 * calibration; contradicted: perf-mmap then kcore, cpuid-15h,
	 * cpuid-hv in that order */
	hz[4] = 0;
	hz[6] = 2000000000ULL;
	freq_of(&f, all, hz);
	f.known_freq = 1;
	choose(&f);
	CHECK_STR(f.source, "kernel-detected");
	CHECK(strstr(f.why, "tsc_known_freq") != NULL);
	hz[6] = 3000000005ULL + 1000;	/* 0.3 ppm away */
	freq_of(&f, all, hz);
	choose(&f);
	CHECK_STR(f.source, "kernel-detected");
	CHECK(strstr(f.why, "confirmed by calibration") != NULL);
	hz[6] = 0;
	freq_of(&f, all, hz);
	choose(&f);
	CHECK_STR(f.source, "kernel-detected");
	CHECK(strcmp(f.why, "the kernel's boot figure") == 0);

	hz[6] = 2000000000ULL;
	freq_of(&f, all, hz);
	choose(&f);
	CHECK_STR(f.source, "perf-mmap");
	CHECK(f.hz == 3000000003ULL);
	CHECK(strstr(f.why, "perf-mmap is exact") != NULL);
	hz[3] = 0;
	freq_of(&f, all, hz);
	choose(&f);
	CHECK_STR(f.source, "kcore");
	hz[7] = 0;
	freq_of(&f, all, hz);
	choose(&f);
	CHECK_STR(f.source, "cpuid-15h");
	hz[0] = 0;
	freq_of(&f, all, hz);
	choose(&f);
	CHECK_STR(f.source, "cpuid-hv");
	hz[2] = 0;

	/* calibration alone: the boot figure disagreeing, or absent */
	freq_of(&f, all, hz);
	choose(&f);
	CHECK_STR(f.source, "calibrate");
	CHECK(strstr(f.why, "disagrees") != NULL);
	hz[5] = 0;
	freq_of(&f, all, hz);
	choose(&f);
	CHECK_STR(f.source, "calibrate");
	CHECK(strcmp(f.why, "only measurement available") == 0);

	/* CPUID 16h alone, then nothing */
	hz[6] = 0;
	freq_of(&f, all, hz);
	choose(&f);
	CHECK_STR(f.source, "cpuid-16h");
	CHECK(f.hz == 3000000001ULL);
	hz[1] = 0;
	freq_of(&f, all, hz);
	choose(&f);
	CHECK_STR(f.source, "none");
	CHECK(f.hz == 0);
	CHECK(strstr(f.why, "no method") != NULL);
}

static void test_cross_check(void)
{
	struct vt_tsc_freq f;
	static const char *const two[] = { "kernel-refined", "calibrate", "cpuid-16h", NULL };
	uint64_t hz[3] = { 3000000000ULL, 3000001000ULL, 3100000000ULL };

	/* cpuid-16h 3.3 % away: one warning naming it; calibration within */
	freq_of(&f, two, hz);
	choose(&f);
	cross_check(&f);
	CHECK(f.nr_warnings == 1);
	CHECK(strstr(f.warnings[0], "cpuid-16h says 3100.000000 MHz") != NULL);

	/* not constant, not nonstop */
	freq_of(&f, two, hz);
	f.constant_tsc = 0;
	f.nonstop_tsc = 0;
	choose(&f);
	cross_check(&f);
	CHECK(f.nr_warnings == 3);
	CHECK(strstr(f.warnings[0], "not constant") != NULL);
	CHECK(strstr(f.warnings[1], "not nonstop") != NULL);

	/* unknown flags and no figure: nothing to say */
	hz[0] = hz[1] = hz[2] = 0;
	freq_of(&f, two, hz);
	f.constant_tsc = f.nonstop_tsc = -1;
	choose(&f);
	cross_check(&f);
	CHECK(f.nr_warnings == 0);

	/* warnings past the cap are dropped */
	memset(&f, 0, sizeof(f));
	for (int i = 0; i < VT_TSC_MAX_WARNINGS + 3; i++)
		warn(&f, "w%d", i);
	CHECK(f.nr_warnings == VT_TSC_MAX_WARNINGS);
	CHECK_STR(f.warnings[VT_TSC_MAX_WARNINGS - 1], "w9");
}

/* A stand-in tools/tsc-khz-kcore in @dir: prints @out, exits @rc. */
static void fake_tool(const char *dir, const char *out, int rc)
{
	char p[512];
	FILE *fp;

	snprintf(p, sizeof(p), "%s/tsc-khz-kcore", dir);
	fp = fopen(p, "w");
	CHECK(fp != NULL);
	if (!fp)
		return;
	fprintf(fp, "#!/bin/sh\necho 'reading tsc_khz'\nprintf '%s'\nexit %d\n", out, rc);
	fclose(fp);
	CHECK(chmod(p, 0755) == 0);
}

static struct vt_tsc_method *kcore_run(struct vt_tsc_freq *f, unsigned flags)
{
	memset(f, 0, sizeof(*f));
	method_kcore(f, flags);
	CHECK(f->nr_methods == 1);
	CHECK_STR(f->m[0].name, "kcore");
	return &f->m[0];
}

static void test_kcore(const char *dir)
{
	char kcore[300], tools[300], src[300], p[600];
	struct vt_tsc_freq f;
	struct vt_tsc_method *m;
	FILE *fp;

	snprintf(kcore, sizeof(kcore), "%s/kcore", dir);
	snprintf(tools, sizeof(tools), "%s/tools", dir);
	snprintf(src, sizeof(src), "%s/src", dir);
	CHECK(mkdir(tools, 0755) == 0);
	fp = fopen(kcore, "w");
	CHECK(fp != NULL);
	if (fp)
		fclose(fp);

	/* no kcore file */
	snprintf(p, sizeof(p), "%s/none", dir);
	setenv("VT_KCORE", p, 1);
	m = kcore_run(&f, VT_TSC_KCORE);
	CHECK(m->status == VT_TSC_SKIPPED);
	CHECK(strstr(m->note, "no ") && strstr(m->note, "/none"));

	/* not asked for */
	setenv("VT_KCORE", kcore, 1);
	m = kcore_run(&f, 0);
	CHECK(m->status == VT_TSC_SKIPPED);
	CHECK(strstr(m->note, "--kcore") != NULL);

	/* the tool's last line is the figure */
	setenv("VT_TOOLS_DIR", tools, 1);
	fake_tool(tools, "2995199000\\n", 0);
	m = kcore_run(&f, VT_TSC_KCORE);
	CHECK(m->status == VT_TSC_OK);
	CHECK(m->hz == 2995199000ULL);
	CHECK(strstr(m->note, kcore) != NULL);

	/* unsupported (no gdb, not root): skipped with its last line */
	fake_tool(tools, "tsc-khz-kcore: gdb not installed\\n", VT_EXIT_UNSUPPORTED);
	m = kcore_run(&f, VT_TSC_KCORE);
	CHECK(m->status == VT_TSC_SKIPPED);
	CHECK_STR(m->note, "tsc-khz-kcore: gdb not installed");

	/* failed: a non-number, 0, silence */
	fake_tool(tools, "no figure\\n", 0);
	m = kcore_run(&f, VT_TSC_KCORE);
	CHECK(m->status == VT_TSC_FAILED);
	CHECK_STR(m->note, "no figure");
	fake_tool(tools, "0\\n", 0);
	m = kcore_run(&f, VT_TSC_KCORE);
	CHECK(m->status == VT_TSC_FAILED);
	fake_tool(tools, "", 1);
	m = kcore_run(&f, VT_TSC_KCORE);
	CHECK(m->status == VT_TSC_FAILED);
	CHECK_STR(m->note, "reading tsc_khz");

	/* not in VT_TOOLS_DIR: not found */
	snprintf(p, sizeof(p), "%s/empty", dir);
	setenv("VT_TOOLS_DIR", p, 1);
	m = kcore_run(&f, VT_TSC_KCORE);
	CHECK(m->status == VT_TSC_SKIPPED);
	CHECK(strstr(m->note, "not found") != NULL);

	/* $VT_SRC/tools; a path with a quote is not run */
	unsetenv("VT_TOOLS_DIR");
	setenv("VT_SRC", dir, 1);
	fake_tool(tools, "1000\\n", 0);
	m = kcore_run(&f, VT_TSC_KCORE);
	CHECK(m->status == VT_TSC_OK && m->hz == 1000);
	snprintf(p, sizeof(p), "%s/it's", dir);
	CHECK(mkdir(p, 0755) == 0);
	setenv("VT_TOOLS_DIR", p, 1);
	fake_tool(p, "1000\\n", 0);
	m = kcore_run(&f, VT_TSC_KCORE);
	CHECK(m->status == VT_TSC_SKIPPED);
	snprintf(p, sizeof(p), "%s/it's/tsc-khz-kcore", dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/it's", dir);
	rmdir(p);

	/* neither: found above this program (the source tree's tools/, or
	 * none for an installed copy): a report either way */
	unsetenv("VT_TOOLS_DIR");
	unsetenv("VT_SRC");
	{
		int rc = find_kcore_tool(p, sizeof(p));

		CHECK(rc == -1 || (rc == 0 && strstr(p, "/tsc-khz-kcore") && !access(p, X_OK)));
	}
	unsetenv("VT_KCORE");

	snprintf(p, sizeof(p), "%s/tsc-khz-kcore", tools);
	unlink(p);
	rmdir(tools);
	unlink(kcore);
}

static void test_span_meta(void)
{
	struct vt_tsc_freq f;
	struct vt_meta *m = vt_meta_new();
	uint64_t v;

	/* 3e9 ticks in a second */
	CHECK(vt_tsc_freq_span(&f, 1000, 5000000, 3000001000ULL, 1005000000ULL) == 0);
	CHECK(f.hz == 3000000000ULL);
	CHECK_STR(f.source, "run-span");
	CHECK(strstr(f.why, "1.000 s") != NULL);
	/* too short, backwards, the TSC still, implausible both ways */
	CHECK(vt_tsc_freq_span(&f, 0, 0, 1000, VT_TSC_SPAN_MIN_NS - 1) == -1);
	CHECK(strstr(vt_err_msg(), "too short") != NULL);
	CHECK(vt_tsc_freq_span(&f, 0, 10, 1000, 5) == -1);
	CHECK(strstr(vt_err_msg(), "0.000 ms") != NULL);
	CHECK(vt_tsc_freq_span(&f, 5, 0, 5, 1000000000) == -1);
	CHECK(vt_tsc_freq_span(&f, 0, 0, 1000, 1000000000) == -1);
	CHECK(strstr(vt_err_msg(), "implausible") != NULL);
	CHECK(vt_tsc_freq_span(&f, 0, 0, 200000000000ULL, 1000000000) == -1);
	CHECK(strstr(vt_err_msg(), "implausible") != NULL);

	/* tsc.hz into a meta; none to record */
	CHECK(m != NULL);
	CHECK(vt_tsc_freq_span(&f, 0, 0, 2500000000ULL, 1000000000) == 0);
	CHECK(vt_tsc_meta_set(m, &f) == 0);
	CHECK(vt_meta_get_u64(m, VT_MK_TSC_HZ, &v) == 0 && v == 2500000000ULL);
	CHECK_STR(vt_meta_get(m, VT_MK_TSC_HZ_SOURCE), "run-span");
	memset(&f, 0, sizeof(f));
	CHECK(vt_tsc_meta_set(m, &f) == -1);
	CHECK(strstr(vt_err_msg(), "no TSC frequency") != NULL);
	vt_meta_free(m);
}

/* Quick mode on this machine: every method reported once, a status and a
 * note each; a figure chosen from them or none with the reason. */
static void test_quick(void)
{
	struct vt_tsc_freq f;
	int rc = vt_tsc_freq_opts(&f, VT_TSC_NO_CALIBRATE);

	CHECK(f.nr_methods == 8);
	for (int i = 0; i < f.nr_methods; i++) {
		CHECK(f.m[i].status >= VT_TSC_OK && f.m[i].status <= VT_TSC_FAILED);
		CHECK(f.m[i].note[0] != 0);
		CHECK(f.m[i].status != VT_TSC_OK || f.m[i].hz > 0);
	}
	CHECK(find(&f, "calibrate") == NULL);
	if (rc == 0) {
		CHECK(f.hz > 0 && find(&f, f.source) != NULL);
	} else {
		CHECK(f.hz == 0);
		CHECK_STR(f.source, "none");
		CHECK(strstr(vt_err_msg(), "no method") != NULL);
	}
	CHECK(f.clocksource[0] != 0);
}

int main(void)
{
	char dir[] = "/tmp/t-tsc-choose.XXXXXX";

	CHECK(mkdtemp(dir) != NULL);
	test_parse_mhz();
	test_choose();
	test_cross_check();
	test_kcore(dir);
	test_span_meta();
	test_quick();
	rmdir(dir);
	return check_done();
}
