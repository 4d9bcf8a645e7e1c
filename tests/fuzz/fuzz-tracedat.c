/*
 * fuzz-tracedat.c - libFuzzer target for lib/tracedat_read.c, our code
 * around libtracecmd/libtraceevent (trace.dat files from `vmtrace record
 * --guest` come from guests: untrusted).  The input is written as a file,
 * opened, every event of every CPU read in time order and its fields,
 * strings, text and command name fetched.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "fuzz-util.h"
#include "tracedat.h"

#define FUZZ_TEXT_LEN	256
#define FUZZ_MAX_EVENTS	4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[] = "/tmp/vt-fuzz-tracedat.XXXXXX";
	char buf[FUZZ_TEXT_LEN];
	struct vt_td_reader *r;
	struct vt_td_event ev;
	uint64_t v;

	if (fuzz_write_temp(data, size, path) < 0)
		return 0;
	r = vt_td_read_open(path);
	unlink(path);
	if (!r)
		return 0;
	(void)vt_td_read_truncated(r);
	(void)vt_td_read_warning(r);
	(void)vt_td_clock_is_ns(vt_td_read_clock(r));
	for (int n = 0; n < FUZZ_MAX_EVENTS && vt_td_read_next_any(r, &ev) == 1; n++) {
		for (int i = 0; i < vt_td_nr_fields(&ev); i++) {
			const char *name = vt_td_field_name(&ev, i);

			if (vt_td_field_is_num(&ev, i))
				(void)vt_td_field_u64(&ev, name, &v);
			else
				(void)vt_td_field_str(&ev, name, buf, sizeof(buf));
		}
		(void)vt_td_event_info(r, &ev, buf, sizeof(buf));
		(void)vt_td_read_comm(r, ev.pid);
	}
	for (int cpu = 0; cpu < vt_td_read_nr_cpus(r); cpu++)
		for (int n = 0; n < FUZZ_MAX_EVENTS && vt_td_read_next(r, cpu, &ev) == 1; n++)
			(void)vt_td_field_u64(&ev, "common_pid", &v);
	vt_td_read_close(r);
	return 0;
}
