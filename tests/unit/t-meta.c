/*
 * t-meta.c - unit test of lib/meta.c: round trip, bad keys/values, and
 * hostile files (no header, duplicate keys, NUL bytes, long lines), any
 * value carried (newlines, backslashes: escaped on the line), a huge one
 * cut on a UTF-8 character boundary.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "err.h"
#include "meta.h"

static void write_file(const char *path, const char *data, size_t n)
{
	FILE *fp = fopen(path, "wb");

	CHECK(fp != NULL);
	CHECK(fwrite(data, 1, n, fp) == n);
	fclose(fp);
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
	write_file(path, "# vmtrace-meta 1\np=C:\\dir\n", 27);
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
	return check_done();
}
