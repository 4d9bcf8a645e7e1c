/*
 * tracedat_unzip.c - compressed trace.dat v7 files (trace-cmd 3.x with
 * --compression, zlib or zstd) made readable for lib/tracedat.h's reader:
 * the file is rewritten, uncompressed, into a temporary v7 file that
 * libtracecmd reads whatever compression it was built with (Debian's
 * 3.1.6 has zstd only).  For host-side tools reading trace-cmd's files.
 *
 * The copy keeps every section in file order; each compressed section is
 * written with its data inflated (flag cleared, size updated), each CPU's
 * chunks as one page-aligned run of pages, and every offset an option
 * holds (the options chain, the metadata sections, BUFFER's section and
 * CPU table) is moved to the new layout.  Options that point into
 * sections vmtrace does not copy (BTF, modules: trace-cmd 3.3+) are left
 * out.  A chunk that does not inflate becomes zero (empty) pages and is
 * counted: the rest of the recording stays readable.
 *
 * Everything is read through the bounded header cursor (tracedat_check.h):
 * a guest's file is untrusted input.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#include "compiler.h"
#include "err.h"
#include "tracedat_check.h"
#include "grow.h"

#define UZ_MAX_REGIONS	4096
#define UZ_MAX_CPUS	HDR_MAX_CPUS
#define UZ_SECTION_MAX	(256U << 20)	/* an inflated metadata section */
#define UZ_HEAD_LEN	(HDR_MAGIC_LEN + 2 + 1 + 1 + 4)	/* up to the algorithm */
#define UZ_OPT_HDR	6	/* u16 id, u32 size */
#define UZ_OPT_BTF	23	/* trace-cmd 3.3+: point at sections not copied */
#define UZ_OPT_MODULES	25
#define UZ_OPT_BUFFER_TEXT 22
#define UZ_CPU_ENTRY	(sizeof(uint32_t) + 2 * sizeof(uint64_t))	/* BUFFER's CPU table */

enum uz_algo { UZ_ZLIB, UZ_ZSTD };

enum uz_kind { UZ_OPTIONS, UZ_META, UZ_FLY };

struct uz_cpu {
	uint64_t off, size;		/* old: chunk stream (u32 count + chunks) */
	uint64_t new_off, new_size;	/* inflated pages */
};

/* One section of the file, old place and new. */
struct uz_region {
	enum uz_kind kind;
	uint16_t id, flags;
	uint32_t strid;
	uint64_t off;			/* old offset of its section header */
	uint64_t new_off;
	uint64_t new_len;		/* section header + content */
	uint8_t *data;			/* OPTIONS/META: the inflated content */
	uint64_t dlen;
	int nr_cpus;			/* FLY: the CPU table of its BUFFER option */
	struct uz_cpu *cpus;
};

struct uz {
	const char *path;		/* for messages */
	struct hdr_cur c;
	enum uz_algo algo;
	int nr;
	struct uz_region *reg;
	uint64_t bad_chunks, nr_chunks;
	char *chunk;			/* compressed chunk buffer */
	uint32_t chunk_cap;
	int msg_set;			/* a message more precise than "corrupt" */
};

static int uz_inflate(struct uz *u, const void *in, uint32_t zs, void *out, uint32_t us)
{
	if (u->algo == UZ_ZLIB) {
		uLongf got = us;

		return uncompress(out, &got, in, zs) == Z_OK && got == us ? 0 : -1;
	}
	size_t got = ZSTD_decompress(out, us, in, zs);

	return !ZSTD_isError(got) && got == us ? 0 : -1;
}

/* @n bytes at the cursor into a new buffer. */
static uint8_t *uz_take(struct uz *u, uint64_t n)
{
	uint8_t *d = malloc(n ? n : 1);

	if (d && tdh_read(&u->c, d, n)) {
		free(d);
		return NULL;
	}
	return d;
}

static struct uz_region *uz_find(struct uz *u, uint64_t off)
{
	for (int i = 0; i < u->nr; i++)
		if (u->reg[i].off == off)
			return &u->reg[i];
	return NULL;
}

static struct uz_region *uz_add(struct uz *u, enum uz_kind kind, uint64_t off)
{
	struct uz_region *r = uz_find(u, off);

	if (r)
		return r->kind == kind ? r : NULL;
	if (u->nr >= UZ_MAX_REGIONS || off >= u->c.size)
		return NULL;
	r = &u->reg[u->nr++];
	memset(r, 0, sizeof(*r));
	r->kind = kind;
	r->off = off;
	return r;
}

/* The section header at r->off and its content, inflated if compressed,
 * into r->data (OPTIONS and META regions). */
