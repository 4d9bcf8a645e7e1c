/*
 * samples.c - reader of samples.tsv (see samples.h), for host tools that
 * take guest stack samples as a track (vmtrace merge).  Runs in the
 * caller's thread; allocates one line buffer per reader; blocks on file
 * reads only.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "err.h"
#include "samples.h"

#define SAMPLES_FIELDS	6
#define CLOCK_PREFIX	"# clock="
#define RATE_KEY	" rate_hz="

struct vt_samples {
	FILE *fp;
	char *path;
	char *line;
	unsigned long lineno;
	uint64_t last_time;
	enum vt_samples_clock clock;
	double rate_hz;
	int failed;
};

/* Read one line without its '\n' into s->line: 1, 0 at EOF, -1 bad. */
static int samples_getline(struct vt_samples *s)
{
	size_t len;

	if (!fgets(s->line, VT_SAMPLES_LINE_MAX, s->fp)) {
		if (ferror(s->fp))
			return vt_err_errno("%s: read error after line %lu", s->path, s->lineno);
		return 0;
	}
	s->lineno++;
	len = strlen(s->line);
	if (len == VT_SAMPLES_LINE_MAX - 1 && s->line[len - 1] != '\n')
		return vt_err_set("%s:%lu: line longer than %d bytes", s->path, s->lineno,
				  VT_SAMPLES_LINE_MAX - 1);
	if (len == 0 || s->line[len - 1] != '\n') {
		if (!feof(s->fp) || len == 0)
			return vt_err_set("%s:%lu: NUL byte in the line", s->path, s->lineno);
		return vt_err_set("%s:%lu: truncated last line (no newline)", s->path, s->lineno);
	}
	s->line[len - 1] = '\0';
	return 1;
}

/* Parse a whole field as an unsigned number in @base (10, or 16 after
 * "0x"): 0, or -1 if it is empty, has other characters or overflows. */
static int samples_parse_u64(const char *f, int base, uint64_t *out)
{
	unsigned long long v;

	if (base == 16) {
		if (strncmp(f, "0x", 2))
			return -1;
		f += 2;
	}
	if (!*f || strspn(f, base == 16 ? "0123456789abcdefABCDEF" : "0123456789") != strlen(f))
		return -1;
	/* only digits: strtoull reads them all, and fails only by overflow */
	errno = 0;
	v = strtoull(f, NULL, base);
	if (errno)
		return -1;
	*out = v;
	return 0;
}

static int samples_header(struct vt_samples *s)
{
	const char *p;
	char *end;
	int r = samples_getline(s);

	if (r <= 0 || strcmp(s->line, VT_SAMPLES_MAGIC))
		return r < 0 ? -1 : vt_err_set("%s: not a samples file (first line is not \"%s\")",
					       s->path, VT_SAMPLES_MAGIC);
	r = samples_getline(s);
	if (r <= 0 || strncmp(s->line, CLOCK_PREFIX, strlen(CLOCK_PREFIX)))
		return r < 0 ? -1 : vt_err_set("%s:2: no \"%s...\" line", s->path, CLOCK_PREFIX);
	p = s->line + strlen(CLOCK_PREFIX);
	if (!strncmp(p, "tsc", 3) && (p[3] == ' ' || !p[3])) {
		s->clock = VT_SAMPLES_TSC;
		p += 3;
	} else if (!strncmp(p, "mono-ns", 7) && (p[7] == ' ' || !p[7])) {
		s->clock = VT_SAMPLES_MONO_NS;
		p += 7;
	} else {
		return vt_err_set("%s:2: unknown clock in \"%s\"", s->path, s->line);
	}
	if (!strncmp(p, RATE_KEY, strlen(RATE_KEY))) {
		errno = 0;
		s->rate_hz = strtod(p + strlen(RATE_KEY), &end);
		if (errno || (*end && *end != ' ') || !(s->rate_hz > 0))
			return vt_err_set("%s:2: bad rate_hz in \"%s\"", s->path, s->line);
	}
	return 0;
}

