/*
 * fuzz-meta.c - libFuzzer target for lib/meta.c's reader (vmtrace.meta
 * files come from guests: untrusted).  The input is written to a file and
 * read back; every accessor is exercised on what parses.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "fuzz-util.h"
#include "meta.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[] = "/tmp/vt-fuzz-meta.XXXXXX";
	struct vt_meta *m;
	uint64_t u;
	int64_t s;
	double d;

	if (fuzz_write_temp(data, size, path) < 0)
		return 0;
	m = vt_meta_read(path);
	unlink(path);
	if (!m)
		return 0;
	for (int i = 0; i < vt_meta_count(m); i++) {
		const char *k = vt_meta_key(m, i);
		(void)vt_meta_get(m, k);
		(void)vt_meta_get_u64(m, k, &u);
		(void)vt_meta_get_i64(m, k, &s);
		(void)vt_meta_get_double(m, k, &d);
	}
	vt_meta_free(m);
	return 0;
}
