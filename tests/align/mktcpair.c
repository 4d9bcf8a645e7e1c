/*
 * mktcpair.c - test helper: writes a host-guest pair shaped like trace-cmd
 * 3.x's host-guest mode writes it (trace-cmd record -A): HOST.dat with a
 * vCPU thread's kvm_entry/kvm_exit, a GUEST option naming that thread,
 * TRACEID and TSC2NSEC options, no vmtrace.meta; GUEST.dat with guest
 * events stamped inside the runs and a TIME_SHIFT option (the kvm
 * protocol's constant offset, sampled three times).  Prints the truth as
 * JSON.  For tests/align/t-align-tracecmd.sh.
 *
 * usage: mktcpair HOST.dat GUEST.dat [options]
 *   -o OFF   guest TSC = host TSC + OFF (default -4000000000000)
 *   -n RUNS  vCPU runs of 60 us every 100 us (default 200), one guest
 *            event in the middle of each
 *   -s US    TIME_SHIFT's offset US microseconds off the truth (a wrong
 *            time sync: past 30 us its guest events leave the runs)
 *   -N K     TIME_SHIFT holds K samples (default 3; 0: none)
 *   -i       TIME_SHIFT's flags say interpolate (trace-cmd's ptp)
 *   -g N     the host has N GUEST options: the guest's, then N - 1
 *            decoys (trace ids GUEST_ID + 1.., vCPU 0 on thread
 *            DECOY_TID + k)
 *   -V N     the guest's GUEST option lists N vCPUs (vCPU k on thread
 *            VCPU_TID + k; only vCPU 0 runs)
 *   -T ID    the guest file's TRACEID (default GUEST_ID; 0: no option)
 *   -C CLK   the host file's trace clock text (default x86-tsc's)
 *   -c CLK   the guest file's (an empty CLK: an empty option)
 *   -p       the vCPU thread writes the marker port once (kvm_pio)
 *   -S S:F   TIME_SHIFT's first sample has scaling S with F fraction bits
 *            (default 1:0, no scaling; 0:1 is a clock standing still)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "err.h"
#include "marker.h"
#include "tracedat.h"
#include "kvm_formats.h"	/* COMMON_FIELDS, fmt_entry, fmt_exit, fmt_pio */

#define PAGE		4096
#define HZ		2096001000ull
#define START		9000000000000ull
#define US		2096ull		/* ticks per us, near enough */
#define VCPU_TID	4242
#define ID_ENTRY	70
#define ID_EXIT		71
#define ID_SOFTIRQ	120
#define DECOY_TID	6000
#define HOST_ID		0x1111222233334444ull
#define GUEST_ID	0x5555666677778888ull
#define OPT_TRACEID	11
#define OPT_TIME_SHIFT	12
#define OPT_GUEST	13
#define OPT_TSC2NSEC	14
#define ID_PIO		110
#define TSC_SHIFT	22

static const char fmt_softirq[] = "name: softirq_entry\nID: 120\nformat:\n" COMMON_FIELDS
	"\tfield:unsigned int vec;\toffset:8;\tsize:4;\tsigned:0;\n\n"
	"print fmt: \"vec=%u\", REC->vec\n";

struct out {
	int fd;
	uint8_t page[PAGE];
	struct vt_td_page pg;
};

static void die(const char *what)
{
	vt_err_print("mktcpair");
	fprintf(stderr, "mktcpair: %s failed\n", what);
	exit(1);
}

static void out_init(struct out *o)
{
	char tmpl[] = "/tmp/mktcpair.XXXXXX";

	o->fd = mkstemp(tmpl);
	if (o->fd < 0)
		die("mkstemp");
	unlink(tmpl);
	vt_td_page_init(&o->pg, o->page, PAGE);
}

static void emit(struct out *o, uint64_t ts, uint16_t id, int32_t pid, uint32_t val)
{
	uint8_t b[12] = { 0 };
	int r;

	memcpy(b, &id, 2);
	memcpy(b + 4, &pid, 4);
	memcpy(b + 8, &val, 4);
	r = vt_td_page_add(&o->pg, ts, b, sizeof(b));
	if (r == 1) {
		if (write(o->fd, o->page, PAGE) != PAGE)
			die("page write");
		vt_td_page_init(&o->pg, o->page, PAGE);
		r = vt_td_page_add(&o->pg, ts, b, sizeof(b));
	}
	if (r)
		die("page add");
}

/* a write of @val to port @port (kvm_pio) by @pid */
static void emit_pio(struct out *o, uint64_t ts, int32_t pid, uint32_t port, uint32_t val)
{
	uint8_t b[28] = { 0 };
	uint16_t id = ID_PIO;
	uint32_t rw = 1, size = 4, count = 1;

	memcpy(b, &id, 2);
	memcpy(b + 4, &pid, 4);
	memcpy(b + 8, &rw, 4);
	memcpy(b + 12, &port, 4);
	memcpy(b + 16, &size, 4);
	memcpy(b + 20, &count, 4);
	memcpy(b + 24, &val, 4);
	if (vt_td_page_add(&o->pg, ts, b, sizeof(b)))
		die("page add");
}

