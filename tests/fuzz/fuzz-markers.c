/*
 * fuzz-markers.c - libFuzzer target for lib/marker.c's reader and the
 * aligner's use of what it returns (markers.dat comes from guests:
 * untrusted).  The input is written to a file and read back; the valid
 * records are matched against host observations derived from the input
 * and a clock model is built and queried.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "align/align.h"
#include "marker.h"

#define FUZZ_HZ		2000000000ull

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[] = "/tmp/vt-fuzz-markers.XXXXXX";
	struct align_host_marker *h;
	struct vt_marker *recs = NULL;
	struct align_input in;
	struct align_model *m;
	size_t n = 0, bad = 0;
	uint64_t out;
	int fd = mkstemp(path);

	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		unlink(path);
		return 0;
	}
	close(fd);
	if (vt_marker_read(path, &recs, &n, &bad) < 0) {
		unlink(path);
		return 0;
	}
	unlink(path);
	h = calloc(n + 1, sizeof(*h));
	if (!h) {
		free(recs);
		return 0;
	}
	/* host instants inside (or, from the data, outside) each bracket */
	for (size_t i = 0; i < n; i++) {
		uint64_t w = recs[i].tsc_guest_after - recs[i].tsc_guest_before;

		h[i].tsc_host = recs[i].tsc_guest_before + (recs[i].seq & 1 ? w / 2 : w * 3);
		h[i].vcpu = (int32_t)(recs[i].cpu % 4) - 1;
		h[i].value = recs[i].value;
		h[i].has_value = recs[i].kind != VT_MARKER_CHARDEV;
	}
	memset(&in, 0, sizeof(in));
	in.host_hz = FUZZ_HZ;
	in.guest_markers = recs;
	in.n_guest_markers = n;
	in.host_markers = h;
	in.n_host_markers = n;
	in.fit_slope = size & 1;
	m = align_model_build(&in);
	if (m) {
		for (size_t i = 0; i < n; i++) {
			(void)align_guest_to_ns(m, ALIGN_VCPU_ANY, recs[i].tsc_guest_before, &out);
			(void)align_host_to_guest(m, 0, h[i].tsc_host, &out);
		}
		align_model_free(m);
	}
	free(h);
	free(recs);
	return 0;
}
