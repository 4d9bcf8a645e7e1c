/*
 * t-samples.c - unit test of lib/samples.c: a file as tools/vmtrace-sample
 * writes it, and hostile ones (wrong magic, bad numbers, time going back,
 * wrong field counts, empty frames, NUL bytes, no final newline).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "err.h"
#include "samples.h"

static const char *tmp_path(const char *name)
{
	static char path[512];
	const char *dir = getenv("VT_TMP");

	snprintf(path, sizeof(path), "%s/%s", dir ? dir : "/tmp", name);
	return path;
}

static const char *write_file(const char *data, size_t n)
{
	const char *path = tmp_path("s.tsv");
	FILE *fp = fopen(path, "wb");

	CHECK(fp != NULL);
	CHECK(fwrite(data, 1, n, fp) == n);
	fclose(fp);
	return path;
}

#define HDR "# vmtrace-samples 1\n# clock=tsc rate_hz=100\n# time\terror\tmono_ns\tvcpu\tpc\tstack\n"

/* Open @text and read to the end: the number of samples, or -1 on error
 * (an open error counts as -2). */
static int read_all(const char *text, size_t n)
{
	struct vt_samples *s = vt_samples_open(write_file(text, n));
	struct vt_sample x;
	int r, count = 0;

	if (!s)
		return -2;
	while ((r = vt_samples_next(s, &x)) == 1)
		count++;
	CHECK(vt_samples_next(s, &x) == r);	/* sticky end / error */
	vt_samples_close(s);
	return r < 0 ? -1 : count;
}

#define READ(text) read_all(text, sizeof(text) - 1)

#define BAD(text) do { \
	CHECK(read_all(text, sizeof(text) - 1) == -1); \
	CHECK(strstr(vt_err_msg(), "s.tsv:") != NULL); \
} while (0)

