/*
 * cmd_debugcon.c - `vmtrace debugcon -o DIR [--elf IMAGE] FILE`: turn what a
 * freestanding guest wrote to isa-debugcon (lib/debugcon.h frames: its
 * libvmtrace-mcount-free.a records and PIO markers) into a uftrace data
 * directory in the guest TSC clock, plus DIR/markers.dat.  Runs in the
 * vmtrace command's main thread; the capture is untrusted input.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli.h"
#include "debugcon.h"
#include "err.h"
#include "fileio.h"
#include "marker.h"
#include "meta.h"
#include "tsc.h"
#include "uftrace.h"

/* the guest is one task: pid = tid = 1 */
#define DC_TID		1
#define DC_MAX_CAPTURE	(1ULL << 30)
/* without --elf: one mapping from 0 covering the image (uftrace needs one) */
#define DC_MAP_BYTES	(1ULL << 30)

struct dc_state {
	const char *dir;
	int dat_fd;
	uint64_t nr_records;
	uint64_t bad_records;
	uint64_t first_tsc;
	uint64_t lost;
	struct vt_marker_writer *mw;
	uint64_t nr_markers;
	uint64_t bad_markers;
	int failed;
};

static void dc_usage(FILE *fp)
{
	fprintf(fp,
		"usage: vmtrace debugcon -o DIR [--elf IMAGE] [--tsc-hz HZ] [--force] FILE\n"
		"Decode FILE, the isa-debugcon output of a guest using\n"
		"libvmtrace-mcount-free.a (docs/format/unikernel.md), into the uftrace\n"
		"data directory DIR (TSC clock) and DIR/markers.dat.  IMAGE: the guest's\n"
		"ELF64 image (e.g. build/guest/unikernel64.elf), for symbols.  HZ: the\n"
		"guest TSC rate (default: this host's, right for TCG and for KVM\n"
		"without TSC scaling).\n");
}

