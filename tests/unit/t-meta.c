/*
 * t-meta.c - unit test of lib/meta.c: round trip, bad keys/values, and
 * hostile files (no header, duplicate keys, NUL bytes, long lines), any
 * value carried (newlines, backslashes: escaped on the line), a huge one
 * cut on a UTF-8 character boundary.  The edges: deletes, the table's
 * growth and its entry limit (lib/meta.c is included to fill it fast), a
 * printed line, paths too long, a NUL byte inside a line, a value past
 * the limit, a directory, a pipe.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "meta.c"	/* its table, for the entry limit */
#include "check.h"

static void write_file(const char *path, const char *data, size_t n)
{
	FILE *fp = fopen(path, "wb");

	CHECK(fp != NULL);
	CHECK(fwrite(data, 1, n, fp) == n);
	fclose(fp);
}

/* The entry limit: a table filled to VT_META_MAX_ENTRIES here (setting each
 * key through vt_meta_set looks every earlier one up: minutes) takes no new
 * key, and still a new value for a key it has. */
static void test_entry_limit(void)
{
	struct vt_meta *m = vt_meta_new();
	int ok = 1;

	CHECK(m != NULL);
	if (!m)
		return;
	m->ent = calloc(VT_META_MAX_ENTRIES, sizeof(*m->ent));
	m->cap = VT_META_MAX_ENTRIES;
	for (int i = 0; m->ent && i < VT_META_MAX_ENTRIES; i++, m->nr++) {
		char key[16];

		snprintf(key, sizeof(key), "k%d", i);
		m->ent[i].key = strdup(key);
		m->ent[i].val = strdup("1");
		ok &= m->ent[i].key && m->ent[i].val;
	}
	CHECK(ok && m->nr == VT_META_MAX_ENTRIES);
	CHECK(vt_meta_set(m, "one.more", "x") < 0);
	CHECK_STR(vt_err_msg(), "too many metadata entries (max 65536)");
	CHECK(vt_meta_set(m, "k65535", "2") == 0 && !strcmp(vt_meta_get(m, "k65535"), "2"));
	vt_meta_free(m);
}

