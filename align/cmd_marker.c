/*
 * cmd_marker.c - `vmtrace marker`, run inside a Linux guest: emits sync
 * markers (a PIO write of the marker value to a port, one byte to an
 * isa-debugcon port under TCG, or an in-band hypercall whose registers
 * carry the TSC readings to the host's trace) between two ordered TSC
 * reads, and appends their records to DIR/markers.dat.  Main thread of the
 * command; blocks.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/io.h>
#include <sys/stat.h>
#include <time.h>
#include "cli.h"
#include "err.h"
#include "marker.h"

#define MARKER_DEF_INTERVAL_MS	100
#define MARKER_DEFAULT_DIR	"vmtrace-markers"	/* docs/cli.md, Default output */
#define MARKER_MAX_COUNT	1000000
#define MS_PER_S		1000
#define MARKER_MAX_INTERVAL_MS	(3600 * MS_PER_S)	/* an hour */
#define MARKER_MAX_PORT		0xffff
#define NS_PER_MS		1000000L
#define MARKER_PATH_MAX		4096

static volatile sig_atomic_t marker_stop;

static void on_signal(int sig)
{
	(void)sig;
	marker_stop = 1;
}

static void usage(FILE *fp)
{
	fprintf(fp,
		"usage: vmtrace marker [-n N] [--interval MS] [--port P] [--chardev|--hypercall] [-o DIR]\n"
		"  Emit N guest<->host sync markers (default 1), MS milliseconds apart\n"
		"  (default %d; a bare number of ms, or with a unit: 1s), and append\n"
		"  them to DIR/markers.dat (default DIR: vmtrace-markers).  PIO and\n"
		"  chardev markers need root (ioperm).\n"
		"  --port P     PIO marker port (default 0x%x; with --chardev 0x%x)\n"
		"  --chardev    one-byte writes to an isa-debugcon port (TCG: the host sees\n"
		"               QEMU write them to the chardev)\n"
		"  --hypercall  in-band markers under KVM (vmcall/vmmcall): the host's\n"
		"               kvm_hypercall events carry the readings, so the host trace\n"
		"               alone proves the alignment; any user, no ioperm\n",
		MARKER_DEF_INTERVAL_MS,
		VT_MARKER_PORT, VT_MARKER_DEBUGCON_PORT);
}

/* seq to continue from: one past the last record of an existing file */
static int next_seq(const char *dir, uint64_t *seq)
{
	char path[MARKER_PATH_MAX];
	struct vt_marker *recs;
	size_t n, bad;
	struct stat st;

	*seq = 0;
	snprintf(path, sizeof(path), "%s/%s", dir, VT_MARKER_FILE);
	if (stat(path, &st) < 0)
		return 0;
	if (vt_marker_read(path, &recs, &n, &bad) < 0)
		return -1;
	if (n)
		*seq = recs[n - 1].seq + 1;
	free(recs);
	if (bad)
		vt_warn("%s: %zu bad records kept as they are; appending after them", path, bad);
	return 0;
}

/* `vmtrace marker [-n N] [--interval MS] [--port P] [--chardev] -o DIR`:
 * emit N markers, appending them to DIR/markers.dat.  Exit 0, 1 on failure, 2 usage,
 * 4/5 when the port cannot be opened (lib/err.h). */
