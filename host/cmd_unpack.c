/*
 * cmd_unpack.c - `vmtrace unpack STREAM -o DIR`: rebuild the directory a
 * guest streamed (lib/stream.c vt_stream_unpack), or list the frames with
 * --list.  Command main thread; the stream is untrusted input.
 */
#include <dirent.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "err.h"
#include "pystage.h"
#include "stream.h"
#include "cli.h"

static void usage(FILE *fp)
{
	fprintf(fp, "usage: vmtrace unpack [-q] STREAM -o DIR\n"
		"       vmtrace unpack --list STREAM\n"
		"  rebuild in DIR (new or empty) the files a guest sent with 'vmtrace stream'\n"
		"  -o, --output DIR  where to put the files\n"
		"  -l, --list        print one line per frame: stream offset, guest TSC, type,\n"
		"                    file, file offset, bytes (nothing written)\n"
		"  -q, --quiet       no summary line\n"
		"exit: 0 complete, 3 the stream stopped early (cut short, truncated or corrupt:\n"
		"everything before it is kept, the message names the offset), 1 failure\n");
}

static const char *const type_names[] = {
	[VT_STREAM_HELLO] = "HELLO", [VT_STREAM_DATA] = "DATA",
	[VT_STREAM_UNLINK] = "UNLINK", [VT_STREAM_END] = "END",
};

static int list_frame(void *arg, uint64_t pos, const struct vt_stream_frame *f)
{
	printf("%llu %llu %s %s %llu %u%s\n", (unsigned long long)pos,
	       (unsigned long long)f->tsc_guest, type_names[f->type], f->name[0] ? f->name : "-",
	       (unsigned long long)f->offset, f->len,
	       f->flags & VT_STREAM_F_RESET ? " reset" : "");
	return 0;
}

/* 1 if @dir exists and holds something, 0 if missing or empty. */
static int dir_busy(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int busy = 0;

	if (!d)
		return 0;
	while (!busy && (e = readdir(d)))
		busy = strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return busy;
}

/* `vmtrace unpack [-q] STREAM -o DIR` / `vmtrace unpack --list STREAM`. */
int cmd_unpack(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "list", no_argument, NULL, 'l' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct vt_stream_stats st;
	const char *out = NULL, *path;
	int list = 0, quiet = 0, c, rc;
	struct vt_uft_fin_stats fin = { 0 };

	while ((c = getopt_long(argc, argv, "o:lqh", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'l':
			list = 1;
			break;
		case 'q':
			quiet = 1;
			break;
		default:
			return vt_cli_usage(usage, c == 'h');
		}
	}
	if (optind + 1 != argc || (!list && !out) || (list && out))
		return vt_cli_usage(usage, 0);
	path = argv[optind];
	if (list) {
		if (access(path, R_OK) < 0) {
			vt_err_errno("%s: cannot read", path);
			vt_err_print("unpack");
			return VT_EXIT_FAIL;
		}
		rc = vt_stream_walk(path, list_frame, NULL);
		if (rc == 1)
			return VT_EXIT_OK;
		if (rc == 0)
			vt_err_set("%s: ends without an END frame (the sender was cut short)", path);
		vt_warn("%s", vt_err_msg());
		return VT_EXIT_PARTIAL;
	}
	if (dir_busy(out)) {
		fprintf(stderr, "vmtrace: unpack: %s exists and is not empty: give a new directory\n",
			out);
		return VT_EXIT_USAGE;
	}
	rc = vt_stream_unpack(path, out, &st);
	if (rc >= 0 && !st.frames) {
		/* not one good frame: not a stream; nothing is left behind */
		char why[512];

		snprintf(why, sizeof(why), "%s", vt_err_msg());
		rmdir(out);
		vt_err_set("%s", *why ? why : "not a vmtrace stream: no frame in it");
		rc = -1;
	}
	if (rc < 0) {
		vt_err_print("unpack");
		return VT_EXIT_FAIL;
	}
	if (rc > 0)
		vt_warn("%s", vt_err_msg());
	/* the Python tracer's stages (sent whole) into their .dat files, and
	 * what a tracer cut short left in TSC ticks finished: the rebuilt
	 * directory is uftrace data, complete or cut */
	if (vt_uft_finalize(out, 1, 0, &fin) < 0) {
		vt_warn("%s (that stage is kept)", vt_err_msg());
		rc = 1;
	}
	if (fin.unfinished)
		vt_warn("%u directories left in TSC ticks for uftrace (%s): vmtrace finalize "
			"--tsc-hz HZ DIR", fin.unfinished, fin.no_hz);
	if (!quiet)
		printf("%s: %llu frames, %llu files, %llu bytes -> %s%s; %u stage%s folded\n",
		       path, (unsigned long long)st.frames, (unsigned long long)st.files,
		       (unsigned long long)st.bytes, out, st.ended ? "" : " (incomplete)",
		       fin.folded, fin.folded == 1 ? "" : "s");
	return rc > 0 ? VT_EXIT_PARTIAL : VT_EXIT_OK;
}