/* What the files and accessors do at their edges, by message. */
static void test_edges(const char *tmp)
{
	char path[4200], want[4400], big[4200], *line;
	struct vt_meta *m = vt_meta_new(), *r;
	size_t n = VT_META_VAL_MAX + 40, len = 0;
	int fds[2];
	double d;
	FILE *fp;

	CHECK(m != NULL);
	if (!m)
		return;
	vt_meta_free(NULL);
	/* the table grows past its first 32 entries; deleting one keeps the rest */
	for (int i = 0; i < 40; i++) {
		char key[8];

		snprintf(key, sizeof(key), "k%02d", i);
		CHECK(vt_meta_set(m, "n", "%d", i) == 0 && vt_meta_set_u64(m, key, (uint64_t)i) == 0);
	}
	CHECK(vt_meta_count(m) == 41);
	vt_meta_del(m, "k01");
	vt_meta_del(m, "absent");
	CHECK(vt_meta_count(m) == 40 && !vt_meta_get(m, "k01"));
	CHECK_STR(vt_meta_get(m, "k02"), "2");
	CHECK_STR(vt_meta_get(m, "n"), "39");
	CHECK_STR(vt_meta_key(m, 1), "k00");
	CHECK_STR(vt_meta_val(m, 2), "2");
	CHECK(!vt_meta_key(m, -1) && !vt_meta_key(m, 40) && !vt_meta_val(m, -1) &&
	      !vt_meta_val(m, 40));
	/* a double: empty, not a number, a number */
	vt_meta_set(m, "e", "%s", "");
	vt_meta_set(m, "f", "1.5x");
	vt_meta_set(m, "g", "2.5e9");
	CHECK(vt_meta_get_double(m, "e", &d) < 0 && vt_meta_get_double(m, "f", &d) < 0);
	CHECK(vt_meta_get_double(m, "none", &d) < 0);
	CHECK(vt_meta_get_double(m, "g", &d) == 0 && d == 2.5e9);
	/* one line as `vmtrace meta` prints it: escaped as in the file */
	fp = open_memstream(&line, &len);
	CHECK(fp != NULL);
	if (fp) {
		vt_meta_print_line(fp, "cmd", "a\\b\nc\rd");
		fclose(fp);
		CHECK_STR(line, "cmd=a\\\\b\\nc\\rd\n");
		free(line);
	}
	/* a directory whose path leaves no room for the file's name (the message
	 * keeps the path's start and end) */
	memset(big, 'd', 4090);
	big[4090] = 0;
	CHECK(vt_meta_write_dir(m, big) < 0);
	CHECK(!strcmp(vt_err_msg() + strlen(vt_err_msg()) - 18, "ddd: path too long"));
	CHECK(vt_meta_read_dir(big) == NULL);
	CHECK(!strcmp(vt_err_msg() + strlen(vt_err_msg()) - 18, "ddd: path too long"));
	vt_meta_free(m);

	/* a NUL byte inside a line, and on a last line with no newline */
	snprintf(path, sizeof(path), "%s/m.meta", tmp);
	snprintf(want, sizeof(want), "%s:2: NUL byte in line", path);
	write_file(path, "# vmtrace-meta 1\na=1\0x\nb=2\n", 27);
	CHECK(vt_meta_read(path) == NULL);
	CHECK_STR(vt_err_msg(), want);
	write_file(path, "# vmtrace-meta 1\na=1\0x", 22);
	CHECK(vt_meta_read(path) == NULL);
	CHECK_STR(vt_err_msg(), want);
	/* a last line without its newline is whole */
	write_file(path, "# vmtrace-meta 1\na=1", 20);
	r = vt_meta_read(path);
	CHECK(r && vt_meta_count(r) == 1 && !strcmp(vt_meta_get(r, "a"), "1"));
	vt_meta_free(r);
	/* a value longer than the limit on a line that fits (escapes unmade) */
	line = malloc(n);
	CHECK(line != NULL);
	if (line) {
		memcpy(line, "# vmtrace-meta 1\nk=", 19);
		memset(line + 19, 'v', n - 20);
		line[n - 1] = '\n';
		write_file(path, line, n);
		free(line);
		snprintf(want, sizeof(want), "%s:2: value of 'k' longer than %d bytes", path,
			 VT_META_VAL_MAX - 1);
		CHECK(vt_meta_read(path) == NULL);
		CHECK_STR(vt_err_msg(), want);
	}
	/* a path that is no file to read: a directory */
	snprintf(want, sizeof(want), "%s: read error: Is a directory", tmp);
	CHECK(vt_meta_read(tmp) == NULL);
	CHECK_STR(vt_err_msg(), want);
	/* a pipe (no file offsets): read whole; a NUL inside a line found by
	 * where the line stops */
	for (int nul = 0; nul < 2; nul++) {
		CHECK(pipe(fds) == 0);
		CHECK(write(fds[1], nul ? "# vmtrace-meta 1\n\0a=1\n" : "# vmtrace-meta 1\na=1\n",
			    21 + nul) == 21 + nul);
		close(fds[1]);
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fds[0]);
		snprintf(want, sizeof(want), "%s:2: NUL byte in line", path);
		r = vt_meta_read(path);
		if (nul)
			CHECK(!r && !strcmp(vt_err_msg(), want));
		else
			CHECK(r && vt_meta_count(r) == 1 && !strcmp(vt_meta_get(r, "a"), "1"));
		vt_meta_free(r);
		close(fds[0]);
	}
}

