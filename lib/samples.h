/*
 * samples.h - reader of samples.tsv, the guest stack samples written by
 * tools/vmtrace-sample (tools/gdb/vmsample.py).  Full description in
 * docs/format/samples.md.
 *
 * UTF-8 text, '\n' line ends, TAB-separated fields:
 *   line 1   "# vmtrace-samples 1"            magic + version
 *   line 2   "# clock=CLOCK rate_hz=R"        CLOCK: tsc | mono-ns
 *   other "#" lines                           skipped
 *   sample lines, one per vCPU per sample, in time order:
 *     field  type            meaning
 *     time   decimal u64     stop time in CLOCK (host TSC ticks for tsc)
 *     error  decimal u64     the stop was within time +- error
 *     mono_ns decimal u64    host CLOCK_MONOTONIC ns after the stop
 *     vcpu   decimal u32     vCPU index
 *     pc     0x hex u64      the vCPU's program counter
 *     stack  text            outermost;...;innermost (no TAB)
 *
 * The file is input to host-side tools: every line is checked (lengths,
 * number syntax and range, field count, time order).
 */
#ifndef VT_SAMPLES_H
#define VT_SAMPLES_H

#include <stdint.h>

#define VT_SAMPLES_MAGIC	"# vmtrace-samples 1"
/* its name in a sampling session's directory (next to vmtrace.meta) */
#define VT_SAMPLES_FILE		"samples.tsv"
/* longest line accepted (a 1024-frame stack of 63-byte names fits) */
#define VT_SAMPLES_LINE_MAX	65536

/* The clock of the time column. */
enum vt_samples_clock {
	VT_SAMPLES_TSC = 0,	/* host TSC ticks */
	VT_SAMPLES_MONO_NS = 1,	/* host CLOCK_MONOTONIC nanoseconds */
};

/* One sample of one vCPU; @stack points into the reader's line buffer
 * and stays valid until the next vt_samples_next(). */
struct vt_sample {
	uint64_t time;
	uint64_t error;
	uint64_t mono_ns;
	uint64_t pc;
	uint32_t vcpu;
	uint32_t depth;		/* number of frames in @stack */
	const char *stack;	/* "outer;...;leaf", NUL-terminated */
	const char *leaf;	/* the innermost frame, inside @stack */
};

struct vt_samples;

/* Open @path and read its header.  NULL on failure (missing file, wrong
 * magic/version, bad clock line) with a message naming the file. */
struct vt_samples *vt_samples_open(const char *path);

/* The clock of the time column and the requested rate (0 if absent). */
enum vt_samples_clock vt_samples_clock(const struct vt_samples *s);
double vt_samples_rate_hz(const struct vt_samples *s);

/* Read the next sample into @out: 1 read, 0 end of file, -1 bad line
 * (message names the file and line; the reader stops there). */
int vt_samples_next(struct vt_samples *s, struct vt_sample *out);

/* Close the file and free @s (NULL is fine). */
void vt_samples_close(struct vt_samples *s);

#endif