static int uz_section(struct uz *u, struct uz_region *r)
{
	uint64_t size;
	uint32_t zs, us;
	uint8_t *z;

	u->c.off = r->off;
	u->c.end = u->c.size;
	if (tdh_u16(&u->c, &r->id) || tdh_u16(&u->c, &r->flags) || tdh_u32(&u->c, &r->strid) ||
	    tdh_u64(&u->c, &size) || size > u->c.size - u->c.off)
		return -1;
	u->c.end = u->c.off + size;
	if (!(r->flags & HDR_SEC_COMPRESSED)) {
		if (size > UZ_SECTION_MAX || !(r->data = uz_take(u, size)))
			return -1;
		r->dlen = size;
		return 0;
	}
	if (tdh_u32(&u->c, &zs) || tdh_u32(&u->c, &us) || us > UZ_SECTION_MAX ||
	    !tdh_zsize_ok(zs, us) || !(z = uz_take(u, zs)))
		return -1;
	r->data = malloc(us ? us : 1);
	if (!r->data || uz_inflate(u, z, zs, r->data, us)) {
		free(z);
		u->msg_set = 1;
		return vt_err_set("%s: compressed section %u at offset %llu does not inflate "
				  "(%s)", u->path, r->id, (unsigned long long)r->off,
				  u->c.zname);
	}
	free(z);
	r->dlen = us;
	return 0;
}

static void put16(uint8_t *p, uint16_t v, int swap)
{
	v = swap ? __builtin_bswap16(v) : v;
	memcpy(p, &v, sizeof(v));
}

static void put32(uint8_t *p, uint32_t v, int swap)
{
	v = swap ? __builtin_bswap32(v) : v;
	memcpy(p, &v, sizeof(v));
}

static void put64(uint8_t *p, uint64_t v, int swap)
{
	v = swap ? __builtin_bswap64(v) : v;
	memcpy(p, &v, sizeof(v));
}

/* The inflated size of one CPU's chunk stream (its chunk headers). */
static int uz_cpu_size(struct uz *u, struct uz_cpu *cpu)
{
	uint32_t count, zs, us;

	cpu->new_size = 0;
	if (!cpu->size)
		return 0;
	u->c.off = cpu->off;
	u->c.end = u->c.size;
	if (cpu->off > u->c.size || cpu->size > u->c.size - cpu->off ||
	    u->c.size - cpu->off - cpu->size < sizeof(count))
		return -1;
	u->c.end = cpu->off + sizeof(count) + cpu->size;
	if (tdh_u32(&u->c, &count) || count > cpu->size / HDR_ZHDR)
		return -1;
	for (uint32_t i = 0; i < count; i++) {
		/* pages inflated from zs bytes: no more than the best ratio
		 * allows, so a few bytes of file never become gigabytes */
		if (tdh_u32(&u->c, &zs) || tdh_u32(&u->c, &us) || !tdh_zsize_ok(zs, us) ||
		    (uint64_t)us > (uint64_t)zs * HDR_ZRATIO_MAX + u->c.page || tdh_skip(&u->c, zs))
			return -1;
		cpu->new_size += us;
	}
	return 0;
}

/* A BUFFER option's data (@d, @n >= 8 bytes): its flyrecord region and
 * CPUs. */
static int uz_buffer(struct uz *u, const uint8_t *d, uint32_t n)
{
	int swap = u->c.swap;
	struct uz_region *r;
	uint32_t pos = sizeof(uint64_t), cpus;
	const uint8_t *z;

	for (int s = 0; s < 2; s++) {	/* instance name, clock */
		if (!(z = memchr(d + pos, 0, n - pos)))
			return -1;
		pos = (uint32_t)(z - d) + 1;
	}
	if (n - pos < 2 * sizeof(uint32_t))
		return -1;
	cpus = tdh_get32(d + pos + sizeof(uint32_t), swap);
	pos += 2 * sizeof(uint32_t);
	if (cpus > UZ_MAX_CPUS || cpus > (n - pos) / UZ_CPU_ENTRY)
		return -1;
	r = uz_add(u, UZ_FLY, tdh_get64(d, swap));
	if (!r || r->cpus)
		return -1;	/* two instances in one section: not trace-cmd's */
	r->nr_cpus = (int)cpus;
	r->cpus = calloc(cpus ? cpus : 1, sizeof(*r->cpus));
	if (!r->cpus)
		return -1;
	for (uint32_t i = 0; i < cpus; i++) {
		const uint8_t *e = d + pos + i * UZ_CPU_ENTRY;

		r->cpus[i].off = tdh_get64(e + sizeof(uint32_t), swap);
		r->cpus[i].size = tdh_get64(e + sizeof(uint32_t) + sizeof(uint64_t), swap);
		if (uz_cpu_size(u, &r->cpus[i]))
			return -1;
	}
	return 0;
}