int cmd_marker(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "interval", required_argument, NULL, 'i' },
		{ "port", required_argument, NULL, 'p' },
		{ "chardev", no_argument, NULL, 'c' },
		{ "hypercall", no_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t count = 1, interval = MARKER_DEF_INTERVAL_MS, port = 0;
	struct vt_marker_writer *w;
	const char *dir = NULL;
	int chardev = 0, hypercall = 0, c, ret = VT_EXIT_OK;
	struct vt_marker_hc hc = { 0 };
	struct sigaction sa;
	uint64_t seq;

	optind = 1;
	while ((c = getopt_long(argc, argv, "n:o:h", lo, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (vt_parse_u64(optarg, 1, MARKER_MAX_COUNT, &count))
				vt_die(VT_EXIT_USAGE, "marker: bad count '%s' (1..%d)", optarg,
				       MARKER_MAX_COUNT);
			break;
		case 'i':
			if (vt_parse_ms(optarg, 1, 0, MARKER_MAX_INTERVAL_MS, &interval))
				vt_die(VT_EXIT_USAGE, "marker: bad interval '%s' (ms)", optarg);
			break;
		case 'p':
			if (vt_parse_u64(optarg, 0, MARKER_MAX_PORT, &port))
				vt_die(VT_EXIT_USAGE, "marker: bad port '%s'", optarg);
			break;
		case 'c':
			chardev = 1;
			break;
		case 'H':
			hypercall = 1;
			break;
		case 'o':
			dir = optarg;
			break;
		default:
			return vt_cli_usage(usage, c == 'h');
		}
	}
	if (optind != argc || (chardev && hypercall))
		return vt_cli_usage(usage, 0);
	if (!dir)
		dir = MARKER_DEFAULT_DIR;
	if (!port)
		port = chardev ? VT_MARKER_DEBUGCON_PORT : VT_MARKER_PORT;
	/* a PIO marker is an outl: four ports (ioperm would refuse the last
	 * three with EINVAL, which reads as "no port access") */
	if (!hypercall && !chardev && port > MARKER_MAX_PORT + 1 - sizeof(uint32_t))
		vt_die(VT_EXIT_USAGE, "marker: bad port 0x%" PRIx64 ": a PIO marker writes 4 ports "
		       "(0..0x%zx)", port, MARKER_MAX_PORT + 1 - sizeof(uint32_t));
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		vt_die(VT_EXIT_FAIL, "marker: %s: cannot create: %s", dir, strerror(errno));
	if (hypercall) {
		if (!vt_marker_hc_init(&hc))
			vt_die(VT_EXIT_UNSUPPORTED,
			       "marker: --hypercall: not running under KVM (CPUID has no KVM signature): a hypercall would fault");
	} else if (ioperm(port, chardev ? 1 : sizeof(uint32_t), 1) < 0)
		vt_die(errno == EPERM ? VT_EXIT_PERM : VT_EXIT_UNSUPPORTED,
		       "marker: ioperm(0x%" PRIx64 "): %s (%s)", port, strerror(errno),
		       geteuid() ? "port markers need root / CAP_SYS_RAWIO, x86; --hypercall needs neither" :
				   "no port access even as root: a confined guest or a kernel without ioperm; "
				   "under KVM, --hypercall is the way");
	if (next_seq(dir, &seq) < 0) {
		vt_err_print("marker");
		return VT_EXIT_FAIL;
	}
	w = vt_marker_writer_open(dir);
	if (!w) {
		vt_err_print("marker");
		return VT_EXIT_FAIL;
	}
	hc.seq = seq;
	hc.chain = (uint32_t)getpid();	/* apart from other emitters' calls */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	for (uint64_t i = 0; i < count && !marker_stop; i++, seq++) {
		struct vt_marker rec;
		int cpu0 = sched_getcpu(), cpu1;

		if (hypercall)
			vt_marker_emit_hypercall(&rec, &hc, cpu0 >= 0 ? (uint32_t)cpu0 : VT_MARKER_CPU_NONE);
		else if (chardev)
			vt_marker_emit_chardev(&rec, (uint16_t)port, seq);
		else
			vt_marker_emit_pio(&rec, (uint16_t)port, seq);
		cpu1 = sched_getcpu();
		rec.cpu = (cpu0 >= 0 && cpu0 == cpu1) ? (uint32_t)cpu0 : VT_MARKER_CPU_NONE;
		if (vt_marker_writer_add(w, &rec) < 0) {
			vt_err_print("marker");
			ret = VT_EXIT_FAIL;
			break;
		}
		if (i + 1 < count && interval) {
			struct timespec ts = { (time_t)(interval / MS_PER_S),
					       (long)(interval % MS_PER_S) * NS_PER_MS };

			while (nanosleep(&ts, &ts) < 0 && errno == EINTR && !marker_stop)
				;
		}
	}
	/* the last marker's "after" reading travels in one more call */
	if (hypercall)
		vt_marker_hc_close(&hc, VT_MARKER_CPU_NONE);
	if (vt_marker_writer_close(w) < 0) {
		vt_err_print("marker");
		ret = VT_EXIT_FAIL;
	}
	return ret;
}