int main(void)
{
	static const char good[] = HDR
		"1000\t5\t777\t0\t0x100039\t_start;spin_main;spin_round;spin_heavy\n"
		"1000\t5\t777\t1\t0x10001b\t_start;spin_main;spin_round;spin_light\n"
		"# a comment\n"
		"2000\t7\t888\t0\t0xffffffff81000000\t0xabc\n";
	struct vt_samples *s = vt_samples_open(write_file(good, sizeof(good) - 1));
	struct vt_sample x;

	CHECK(s != NULL);
	CHECK(vt_samples_clock(s) == VT_SAMPLES_TSC);
	CHECK(vt_samples_rate_hz(s) == 100.0);
	CHECK(vt_samples_next(s, &x) == 1);
	CHECK(x.time == 1000 && x.error == 5 && x.mono_ns == 777 && x.vcpu == 0);
	CHECK(x.pc == 0x100039 && x.depth == 4);
	CHECK_STR(x.leaf, "spin_heavy");
	CHECK_STR(x.stack, "_start;spin_main;spin_round;spin_heavy");
	CHECK(vt_samples_next(s, &x) == 1);
	CHECK(x.vcpu == 1);
	CHECK_STR(x.leaf, "spin_light");
	CHECK(vt_samples_next(s, &x) == 1);
	CHECK(x.pc == 0xffffffff81000000ULL && x.depth == 1);
	CHECK_STR(x.leaf, "0xabc");
	CHECK(vt_samples_next(s, &x) == 0);
	vt_samples_close(s);

	CHECK(READ(HDR) == 0);
	CHECK(READ("# vmtrace-samples 1\n# clock=mono-ns\n1\t0\t1\t0\t0x1\tf\n") == 1);

	/* header problems: the open fails */
	CHECK(READ("# vmtrace-samples 2\n# clock=tsc\n") == -2);
	CHECK(READ("# vmtrace-samples 1\n# clock=utc\n") == -2);
	CHECK(READ("# vmtrace-samples 1\n# clock=tsc rate_hz=-1\n") == -2);
	CHECK(READ("") == -2);
	CHECK(vt_samples_open(tmp_path("does-not-exist")) == NULL);

	/* bad lines */
	BAD(HDR "1\t0\t1\t0\t0x1\n");				/* 5 fields */
	BAD(HDR "1\t0\t1\t0\t0x1\tf\textra\n");			/* 7 fields */
	BAD(HDR "-1\t0\t1\t0\t0x1\tf\n");			/* sign */
	BAD(HDR " 1\t0\t1\t0\t0x1\tf\n");			/* space */
	BAD(HDR "99999999999999999999\t0\t1\t0\t0x1\tf\n");	/* overflow */
	BAD(HDR "1\t0\t1\t4294967296\t0x1\tf\n");		/* vcpu > u32 */
	BAD(HDR "1\t0\t1\t0\t100\tf\n");			/* pc without 0x */
	BAD(HDR "1\t0\t1\t0\t0xg\tf\n");			/* not hex */
	BAD(HDR "5\t0\t1\t0\t0x1\tf\n4\t0\t1\t0\t0x1\tf\n");	/* time goes back */
	BAD(HDR "1\t0\t1\t0\t0x1\t\n");				/* empty stack */
	BAD(HDR "1\t0\t1\t0\t0x1\ta;;b\n");			/* empty frame */
	BAD(HDR "1\t0\t1\t0\t0x1\ta;\n");			/* empty leaf */
	BAD(HDR "1\t0\t1\t0\t0x1\tf");				/* no final newline */
	BAD(HDR "1\t0\t1\t0\t0x1\tf\0g\n");			/* NUL byte */
	BAD(HDR "\0f\n");					/* NUL first */
	BAD(HDR "1\t0\t1\t0\t0x1\tf\n\0g");			/* NUL, no newline */
	BAD(HDR "\t0\t1\t0\t0x1\tf\n");			/* empty time */
	BAD(HDR "1\tx\t1\t0\t0x1\tf\n");			/* bad error */
	BAD(HDR "1\t0\t1x\t0\t0x1\tf\n");			/* bad mono_ns */
	BAD(HDR "1\t0\t1\t-0\t0x1\tf\n");			/* bad vcpu */
	BAD(HDR "1\t0\t1\t0\t0x\tf\n");			/* empty hex */
	BAD(HDR "1\t0\t1\t0\t0x1\t;f\n");			/* empty outermost */
	CHECK(strstr(vt_err_msg(), "s.tsv:4: empty stack or empty outermost frame") != NULL);

	/* a line of exactly VT_SAMPLES_LINE_MAX - 1 bytes with its newline is
	 * read; one byte more is "longer than" */
	{
		size_t hl = sizeof(HDR) - 1, fixed = strlen("1\t0\t1\t0\t0x1\t");
		size_t n = hl + VT_SAMPLES_LINE_MAX;
		char *big = malloc(n + 1);

		CHECK(big != NULL);
		memcpy(big, HDR "1\t0\t1\t0\t0x1\t", hl + fixed);
		memset(big + hl + fixed, 'f', VT_SAMPLES_LINE_MAX - 2 - fixed);
		big[hl + VT_SAMPLES_LINE_MAX - 2] = '\n';	/* 65534 + '\n' */
		CHECK(read_all(big, hl + VT_SAMPLES_LINE_MAX - 1) == 1);
		big[hl + VT_SAMPLES_LINE_MAX - 2] = 'f';
		big[hl + VT_SAMPLES_LINE_MAX - 1] = '\n';	/* 65535 + '\n' */
		CHECK(read_all(big, n) == -1);
		CHECK(strstr(vt_err_msg(), "s.tsv:4: line longer than 65535 bytes") != NULL);
		free(big);
	}

	/* more header problems */
	CHECK(READ("# vmtrace-samples 1\n") == -2);		/* no clock line */
	CHECK(strstr(vt_err_msg(), "s.tsv:2: no \"# clock=...\" line") != NULL);
	CHECK(READ("# vmtrace-samples 1\n# rate_hz=1\n") == -2);
	CHECK(strstr(vt_err_msg(), "s.tsv:2: no \"# clock=...\" line") != NULL);
	CHECK(READ("# vmtrace-samples 1\n# clock=tsc") == -2);	/* line 2 cut */
	CHECK(strstr(vt_err_msg(), "s.tsv:2: truncated last line") != NULL);
	CHECK(READ("# vmtrace-samples 1\n# clock=tsc\n1\t0\t1\t0\t0x1\tf\n") == 1);
	CHECK(READ("# vmtrace-samples 1\n# clock=tscx\n") == -2);
	CHECK(strstr(vt_err_msg(), "s.tsv:2: unknown clock in \"# clock=tscx\"") != NULL);
	CHECK(READ("# vmtrace-samples 1\n# clock=mono-nsx\n") == -2);
	CHECK(READ("# vmtrace-samples 1\n# clock=tsc rate_hz=1e999\n") == -2);
	CHECK(strstr(vt_err_msg(), "s.tsv:2: bad rate_hz") != NULL);
	CHECK(READ("# vmtrace-samples 1\n# clock=tsc rate_hz=5x\n") == -2);
	CHECK(READ("# vmtrace-samples 1\n# clock=tsc rate_hz=0\n") == -2);
	CHECK(READ("# vmtrace-samples 1\n# clock=tsc rate_hz=nan\n") == -2);
	/* a known key's value ends at a space; the rest is for later versions */
	{
		static const char fwd[] = "# vmtrace-samples 1\n# clock=mono-ns rate_hz=250 x=1\n";

		s = vt_samples_open(write_file(fwd, sizeof(fwd) - 1));
	}
	CHECK(s != NULL);
	if (s) {
		CHECK(vt_samples_clock(s) == VT_SAMPLES_MONO_NS);
		CHECK(vt_samples_rate_hz(s) == 250.0);
	}
	vt_samples_close(s);
	vt_samples_close(NULL);
	/* a directory opens (fopen) but does not read: the error says so */
	CHECK(vt_samples_open(getenv("VT_TMP") ? getenv("VT_TMP") : "/tmp") == NULL);
	CHECK(strstr(vt_err_msg(), ": read error after line 0") != NULL);
	return check_done();
}