/* Keep the records up to the first invalid one (untrusted). */
static int dc_records(struct dc_state *s, const uint8_t *p, size_t len)
{
	size_t nr = len / sizeof(struct vt_uft_record), ok = 0;
	char path[PATH_MAX];

	for (; ok < nr; ok++) {
		struct vt_uft_record r;

		memcpy(&r, p + ok * sizeof(r), sizeof(r));
		if (vt_uft_magic(r.bits) != VT_UFT_RECORD_MAGIC || vt_uft_more(r.bits))
			break;
		if (vt_uft_type(r.bits) == VT_UFT_LOST)
			s->lost += vt_uft_addr(r.bits);
		if (!s->nr_records && !ok)
			s->first_tsc = r.time;
	}
	s->bad_records += nr - ok + (len % sizeof(struct vt_uft_record) ? 1 : 0);
	if (s->dat_fd < 0) {
		if (vt_uft_dat_path(path, sizeof(path), s->dir, DC_TID) < 0)
			return vt_err_set("%s: path too long", s->dir);
		s->dat_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (s->dat_fd < 0)
			return vt_err_errno("%s: cannot create", path);
	}
	len = ok * sizeof(struct vt_uft_record);
	while (len) {
		ssize_t n = write(s->dat_fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return vt_err_errno("%s/%d.dat: write failed", s->dir, DC_TID);
		p += n;
		len -= (size_t)n;
	}
	s->nr_records += ok;
	return 0;
}

static int dc_markers(struct dc_state *s, const uint8_t *p, size_t len)
{
	size_t nr = len / VT_MARKER_REC_SIZE;

	if (!s->mw) {
		s->mw = vt_marker_writer_open(s->dir);
		if (!s->mw)
			return -1;
	}
	for (size_t i = 0; i < nr; i++) {
		struct vt_marker m;

		if (vt_marker_decode(p + i * VT_MARKER_REC_SIZE, &m) < 0) {
			s->bad_markers++;
			continue;
		}
		if (vt_marker_writer_add(s->mw, &m) < 0)
			return -1;
		s->nr_markers++;
	}
	s->bad_markers += len % VT_MARKER_REC_SIZE ? 1 : 0;
	return 0;
}

static int dc_frame(void *arg, unsigned type, const uint8_t *payload, size_t len)
{
	struct dc_state *s = arg;
	int rc = 0;

	if (type == VT_DC_RECORDS)
		rc = dc_records(s, payload, len);
	else if (type == VT_DC_MARKERS)
		rc = dc_markers(s, payload, len);
	if (rc < 0) {
		s->failed = 1;
		return -1;
	}
	return 0;
}

/* info, task.txt, map, sym, meta of the decoded directory. */
static int dc_session(const struct dc_state *s, const char *elf, uint64_t tsc_hz)
{
	char sid[VT_UFT_SID_LEN + 1];
	const char *exename = elf ? elf : "unikernel";
	int tid = DC_TID;
	struct vt_uft_info info = {
		.exename = exename,
		.cmdline = exename,
		.exit_status = -1,
		.nr_tids = 1,
		.tids = &tid,
		.max_stack = VT_UFT_MAX_DEPTH,
	};
	struct vt_meta *m;
	int rc;

	vt_uft_sid_make(sid, DC_TID, s->first_tsc);
	if (vt_uft_task_session(s->dir, s->first_tsc, DC_TID, sid, exename) < 0 ||
	    vt_uft_task_thread(s->dir, s->first_tsc, DC_TID, DC_TID) < 0)
		return -1;
	if (elf) {
		if (vt_uft_write_map_elf(s->dir, sid, elf, 0) < 0 ||
		    vt_uft_write_syms_elf(s->dir, elf, 0) < 0)
			return -1;
	} else if (vt_uft_write_map_fixed(s->dir, sid, 0, DC_MAP_BYTES, exename) < 0) {
		return -1;
	}
	if (vt_uft_write_info(s->dir, &info) < 0)
		return -1;
	m = vt_meta_new();
	if (!m)
		return vt_err_set("out of memory");
	vt_meta_set(m, VT_MK_CLOCK, "tsc");
	vt_meta_set(m, VT_MK_DOMAIN, "guest");
	vt_meta_set(m, VT_MK_PRODUCER, "vmtrace debugcon");
	if (tsc_hz) {
		vt_meta_set_u64(m, VT_MK_TSC_HZ, tsc_hz);
		vt_meta_set(m, VT_MK_TSC_HZ_SOURCE, "option --tsc-hz");
	} else {
		/* QEMU's TCG and KVM (no TSC scaling) give the guest the host's TSC rate */
		struct vt_tsc_freq f;

		if (vt_tsc_freq_opts(&f, VT_TSC_NO_CALIBRATE) == 0 || vt_tsc_freq(&f) == 0)
			vt_tsc_meta_set(m, &f);
	}
	vt_meta_set_u64(m, VT_MK_MCOUNT_LOST, s->lost);
	vt_meta_set_u64(m, VT_MK_MARKERS, s->nr_markers);
	rc = vt_meta_write_dir(m, s->dir);
	vt_meta_free(m);
	/* uftrace reads ns: ns copies of the .dat, the TSC stamps beside */
	if (rc == 0 && vt_uft_finish_ns(s->dir, 0) != VT_UFT_FIN_DONE)
		vt_warn("%s: not made readable by uftrace (%s); vmtrace finalize --tsc-hz HZ %s",
			s->dir, vt_err_msg(), s->dir);
	return rc;
}

/* `vmtrace debugcon -o DIR [--elf IMAGE] [--tsc-hz HZ] FILE`: exit 0, 2
 * usage, 1 unreadable input, 3 when records or markers were bad (lib/err.h). */
int cmd_debugcon(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "elf", required_argument, NULL, 'e' },
		{ "tsc-hz", required_argument, NULL, 't' },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct dc_state s = { .dat_fd = -1 };
	const char *elf = NULL;
	uint64_t tsc_hz = 0;
	int force = 0, c, rc, exit_code = VT_EXIT_OK;
	uint8_t *buf;
	size_t len = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:e:t:fh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			s.dir = optarg;
			break;
		case 'e':
			elf = optarg;
			break;
		case 't':
			if (vt_cli_tsc_hz(optarg, &tsc_hz))
				return VT_EXIT_USAGE;
			break;
		case 'f':
			force = 1;
			break;
		default:
			return vt_cli_usage(dc_usage, c == 'h');
		}
	}
	if (!s.dir || optind != argc - 1)
		return vt_cli_usage(dc_usage, 0);
	buf = (uint8_t *)vt_file_read_all(argv[optind], DC_MAX_CAPTURE, &len);
	if (!buf) {
		vt_err_print("debugcon");
		return VT_EXIT_FAIL;
	}
	if (vt_uft_dir_create(s.dir, force) < 0) {
		free(buf);
		vt_err_print("debugcon");
		return VT_EXIT_FAIL;
	}
	rc = vt_dc_parse(argv[optind], buf, len, dc_frame, &s);
	free(buf);
	if (s.dat_fd >= 0)
		close(s.dat_fd);
	if (s.mw && vt_marker_writer_close(s.mw) < 0 && rc >= 0)
		rc = -1;
	if (rc < 0 && s.failed) {
		vt_err_print("debugcon");
		return VT_EXIT_FAIL;
	}
	if (rc < 0) {
		vt_warn("%s", vt_err_msg());
		exit_code = VT_EXIT_PARTIAL;
	} else if (rc == 0) {
		vt_warn("%s: no end frame: the guest stopped early (kept every complete frame)",
			argv[optind]);
		exit_code = VT_EXIT_PARTIAL;
	}
	if (s.bad_records || s.bad_markers) {
		vt_warn("%s: dropped %llu invalid records, %llu invalid markers", argv[optind],
			(unsigned long long)s.bad_records, (unsigned long long)s.bad_markers);
		exit_code = VT_EXIT_PARTIAL;
	}
	if (dc_session(&s, elf, tsc_hz) < 0) {
		vt_err_print("debugcon");
		return VT_EXIT_FAIL;
	}
	printf("%s: %llu records (%llu lost in the guest), %llu markers\n", s.dir,
	       (unsigned long long)s.nr_records, (unsigned long long)s.lost,
	       (unsigned long long)s.nr_markers);
	return exit_code;
}