/* @path from @o's pages: one CPU, the formats of @sys, trace clock text
 * @clock, @opts (u16 id, u32 len, data: queued in order) */
static void write_file(const char *path, struct out *o, const char *sys, const char *const *fmts,
		       const size_t *lens, unsigned nfmt, const char *cmdlines, const char *clock,
		       const uint16_t *ids, const void *const *opts, const uint32_t *olens,
		       unsigned nopt)
{
	struct vt_td_writer *w;

	if (o->pg.nr_events && write(o->fd, o->page, PAGE) != PAGE)
		die("page write");
	lseek(o->fd, 0, SEEK_SET);
	unlink(path);
	w = vt_td_create(path, PAGE);
	if (!w || vt_td_write_headers(w, vt_td_header_page, strlen(vt_td_header_page), vt_td_header_event,
				      strlen(vt_td_header_event)) ||
	    vt_td_write_ftrace_formats(w, 0, NULL, NULL) || vt_td_systems_begin(w, 1) ||
	    vt_td_write_system(w, sys, nfmt, fmts, lens) || vt_td_write_kallsyms(w, "", 0) ||
	    vt_td_write_printk(w, "", 0) || vt_td_write_cmdlines(w, cmdlines, strlen(cmdlines)) ||
	    vt_td_add_option(w, VT_TD_OPT_TRACECLOCK, clock, strlen(clock) + 1))
		die(path);
	for (unsigned i = 0; i < nopt; i++)
		if (vt_td_add_option(w, (enum vt_td_option)ids[i], opts[i], olens[i]))
			die(path);
	if (vt_td_write_cpu_data(w, 1, &o->fd, NULL) || vt_td_close(w))
		die(path);
	close(o->fd);
}