/* One options section at @off: read, its sections registered, options
 * vmtrace does not copy dropped.  *next gets the chain's next offset. */
static int uz_options(struct uz *u, uint64_t off, uint64_t *next)
{
	struct uz_region *r = uz_add(u, UZ_OPTIONS, off);
	uint32_t pos = 0, keep = 0;
	int swap = u->c.swap;

	*next = 0;
	if (!r || r->data || uz_section(u, r))
		return -1;
	while (pos < r->dlen) {
		uint16_t id;
		uint32_t n;

		if (r->dlen - pos < UZ_OPT_HDR)
			return -1;
		id = tdh_get16(r->data + pos, swap);
		n = tdh_get32(r->data + pos + sizeof(id), swap);
		if (n > r->dlen - pos - UZ_OPT_HDR)
			return -1;
		const uint8_t *d = r->data + pos + UZ_OPT_HDR;

		if (id == HDR_OPT_DONE) {
			if (n < sizeof(uint64_t))
				return -1;
			*next = tdh_get64(d, swap);
		} else if ((id >= HDR_OPT_HEADER_INFO && id <= UZ_OPT_BUFFER_TEXT) ||
			   id == HDR_OPT_BUFFER) {
			if (n < sizeof(uint64_t))
				return -1;
			if (id == HDR_OPT_BUFFER ? uz_buffer(u, d, n)
						 : !uz_add(u, UZ_META, tdh_get64(d, swap)))
				return -1;
		}
		if (id != UZ_OPT_BTF && id != UZ_OPT_MODULES) {
			memmove(r->data + keep, r->data + pos, UZ_OPT_HDR + n);
			keep += UZ_OPT_HDR + n;
		}
		pos += UZ_OPT_HDR + n;
		if (id == HDR_OPT_DONE)
			break;
	}
	r->dlen = keep;
	return 0;
}