int main(void)
{
	struct vt_meta *m = vt_meta_new(), *r;
	uint64_t u;
	int64_t s;
	char path[256];

	CHECK(m != NULL);
	CHECK(vt_meta_set(m, "clock", "tsc") == 0);
	CHECK(vt_meta_set_u64(m, "tsc.hz", 2096001000ULL) == 0);
	CHECK(vt_meta_set(m, "kvm.offset.0", "%lld", -123456789012LL) == 0);
	CHECK(vt_meta_set(m, "clock", "ns") == 0);	/* replace */
	CHECK(vt_meta_set(m, "bad key", "x") < 0);
	/* a command line is whatever the user typed */
	CHECK(vt_meta_set(m, "cmdline", "python3 -c import os\nprint(\"a\\\\nb\")\r\\") == 0);
	CHECK(vt_meta_count(m) == 4);

	snprintf(path, sizeof(path), "%s/m.meta", getenv("VT_TMP") ? getenv("VT_TMP") : "/tmp");
	CHECK(vt_meta_write(m, path) == 0);
	r = vt_meta_read(path);
	CHECK(r != NULL);
	CHECK_STR(vt_meta_get(r, "clock"), "ns");
	CHECK(vt_meta_get_u64(r, "tsc.hz", &u) == 0 && u == 2096001000ULL);
	CHECK(vt_meta_get_i64(r, "kvm.offset.0", &s) == 0 && s == -123456789012LL);
	CHECK(vt_meta_get_u64(r, "kvm.offset.0", &u) < 0);
	CHECK(vt_meta_get(r, "missing") == NULL);
	CHECK_STR(vt_meta_key(r, 0), "clock");
	CHECK_STR(vt_meta_get(r, "cmdline"), "python3 -c import os\nprint(\"a\\\\nb\")\r\\");
	vt_meta_free(r);
	{
		/* the file: one line per key, the value escaped */
		FILE *fp = fopen(path, "r");
		char buf[4096];
		size_t n = fread(buf, 1, sizeof(buf) - 1, fp);

		fclose(fp);
		buf[n] = 0;
		CHECK(strstr(buf, "cmdline=python3 -c import os\\nprint(\"a\\\\\\\\nb\")\\r\\\\\n") != NULL);
	}
	/* an old file's lone backslash stays */
	write_file(path, "# vmtrace-meta 1\np=C:\\dir\n", 26);
	r = vt_meta_read(path);
	CHECK(r && !strcmp(vt_meta_get(r, "p"), "C:\\dir"));
	vt_meta_free(r);
	{
		/* longer than the limit: cut on a character boundary, marked */
		size_t n = VT_META_VAL_MAX + 100;
		char *big = malloc(n + 1);

		for (size_t i = 0; i < n; i += 2)
			memcpy(big + i, "\xc3\xa9", 2);
		big[n] = 0;
		CHECK(vt_meta_set(m, "big", "%s", big) == 0);
		const char *v = vt_meta_get(m, "big");
		size_t vl = strlen(v);

		CHECK(vl < VT_META_VAL_MAX && !strcmp(v + vl - 3, "..."));
		CHECK((vl - 3) % 2 == 0);
		free(big);
	}

	write_file(path, "clock=tsc\n", 10);
	CHECK(vt_meta_read(path) == NULL);
	CHECK(strstr(vt_err_msg(), path) != NULL);
	write_file(path, "# vmtrace-meta 1\na=1\na=2\n", 25);
	CHECK(vt_meta_read(path) == NULL && strstr(vt_err_msg(), "duplicate"));
	write_file(path, "# vmtrace-meta 1\na=1\0x\n", 23);
	CHECK(vt_meta_read(path) == NULL);
	write_file(path, "", 0);
	CHECK(vt_meta_read(path) == NULL);
	{
		size_t n = 3 * VT_META_VAL_MAX;
		char *big = malloc(n);
		memset(big, 'x', n);
		memcpy(big, "# vmtrace-meta 1\nk=", 19);
		write_file(path, big, n);
		free(big);
		CHECK(vt_meta_read(path) == NULL && strstr(vt_err_msg(), "too long"));
	}
	CHECK(vt_meta_read("/nonexistent/vmtrace.meta") == NULL);
	CHECK(strstr(vt_err_msg(), "/nonexistent/vmtrace.meta") != NULL);
	vt_meta_free(m);
	/* vCPU threads: entries out of range skipped (tid, vcpu) or their pid
	 * dropped; no more than the caller's room */
	{
		struct vt_meta *k = vt_meta_new();
		struct vt_meta_vthread t[4];

		CHECK(k != NULL);
		vt_meta_set(k, VT_MK_KVM_VCPU_THREADS, "6");
		for (int i = 0; i < 6; i++) {
			static const char *const tid[] = { "10", "2147483648", "12", "13", "14", "15" };
			static const char *const vcpu[] = { "0", "1", "-1", "2147483648", "4", "5" };
			static const char *const pid[] = { "-1", "9", "9", "9", "2147483648", "9" };
			char key[VT_META_KEY_MAX];

			snprintf(key, sizeof(key), VT_MK_FMT_THREAD_TID, (unsigned long long)i);
			vt_meta_set(k, key, "%s", tid[i]);
			snprintf(key, sizeof(key), VT_MK_FMT_THREAD_VCPU, (unsigned long long)i);
			vt_meta_set(k, key, "%s", vcpu[i]);
			snprintf(key, sizeof(key), VT_MK_FMT_THREAD_PID, (unsigned long long)i);
			vt_meta_set(k, key, "%s", pid[i]);
		}
		CHECK(vt_meta_get_vthreads(k, t, 4) == 3);
		CHECK(t[0].tid == 10 && t[0].vcpu == 0 && t[0].pid == 0 && !strcmp(t[0].comm, ""));
		CHECK(t[1].tid == 14 && t[1].vcpu == 4 && t[1].pid == 0);
		CHECK(t[2].tid == 15 && t[2].vcpu == 5 && t[2].pid == 9);
		CHECK(vt_meta_get_vthreads(k, t, 2) == 2 && t[1].tid == 14);
		vt_meta_free(k);
	}
	test_edges(getenv("VT_TMP") ? getenv("VT_TMP") : "/tmp");
	test_entry_limit();
	return check_done();
}
