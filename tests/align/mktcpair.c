/*
 * mktcpair.c - test helper: writes a host-guest pair shaped like trace-cmd
 * 3.x's host-guest mode writes it (trace-cmd record -A): HOST.dat with a
 * vCPU thread's kvm_entry/kvm_exit, a GUEST option naming that thread,
 * TRACEID and TSC2NSEC options, no vmtrace.meta; GUEST.dat with guest
 * events stamped inside the runs and a TIME_SHIFT option (the kvm
 * protocol's constant offset, sampled three times).  Prints the truth as
 * JSON.  For tests/align/t-align-tracecmd.sh.
 *
 * usage: mktcpair HOST.dat GUEST.dat [-o OFF] [-n RUNS] [-s] [-c CLOCK]
 *   -o OFF   guest TSC = host TSC + OFF (default -4000000000000)
 *   -n RUNS  vCPU runs of 60 us every 100 us (default 200), one guest
 *            event in the middle of each
 *   -c CLOCK both files' trace clock (default x86-tsc; "local": a pair on a
 *            ns clock, as trace-cmd's ptp protocol records it)
 *   -s US    TIME_SHIFT's offset US microseconds off the truth (a wrong
 *            time sync: past 30 us its guest events leave the runs)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "err.h"
#include "tracedat.h"
#include "kvm_formats.h"	/* COMMON_FIELDS, fmt_entry, fmt_exit */

#define PAGE		4096
#define HZ		2096001000ull
#define START		9000000000000ull
#define US		2096ull		/* ticks per us, near enough */
#define VCPU_TID	4242
#define ID_ENTRY	70
#define ID_EXIT		71
#define ID_SOFTIRQ	120
#define HOST_ID		0x1111222233334444ull
#define GUEST_ID	0x5555666677778888ull
#define OPT_TRACEID	11
#define OPT_TIME_SHIFT	12
#define OPT_GUEST	13
#define OPT_TSC2NSEC	14
#define TS_SAMPLES	3
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

static char clock[80] = "local global counter [x86-tsc]";

/* @path from @o's pages: one CPU, the formats of @sys, @opts (u16 id,
 * u32 len, data: queued in order) */
static void write_file(const char *path, struct out *o, const char *sys, const char *const *fmts,
		       const size_t *lens, unsigned nfmt, const char *cmdlines,
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
	int64_t off = -4000000000000ll, ts_off;
	uint64_t runs = 200, u64;
	int64_t skew = 0;
	int c;
	static struct out host, guest;

	while ((c = getopt(argc, argv, "o:n:s:c:")) != -1) {
		switch (c) {
		case 'c': snprintf(clock, sizeof(clock), "[%s] global counter", optarg); break;
		case 'o': off = strtoll(optarg, NULL, 0); break;
		case 'n': runs = strtoull(optarg, NULL, 0); break;
		case 's': skew = strtoll(optarg, NULL, 0); break;
		default: return 2;
		}
	}
	if (argc - optind != 2 || !runs)
		return 2;
	out_init(&host);
	out_init(&guest);
	for (uint64_t i = 0; i < runs; i++) {
		uint64_t in = START + i * 100 * US, outt = in + 60 * US;

		emit(&host, in, ID_ENTRY, VCPU_TID, 0);
		emit(&guest, in + 30 * US + (uint64_t)off, ID_SOFTIRQ, 1, (uint32_t)i);
		emit(&host, outt, ID_EXIT, VCPU_TID, 30);
	}
	{	/* host: GUEST (name, id, 1 vCPU: 0 -> VCPU_TID), TRACEID, TSC2NSEC */
		uint8_t g[6 + 8 + 4 + 8];
		uint32_t one = 1, zero = 0, tid = VCPU_TID;
		uint32_t t2n[4];
		/* ns = tsc * mult >> shift */
		uint32_t mult = (uint32_t)((((unsigned __int128)1000000000ull << TSC_SHIFT) +
					     HZ / 2) / HZ);
		const char *fmts[] = { fmt_entry, fmt_exit };
		size_t lens[] = { sizeof(fmt_entry) - 1, sizeof(fmt_exit) - 1 };
		const uint16_t ids[] = { OPT_GUEST, OPT_TRACEID, OPT_TSC2NSEC };
		const void *opts[] = { g, &u64, t2n };
		const uint32_t olens[] = { sizeof(g), sizeof(u64), 16 };
		char cl[64];

		memcpy(g, "guest", 6);
		u64 = GUEST_ID;
		memcpy(g + 6, &u64, 8);
		memcpy(g + 14, &one, 4);
		memcpy(g + 18, &zero, 4);
		memcpy(g + 22, &tid, 4);
		u64 = HOST_ID;
		t2n[0] = mult;
		t2n[1] = TSC_SHIFT;
		t2n[2] = t2n[3] = 0;
		snprintf(cl, sizeof(cl), "%d CPU 0/KVM\n", VCPU_TID);
		write_file(argv[optind], &host, "kvm", fmts, lens, 2, cl, ids, opts, olens, 3);
	}
	{	/* guest: TIME_SHIFT (peer, flags 0, 1 CPU, 3 samples + fractions), TRACEID */
		uint8_t t[8 + 4 + 4 + 4 + TS_SAMPLES * 8 * 4];
		uint32_t flags = 0, one = 1, n = TS_SAMPLES;
		uint8_t *p = t;
		const char *fmts[] = { fmt_softirq };
		size_t lens[] = { sizeof(fmt_softirq) - 1 };
		const uint16_t ids[] = { OPT_TIME_SHIFT, OPT_TRACEID };
		const void *opts[] = { t, &u64 };
		const uint32_t olens[] = { sizeof(t), sizeof(u64) };

		/* the kvm protocol: host = guest + offset, offset = -tsc_offset */
		ts_off = -off + skew * (int64_t)US;
		u64 = HOST_ID;
		memcpy(p, &u64, 8), p += 8;
		memcpy(p, &flags, 4), p += 4;
		memcpy(p, &one, 4), p += 4;
		memcpy(p, &n, 4), p += 4;
		for (int k = 0; k < TS_SAMPLES; k++, p += 8)	/* times */
			u64 = START + (uint64_t)off + k * runs * 40 * US, memcpy(p, &u64, 8);
		for (int k = 0; k < TS_SAMPLES; k++, p += 8)	/* offsets */
			memcpy(p, &ts_off, 8);
		for (int k = 0; k < TS_SAMPLES; k++, p += 8)	/* scalings */
			u64 = 1, memcpy(p, &u64, 8);
		for (int k = 0; k < TS_SAMPLES; k++, p += 8)	/* fraction bits */
			u64 = 0, memcpy(p, &u64, 8);
		u64 = GUEST_ID;
		write_file(argv[optind + 1], &guest, "irq", fmts, lens, 1, "1 swapper\n", ids, opts,
			   olens, 2);
	}
	printf("{\"offset\": %lld, \"hz\": %llu, \"runs\": %llu, \"start\": %llu, "
	       "\"run_ticks\": %llu, \"period_ticks\": %llu, \"tsync_error_ticks\": %lld}\n",
	       (long long)off, (unsigned long long)HZ, (unsigned long long)runs,
	       (unsigned long long)START, (unsigned long long)(60 * US),
	       (unsigned long long)(100 * US), (long long)(skew * (int64_t)US));
	return 0;
}