static int uz_cmp(const void *a, const void *b)
{
	const struct uz_region *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

static uint64_t page_up(uint64_t v, uint32_t page)
{
	return (v + page - 1) / page * page;
}

/* Read the whole structure; lay the copy out; the copy's size.  The
 * options chain ends: each section is read once (uz_options) and takes a
 * region (at most UZ_MAX_REGIONS). */
static int uz_plan(struct uz *u, uint64_t first, uint64_t head_len, uint64_t *total)
{
	uint64_t next = first, pos = head_len;

	while (next)
		if (uz_options(u, next, &next))
			return -1;
	for (int i = 0; i < u->nr; i++)
		if (u->reg[i].kind == UZ_META && uz_section(u, &u->reg[i]))
			return -1;
		else if (u->reg[i].kind == UZ_FLY) {
			struct uz_region *r = &u->reg[i];
			uint64_t size;

			u->c.off = r->off;
			u->c.end = u->c.size;
			if (tdh_u16(&u->c, &r->id) || tdh_u16(&u->c, &r->flags) ||
			    tdh_u32(&u->c, &r->strid) || tdh_u64(&u->c, &size))
				return -1;
		}
	vt_sort(u->reg, u->nr, sizeof(*u->reg), uz_cmp);
	for (int i = 0; i < u->nr; i++) {
		struct uz_region *r = &u->reg[i];

		r->new_off = pos;
		pos += HDR_SEC_HDR;
		if (r->kind != UZ_FLY) {
			pos += r->dlen;
		} else {
			for (int k = 0; k < r->nr_cpus; k++) {
				pos = page_up(pos, u->c.page);
				r->cpus[k].new_off = pos;
				pos += r->cpus[k].new_size;
			}
		}
		r->new_len = pos - r->new_off;
	}
	*total = pos;
	return 0;
}

/* The new offset of the section that was at @off (0 stays 0). */
static int uz_move(struct uz *u, uint8_t *p)
{
	uint64_t off = tdh_get64(p, u->c.swap);
	struct uz_region *r;

	if (!off)
		return 0;
	if (!(r = uz_find(u, off)))
		return -1;
	put64(p, r->new_off, u->c.swap);
	return 0;
}

/* An options region's offsets moved to the new layout. */
static int uz_patch(struct uz *u, struct uz_region *r)
{
	int swap = u->c.swap;

	for (uint32_t pos = 0; pos < r->dlen;) {
		uint16_t id = tdh_get16(r->data + pos, swap);
		uint32_t n = tdh_get32(r->data + pos + sizeof(id), swap);
		uint8_t *d = r->data + pos + UZ_OPT_HDR;
		struct uz_region *f = id == HDR_OPT_BUFFER ? uz_find(u, tdh_get64(d, swap)) : NULL;

		if ((id == HDR_OPT_DONE || id == HDR_OPT_BUFFER ||
		     (id >= HDR_OPT_HEADER_INFO && id <= UZ_OPT_BUFFER_TEXT)) && uz_move(u, d))
			return -1;
		if (id == HDR_OPT_BUFFER) {
			uint8_t *e = d + sizeof(uint64_t);

			for (int s = 0; s < 2; s++)
				e = (uint8_t *)memchr(e, 0, n) + 1;
			e += 2 * sizeof(uint32_t);
			for (int k = 0; f && k < f->nr_cpus; k++, e += UZ_CPU_ENTRY) {
				put64(e + sizeof(uint32_t), f->cpus[k].new_off, swap);
				put64(e + sizeof(uint32_t) + sizeof(uint64_t), f->cpus[k].new_size,
				      swap);
			}
		}
		pos += UZ_OPT_HDR + n;
	}
	return 0;
}

static int uz_write(FILE *f, const void *p, size_t n)
{
	return n && fwrite(p, 1, n, f) != n ? -1 : 0;
}

static int uz_pad(FILE *f, uint64_t to)
{
	static const uint8_t zero[4096];
	long at = ftell(f);

	if (at < 0)
		return -1;
	for (uint64_t have = (uint64_t)at; have < to;) {
		size_t n = to - have < sizeof(zero) ? to - have : sizeof(zero);

		if (uz_write(f, zero, n))
			return -1;
		have += n;
	}
	return 0;
}

static int uz_sec_hdr(struct uz *u, FILE *f, const struct uz_region *r)
{
	uint8_t h[HDR_SEC_HDR];

	put16(h, r->id, u->c.swap);
	put16(h + 2, r->flags & ~HDR_SEC_COMPRESSED, u->c.swap);
	put32(h + 4, r->strid, u->c.swap);
	put64(h + 8, r->new_len - HDR_SEC_HDR, u->c.swap);
	return uz_write(f, h, sizeof(h));
}

/* One CPU's chunks inflated into @f; a chunk that fails becomes zeros. */
static int uz_cpu_copy(struct uz *u, FILE *f, const struct uz_cpu *cpu, uint8_t **out,
		       uint32_t *out_cap)
{
	uint32_t count, zs, us;

	if (!cpu->size)
		return 0;
	u->c.off = cpu->off;
	u->c.end = cpu->off + sizeof(count) + cpu->size;
	if (tdh_u32(&u->c, &count))
		return -1;
	for (uint32_t i = 0; i < count; i++) {
		if (tdh_u32(&u->c, &zs) || tdh_u32(&u->c, &us))
			return -1;
		if (zs > u->chunk_cap) {
			free(u->chunk);
			if (!(u->chunk = malloc(zs)))
				return -1;
			u->chunk_cap = zs;
		}
		if (us > *out_cap) {
			free(*out);
			if (!(*out = malloc(us)))
				return -1;
			*out_cap = us;
		}
		if (tdh_read(&u->c, u->chunk, zs))
			return -1;
		u->nr_chunks++;
		if (unlikely(uz_inflate(u, u->chunk, zs, *out, us))) {
			memset(*out, 0, us);	/* empty pages: the others stay */
			u->bad_chunks++;
		}
		if (uz_write(f, *out, us))
			return -1;
	}
	return 0;
}

/* The copy: @head (@head_len bytes, its last 8 the first options
 * offset), then the regions end to end, as uz_plan laid them out. */
static int uz_emit(struct uz *u, FILE *f, uint8_t *head, uint64_t head_len, uint64_t first)
{
	uint8_t *out = NULL;
	uint32_t out_cap = 0;
	struct uz_region *fr = uz_find(u, first);
	int ret = -1;

	put64(head + head_len - sizeof(uint64_t), fr ? fr->new_off : 0, u->c.swap);
	if (fwrite(head, 1, head_len, f) != head_len)
		return -1;
	for (int i = 0; i < u->nr; i++) {
		struct uz_region *r = &u->reg[i];

		if (uz_sec_hdr(u, f, r))
			goto out;
		if (r->kind != UZ_FLY) {
			if (uz_write(f, r->data, r->dlen))
				goto out;
			continue;
		}
		for (int k = 0; k < r->nr_cpus; k++)
			if (uz_pad(f, r->cpus[k].new_off) ||
			    uz_cpu_copy(u, f, &r->cpus[k], &out, &out_cap))
				goto out;
	}
	ret = 0;
out:
	free(out);
	return ret;
}

/* The initial header of the copy: the same up to the algorithm, "none". */
static int uz_head(struct uz *u, uint8_t *head, uint64_t *len, uint64_t *first)
{
	char name[HDR_STR_MAX];
	uint64_t n = UZ_HEAD_LEN;

	u->c.off = 0;
	u->c.end = u->c.size;
	if (tdh_read(&u->c, head, UZ_HEAD_LEN) || tdh_str(&u->c, name) || tdh_str(&u->c, NULL) ||
	    tdh_u64(&u->c, first))
		return -1;
	memcpy(head + n, "none", 5);
	n += 5;
	head[n++] = 0;		/* no version */
	*len = n + sizeof(uint64_t);
	return 0;
}

int tdh_unzip(const char *path, const struct hdr_cur *h, char *tmp, size_t tmplen,
	      uint64_t *bad_chunks, uint64_t *nr_chunks)
{
	const char *tmpdir = getenv("TMPDIR");
	const char *dir = tmpdir && *tmpdir ? tmpdir : "/tmp";
	uint8_t head[UZ_HEAD_LEN + 8 + sizeof(uint64_t)];
	uint64_t head_len, first, total;
	struct statvfs sv;
	struct uz u;
	FILE *f = NULL;
	int fd = -1, dst = -1, made = 0, ret = -1;

	memset(&u, 0, sizeof(u));
	u.path = path;
	*bad_chunks = *nr_chunks = 0;
	if (!strcmp(h->zname, "zlib"))
		u.algo = UZ_ZLIB;
	else if (!strcmp(h->zname, "zstd"))
		u.algo = UZ_ZSTD;
	else
		return vt_err_set("%s: compressed with '%.32s', which vmtrace cannot read (it reads "
				  "zlib and zstd, the algorithms trace-cmd writes)", path, h->zname);
	snprintf(tmp, tmplen, "%s/vmtrace-unzip.XXXXXX", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	u.reg = calloc(UZ_MAX_REGIONS, sizeof(*u.reg));
	if (fd < 0 || !u.reg) {
		vt_err_errno("%s: cannot open", path);
		goto out;
	}
	u.c = *h;
	u.c.fd = fd;
	if (uz_head(&u, head, &head_len, &first) || uz_plan(&u, first, head_len, &total)) {
		if (!u.msg_set)
			vt_err_set("%s: corrupt compressed trace.dat: the size, count or offset at "
				   "offset %llu does not fit in the file (%llu bytes)", path,
				   (unsigned long long)u.c.field, (unsigned long long)u.c.size);
		goto out;
	}
	for (int i = 0; i < u.nr; i++)
		if (u.reg[i].kind == UZ_OPTIONS && uz_patch(&u, &u.reg[i])) {
			vt_err_set("%s: corrupt compressed trace.dat: an option points at offset "
				   "that holds no section", path);
			goto out;
		}
	/* a failed mkstemp leaves a name it tried in @tmp: not ours */
	dst = mkstemp(tmp);
	if (dst < 0) {
		vt_err_errno("%s: compressed; no room for its uncompressed copy in %s", path, dir);
		goto out;
	}
	made = 1;
	if (!fstatvfs(dst, &sv) && (uint64_t)sv.f_bavail * sv.f_frsize < total) {
		vt_err_set("%s: compressed; its uncompressed copy needs %llu MB, %s has %llu MB "
			   "free (set TMPDIR to a larger file system)", path,
			   (unsigned long long)(total >> 20), tmp,
			   (unsigned long long)(((uint64_t)sv.f_bavail * sv.f_frsize) >> 20));
		goto out;
	}
	f = fdopen(dst, "w");
	if (!f) {
		vt_err_errno("%s: cannot write its uncompressed copy %s", path, tmp);
		goto out;
	}
	dst = -1;
	if (uz_emit(&u, f, head, head_len, first) || fflush(f)) {
		vt_err_errno("%s: writing its uncompressed copy %s failed", path, tmp);
		goto out;
	}
	*bad_chunks = u.bad_chunks;
	*nr_chunks = u.nr_chunks;
	ret = 0;
out:
	if (f && fclose(f) && !ret)
		ret = vt_err_errno("%s: writing its uncompressed copy %s failed", path, tmp);
	if (dst >= 0)
		close(dst);
	if (ret && made)
		unlink(tmp);
	if (fd >= 0)
		close(fd);
	for (int i = 0; i < u.nr; i++) {
		free(u.reg[i].data);
		free(u.reg[i].cpus);
	}
	free(u.reg);
	free(u.chunk);
	return ret;
}