struct vt_samples *vt_samples_open(const char *path)
{
	struct vt_samples *s = calloc(1, sizeof(*s));

	if (!s) {
		vt_err_set("%s: out of memory", path);
		return NULL;
	}
	s->path = strdup(path);
	s->line = malloc(VT_SAMPLES_LINE_MAX);
	if (!s->path || !s->line) {
		vt_err_set("%s: out of memory", path);
		goto fail;
	}
	s->fp = fopen(path, "re");
	if (!s->fp) {
		vt_err_errno("%s", path);
		goto fail;
	}
	if (samples_header(s) < 0)
		goto fail;
	return s;
fail:
	vt_samples_close(s);
	return NULL;
}

enum vt_samples_clock vt_samples_clock(const struct vt_samples *s)
{
	return s->clock;
}

double vt_samples_rate_hz(const struct vt_samples *s)
{
	return s->rate_hz;
}

/* Split s->line at TABs into @f; -1 unless exactly SAMPLES_FIELDS. */
static int samples_split(struct vt_samples *s, char **f)
{
	char *p = s->line;
	int n = 0;

	for (;;) {
		char *tab = strchr(p, '\t');

		if (n == SAMPLES_FIELDS)
			return vt_err_set("%s:%lu: more than %d fields", s->path, s->lineno,
					  SAMPLES_FIELDS);
		f[n++] = p;
		if (!tab)
			break;
		*tab = '\0';
		p = tab + 1;
	}
	if (n != SAMPLES_FIELDS)
		return vt_err_set("%s:%lu: %d fields, want %d", s->path, s->lineno, n,
				  SAMPLES_FIELDS);
	return 0;
}

int vt_samples_next(struct vt_samples *s, struct vt_sample *out)
{
	char *f[SAMPLES_FIELDS];
	uint64_t vcpu;
	const char *p;
	int r;

	if (s->failed)
		return -1;
	do {
		r = samples_getline(s);
		if (r <= 0) {
			s->failed = r < 0;
			return r;
		}
	} while (s->line[0] == '#');

	if (samples_split(s, f) < 0)
		goto bad;
	if (samples_parse_u64(f[0], 10, &out->time) || samples_parse_u64(f[1], 10, &out->error) ||
	    samples_parse_u64(f[2], 10, &out->mono_ns) || samples_parse_u64(f[3], 10, &vcpu) ||
	    vcpu > UINT32_MAX || samples_parse_u64(f[4], 16, &out->pc)) {
		vt_err_set("%s:%lu: bad number in a time/error/mono_ns/vcpu/pc field", s->path,
			   s->lineno);
		goto bad;
	}
	if (out->time < s->last_time) {
		vt_err_set("%s:%lu: time %llu goes back (previous %llu)", s->path, s->lineno,
			   (unsigned long long)out->time, (unsigned long long)s->last_time);
		goto bad;
	}
	if (!f[5][0] || f[5][0] == ';') {
		vt_err_set("%s:%lu: empty stack or empty outermost frame", s->path, s->lineno);
		goto bad;
	}
	s->last_time = out->time;
	out->vcpu = (uint32_t)vcpu;
	out->stack = f[5];
	out->depth = 1;
	out->leaf = f[5];
	for (p = f[5]; *p; p++) {
		if (*p != ';')
			continue;
		if (!p[1] || p[1] == ';') {
			vt_err_set("%s:%lu: empty frame in the stack", s->path, s->lineno);
			goto bad;
		}
		out->depth++;
		out->leaf = p + 1;
	}
	return 1;
bad:
	s->failed = 1;
	return -1;
}

void vt_samples_close(struct vt_samples *s)
{
	if (!s)
		return;
	if (s->fp)
		fclose(s->fp);
	free(s->line);
	free(s->path);
	free(s);
}