int main(int argc, char **argv)
{
	static const char tsc_clock[] = "local global counter [x86-tsc]";
	const char *host_clock = tsc_clock, *guest_clock = tsc_clock;
	int64_t off = -4000000000000ll, ts_off;
	uint64_t runs = 200, u64, guest_id = GUEST_ID;
	uint32_t nsamples = 3, nguests = 1, nvcpus = 1, flags = 0;
	uint64_t scale0 = 1, frac0 = 0;
	char *colon;
	int64_t skew = 0;
	int c, pio = 0;
	static struct out host, guest;

	while ((c = getopt(argc, argv, "o:n:s:N:ig:V:T:C:c:pS:")) != -1) {
		switch (c) {
		case 'o': off = strtoll(optarg, NULL, 0); break;
		case 'n': runs = strtoull(optarg, NULL, 0); break;
		case 's': skew = strtoll(optarg, NULL, 0); break;
		case 'N': nsamples = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'i': flags |= VT_TD_TSYNC_INTERPOLATE; break;
		case 'g': nguests = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'V': nvcpus = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'T': guest_id = strtoull(optarg, NULL, 0); break;
		case 'C': host_clock = optarg; break;
		case 'c': guest_clock = optarg; break;
		case 'p': pio = 1; break;
		case 'S':
			scale0 = strtoull(optarg, &colon, 0);
			if (*colon != ':')
				return 2;
			frac0 = strtoull(colon + 1, NULL, 0);
			break;
		default: return 2;
		}
	}
	if (argc - optind != 2 || !runs || !nguests || !nvcpus)
		return 2;
	out_init(&host);
	out_init(&guest);
	for (uint64_t i = 0; i < runs; i++) {
		uint64_t in = START + i * 100 * US, outt = in + 60 * US;

		emit(&host, in, ID_ENTRY, VCPU_TID, 0);
		if (pio && !i)
			emit_pio(&host, in + 30 * US, VCPU_TID, VT_MARKER_PORT, VT_MARKER_VALUE(0));
		emit(&guest, in + 30 * US + (uint64_t)off, ID_SOFTIRQ, 1, (uint32_t)i);
		emit(&host, outt, ID_EXIT, VCPU_TID, 30);
	}
	{	/* host: GUEST (the guest: name, id, vCPU k -> VCPU_TID + k; then
		 * the decoys), TRACEID, TSC2NSEC */
		uint32_t glen = 6 + 8 + 4 + 8 * nvcpus, dlen = 6 + 8 + 4 + 8;
		uint8_t *g = calloc(1, glen), *d = calloc(nguests, dlen);
		uint32_t t2n[4];
		/* ns = tsc * mult >> shift */
		uint32_t mult = (uint32_t)((((unsigned __int128)1000000000ull << TSC_SHIFT) +
					     HZ / 2) / HZ);
		const char *fmts[] = { fmt_entry, fmt_exit, fmt_pio };
		size_t lens[] = { sizeof(fmt_entry) - 1, sizeof(fmt_exit) - 1, sizeof(fmt_pio) - 1 };
		uint16_t *ids = calloc(nguests + 2, sizeof(*ids));
		const void **opts = calloc(nguests + 2, sizeof(*opts));
		uint32_t *olens = calloc(nguests + 2, sizeof(*olens));
		uint64_t host_id = HOST_ID;
		char cl[64];

		if (!g || !d || !ids || !opts || !olens)
			die("calloc");
		for (uint32_t k = 0; k + 1 < nguests; k++) {	/* decoy k: 1 vCPU */
			uint8_t *p = d + k * dlen;
			uint32_t one = 1, zero = 0, tid = DECOY_TID + k;

			memcpy(p, "decoy", 6);
			u64 = GUEST_ID + 1 + k;
			memcpy(p + 6, &u64, 8);
			memcpy(p + 14, &one, 4);
			memcpy(p + 18, &zero, 4);
			memcpy(p + 22, &tid, 4);
			ids[1 + k] = OPT_GUEST;
			opts[1 + k] = p;
			olens[1 + k] = dlen;
		}
		memcpy(g, "guest", 6);
		u64 = GUEST_ID;
		memcpy(g + 6, &u64, 8);
		memcpy(g + 14, &nvcpus, 4);
		for (uint32_t k = 0; k < nvcpus; k++) {
			uint32_t tid = VCPU_TID + k;

			memcpy(g + 18 + 8 * k, &k, 4);
			memcpy(g + 22 + 8 * k, &tid, 4);
		}
		ids[0] = OPT_GUEST;
		opts[0] = g;
		olens[0] = glen;
		ids[nguests] = OPT_TRACEID;
		opts[nguests] = &host_id;
		olens[nguests] = sizeof(host_id);
		t2n[0] = mult;
		t2n[1] = TSC_SHIFT;
		t2n[2] = t2n[3] = 0;
		ids[nguests + 1] = OPT_TSC2NSEC;
		opts[nguests + 1] = t2n;
		olens[nguests + 1] = 16;
		snprintf(cl, sizeof(cl), "%d CPU 0/KVM\n", VCPU_TID);
		write_file(argv[optind], &host, "kvm", fmts, lens, 3, cl, host_clock, ids, opts, olens,
			   nguests + 2);
		free(g);
		free(d);
		free(ids);
		free(opts);
		free(olens);
	}
	{	/* guest: TIME_SHIFT (peer, flags, 1 CPU, its samples + fractions),
		 * TRACEID */
		uint32_t tlen = 8 + 4 + 4 + 4 + nsamples * 8 * 4, one = 1;
		uint8_t *t = calloc(1, tlen), *p = t;
		const char *fmts[] = { fmt_softirq };
		size_t lens[] = { sizeof(fmt_softirq) - 1 };
		const uint16_t ids[] = { OPT_TIME_SHIFT, OPT_TRACEID };
		const void *opts[] = { t, &guest_id };
		const uint32_t olens[] = { tlen, sizeof(guest_id) };

		if (!t)
			die("calloc");
		/* the kvm protocol: host = guest + offset, offset = -tsc_offset */
		ts_off = -off + skew * (int64_t)US;
		u64 = HOST_ID;
		memcpy(p, &u64, 8), p += 8;
		memcpy(p, &flags, 4), p += 4;
		memcpy(p, &one, 4), p += 4;
		memcpy(p, &nsamples, 4), p += 4;
		for (uint32_t k = 0; k < nsamples; k++, p += 8)	/* times */
			u64 = START + (uint64_t)off + k * runs * 120 * US / nsamples, memcpy(p, &u64, 8);
		for (uint32_t k = 0; k < nsamples; k++, p += 8)	/* offsets */
			memcpy(p, &ts_off, 8);
		for (uint32_t k = 0; k < nsamples; k++, p += 8)	/* scalings */
			u64 = k ? 1 : scale0, memcpy(p, &u64, 8);
		for (uint32_t k = 0; k < nsamples; k++, p += 8)	/* fraction bits */
			u64 = k ? 0 : frac0, memcpy(p, &u64, 8);
		write_file(argv[optind + 1], &guest, "irq", fmts, lens, 1, "1 swapper\n", guest_clock,
			   ids, opts, olens, guest_id ? 2 : 1);
		free(t);
	}
	printf("{\"offset\": %lld, \"hz\": %llu, \"runs\": %llu, \"start\": %llu, "
	       "\"run_ticks\": %llu, \"period_ticks\": %llu, \"tsync_error_ticks\": %lld}\n",
	       (long long)off, (unsigned long long)HZ, (unsigned long long)runs,
	       (unsigned long long)START, (unsigned long long)(60 * US),
	       (unsigned long long)(100 * US), (long long)(skew * (int64_t)US));
	return 0;
}
