/*
 * mkfixture.c - test helper: writes a host recording (trace.dat with
 * kvm_write_tsc_offset, kvm_pio markers or one-byte write syscalls, and a
 * vmtrace.meta with tsc.hz, vCPU threads, debugfs readings) and a guest
 * directory (markers.dat) whose clock relation is known, for tests/align.
 * Prints the truth as JSON on stdout.  Single-threaded tool; allocates.
 *
 * usage: mkfixture HOSTDIR GUESTDIR [options]
 *   -n N         markers (default 40), 100 ms apart
 *   -o OFF       true offset: guest = host + OFF (default 0)
 *   -t TPOFF     kvm_write_tsc_offset next offset (default -(creation TSC));
 *   -T           no kvm_write_tsc_offset event
 *   -d DBGOFF    debugfs tsc-offset reading (default OFF); -D: none
 *   -j JITTER    exit latency spread in ticks (default 4000)
 *   -c           chardev markers: one-byte writev() on fd 9 (TCG case)
 *   -w           with -c: QEMU's I/O thread writes them (no vCPU thread
 *                writes: fd 9 and the noise on fd 10 look alike)
 *   -m           MMIO markers: kvm_mmio writes to MMIO_GPA
 *   -x AT:DELTA  offset change before marker AT (tracepoint + debugfs)
 *   -H K         the host misses marker K;  -G K: the guest misses marker K
 *   -z HZ        tsc.hz (default 2096001000)
 *   -M           no host vmtrace.meta
 *   -C CLOCKS    the trace_clock text stored in trace.dat (default
 *                "local global counter [x86-tsc]")
 *   -F           another VM in the same recording (kvm:* events are
 *                system-wide): its vCPU 0 thread (FOREIGN_TID, not in the
 *                meta) writes a far-off tsc offset mid-run and PIO marker
 *                values to the marker port
 *   -R           QEMU's reset after vCPU creation, as `vmtrace record --
 *                qemu` sees it on PVM: a second kvm_write_tsc_offset
 *                RESET_GAP later whose next offset differs by RESET_DRIFT
 *                (KVM recomputes it; the guest sees neither), the debugfs
 *                start reading between the two and an end reading after
 *                the last marker (the last poll before QEMU exits)
 *   -k           in-band hypercall markers, 64-bit ABI (lib/marker.h): each
 *                marker a kvm_hypercall of the vCPU thread carrying its
 *                "before" reading and the previous one's "after", then a
 *                closing call; markers.dat gets no records
 *   -K           the same in the 32-bit ABI (seq in nr, readings split)
 *   -2           with -k: two emitters (chains HC_CHAIN_A, HC_CHAIN_B)
 *                interleaved, the second's seqs from HC_SEQ_B
 *   -g           with -k: markers.dat holds the hypercall markers too
 *   -a           address hypercall markers: markers.dat names HC_ADDR_NR,
 *                the host sees kvm_hypercall nr HC_ADDR_NR, a0 = the value
 *   -r           the vCPU thread's runs (kvm_entry/kvm_exit, the inside
 *                check): each marker's action exits (kvm_exit at its host
 *                instant), the next run enters RUN_GAP ticks later; the
 *                guest records name vCPU 0 (their cpu field)
 *   -e FILE      extra host events from FILE on a CPU of their own, one a
 *                line in time order, "TS PID EVENT ARGS" (numbers in C
 *                syntax): entry VCPU | exit REASON | tsc VCPU PREV NEXT |
 *                pio RW PORT VAL COUNT | mmio TYPE GPA VAL |
 *                hc NR A0 A1 A2 A3 | writev FD | write FD COUNT |
 *                pwrite FD COUNT (sys_enter_pwrite64) | msr ECX (kvm_msr,
 *                a kvm event align has no use for); and
 *                "comm PID NAME" lines:
 *                the thread names of the trace (cmdlines); "page": a
 *                new page, its first event may be stamped before the
 *                last one (the ring buffer's time going back)
 *   -L EV:FIELD  the format of event EV (kvm_pio, sys_enter_write, ...)
 *                lacks FIELD (renamed FIELD_gone): a kernel whose event
 *                has no such field (up to 4 of them)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "err.h"
#include "marker.h"
#include "meta.h"
#include "tracedat.h"
#include "kvm_formats.h"	/* COMMON_FIELDS, fmt_entry, fmt_exit, fmt_pio */

#define PAGE		4096
#define NR_CPUS		2	/* the generated events' */
#define MAX_CPUS	3	/* with -e: its events on the third */
#define ID_ENTRY	70
#define ID_EXIT		71
#define RUN_GAP		250	/* ticks from a marker's exit to the next entry */
#define VCPU_TID	4242
#define IO_TID		4243
#define CREATE_TSC	5000000000000ull
#define FIRST_GAP	100000000ull
#define MARKER_FD	9
#define NOISE_PORT	0x70
#define ID_TSC		83
#define ID_PIO		110
#define ID_WRITEV	832
#define ID_WRITE	835
#define ID_PWRITE	836
#define ID_MSR		112
#define ID_MMIO		99
#define ID_HC		120
#define HC_CHAIN_A	4321
#define HC_CHAIN_B	4322
#define HC_SEQ_B	1000
#define HC_CPU		1
#define HC_ADDR_NR	0x1f
#define MMIO_GPA	0xfebff000ull
#define MMIO_WRITE	2
#define BASE_LAT	300
#define RESET_GAP	20000000ull	/* before the first marker's noise event */
#define RESET_DRIFT	7
#define FOREIGN_TID	5151
#define FOREIGN_OFF	(-123456789012345ll)

static const char fmt_tsc[] = "name: kvm_write_tsc_offset\nID: 83\nformat:\n" COMMON_FIELDS
	"\tfield:unsigned int vcpu_id;\toffset:8;\tsize:4;\tsigned:0;\n"
	"\tfield:__u64 previous_tsc_offset;\toffset:16;\tsize:8;\tsigned:0;\n"
	"\tfield:__u64 next_tsc_offset;\toffset:24;\tsize:8;\tsigned:0;\n\n"
	"print fmt: \"vcpu=%u prev=%llu next=%llu\", REC->vcpu_id, REC->previous_tsc_offset, "
	"REC->next_tsc_offset\n";
static const char fmt_mmio[] = "name: kvm_mmio\nID: 99\nformat:\n" COMMON_FIELDS
	"\tfield:u32 type;\toffset:8;\tsize:4;\tsigned:0;\n"
	"\tfield:u32 len;\toffset:12;\tsize:4;\tsigned:0;\n"
	"\tfield:u64 gpa;\toffset:16;\tsize:8;\tsigned:0;\n"
	"\tfield:u64 val;\toffset:24;\tsize:8;\tsigned:0;\n\n"
	"print fmt: \"mmio %u len %u gpa 0x%llx val 0x%llx\", REC->type, REC->len, REC->gpa, "
	"REC->val\n";
static const char fmt_hc[] = "name: kvm_hypercall\nID: 120\nformat:\n" COMMON_FIELDS
	"\tfield:unsigned long nr;\toffset:8;\tsize:8;\tsigned:0;\n"
	"\tfield:unsigned long a0;\toffset:16;\tsize:8;\tsigned:0;\n"
	"\tfield:unsigned long a1;\toffset:24;\tsize:8;\tsigned:0;\n"
	"\tfield:unsigned long a2;\toffset:32;\tsize:8;\tsigned:0;\n"
	"\tfield:unsigned long a3;\toffset:40;\tsize:8;\tsigned:0;\n\n"
	"print fmt: \"nr 0x%lx a0 0x%lx a1 0x%lx a2 0x%lx a3 0x%lx\", REC->nr, REC->a0, REC->a1, "
	"REC->a2, REC->a3\n";
static const char fmt_write[] = "name: sys_enter_write\nID: 835\nformat:\n" COMMON_FIELDS
	"\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n"
	"\tfield:unsigned int fd;\toffset:16;\tsize:8;\tsigned:0;\n"
	"\tfield:const char * buf;\toffset:24;\tsize:8;\tsigned:0;\n"
	"\tfield:size_t count;\toffset:32;\tsize:8;\tsigned:0;\n\n"
	"print fmt: \"fd: 0x%08lx, buf: 0x%08lx, count: 0x%08lx\", ((unsigned long)(REC->fd)), "
	"((unsigned long)(REC->buf)), ((unsigned long)(REC->count))\n";
static const char fmt_writev[] = "name: sys_enter_writev\nID: 832\nformat:\n" COMMON_FIELDS
	"\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n"
	"\tfield:unsigned long fd;\toffset:16;\tsize:8;\tsigned:0;\n"
	"\tfield:const struct iovec * vec;\toffset:24;\tsize:8;\tsigned:0;\n"
	"\tfield:unsigned long vlen;\toffset:32;\tsize:8;\tsigned:0;\n\n"
	"print fmt: \"fd: 0x%08lx, vec: 0x%08lx, vlen: 0x%08lx\", ((unsigned long)(REC->fd)), "
	"((unsigned long)(REC->vec)), ((unsigned long)(REC->vlen))\n";

static const char fmt_pwrite[] = "name: sys_enter_pwrite64\nID: 836\nformat:\n" COMMON_FIELDS
	"\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n"
	"\tfield:unsigned int fd;\toffset:16;\tsize:8;\tsigned:0;\n"
	"\tfield:const char * buf;\toffset:24;\tsize:8;\tsigned:0;\n"
	"\tfield:size_t count;\toffset:32;\tsize:8;\tsigned:0;\n"
	"\tfield:loff_t pos;\toffset:40;\tsize:8;\tsigned:0;\n\n"
	"print fmt: \"fd: 0x%08lx, buf: 0x%08lx, count: 0x%08lx, pos: 0x%08lx\", "
	"((unsigned long)(REC->fd)), ((unsigned long)(REC->buf)), ((unsigned long)(REC->count)), "
	"((unsigned long)(REC->pos))\n";
static const char fmt_msr[] = "name: kvm_msr\nID: 112\nformat:\n" COMMON_FIELDS
	"\tfield:unsigned int write;\toffset:8;\tsize:4;\tsigned:0;\n"
	"\tfield:u32 ecx;\toffset:12;\tsize:4;\tsigned:0;\n"
	"\tfield:u64 data;\toffset:16;\tsize:8;\tsigned:0;\n\n"
	"print fmt: \"msr_%s %x = 0x%llx\", REC->write ? \"write\" : \"read\", REC->ecx, "
	"REC->data\n";

struct cpu_out {
	int fd;
	uint8_t page[PAGE];
	struct vt_td_page pg;
};

static struct cpu_out cpus[MAX_CPUS];

static void die(const char *what)
{
	vt_err_print("mkfixture");
	fprintf(stderr, "mkfixture: %s failed\n", what);
	exit(1);
}

/* -L EV:FIELD: the format of EV among @fmt (@n of them) with FIELD
 * renamed FIELD_gone (a copy; the record layout is unchanged) */
static void lack_field(const char **fmt, size_t *len, int n, const char *spec)
{
	static char bufs[8][2048];
	static int nb;
	char ev[64], field[64], name[80], pat[80];
	const char *at;

	if (sscanf(spec, "%63[^:]:%63s", ev, field) != 2)
		die("-L EV:FIELD");
	snprintf(name, sizeof(name), "name: %s\n", ev);
	snprintf(pat, sizeof(pat), " %s;", field);
	for (int i = 0; i < n; i++) {
		if (strncmp(fmt[i], name, strlen(name)) || !(at = strstr(fmt[i], pat)) || nb == 8)
			continue;
		snprintf(bufs[nb], sizeof(bufs[nb]), "%.*s %s_gone;%s", (int)(at - fmt[i]), fmt[i],
			 field, at + strlen(pat));
		fmt[i] = bufs[nb];
		len[i] = strlen(bufs[nb++]);
	}
}

/* CPU @cpu's page written, a new one begun */
static void next_page(int cpu)
{
	struct cpu_out *c = &cpus[cpu];

	if (write(c->fd, c->page, PAGE) != PAGE)
		die("page write");
	vt_td_page_init(&c->pg, c->page, PAGE);
}

static void emit(int cpu, uint64_t ts, const void *data, uint32_t len)
{
	struct cpu_out *c = &cpus[cpu];
	int r = vt_td_page_add(&c->pg, ts, data, len);

	if (r == 1) {
		next_page(cpu);
		r = vt_td_page_add(&c->pg, ts, data, len);
	}
	if (r)
		die("page add");
}

static void common(uint8_t *b, uint16_t id, int32_t pid)
{
	memcpy(b, &id, 2);
	b[2] = 0;
	b[3] = 0;
	memcpy(b + 4, &pid, 4);
}

static void ev_tsc_tid_cpu(int cpu, uint64_t ts, int32_t tid, uint32_t vcpu, int64_t prev,
			   int64_t next)
{
	uint8_t b[32] = { 0 };

	common(b, ID_TSC, tid);
	memcpy(b + 8, &vcpu, 4);
	memcpy(b + 16, &prev, 8);
	memcpy(b + 24, &next, 8);
	emit(cpu, ts, b, sizeof(b));
}

static void ev_tsc_tid(uint64_t ts, int32_t tid, uint32_t vcpu, int64_t prev, int64_t next)
{
	ev_tsc_tid_cpu(0, ts, tid, vcpu, prev, next);
}

static void ev_tsc(uint64_t ts, uint32_t vcpu, int64_t prev, int64_t next)
{
	ev_tsc_tid(ts, VCPU_TID, vcpu, prev, next);
}

static void ev_pio_full(int cpu, uint64_t ts, int32_t tid, uint32_t rw, uint32_t port,
			uint32_t val, uint32_t count)
{
	uint8_t b[28] = { 0 };
	uint32_t size = 4;

	common(b, ID_PIO, tid);
	memcpy(b + 8, &rw, 4);
	memcpy(b + 12, &port, 4);
	memcpy(b + 16, &size, 4);
	memcpy(b + 20, &count, 4);
	memcpy(b + 24, &val, 4);
	emit(cpu, ts, b, sizeof(b));
}

static void ev_pio_tid(int cpu, uint64_t ts, int32_t tid, uint32_t port, uint32_t val)
{
	ev_pio_full(cpu, ts, tid, 1, port, val, 1);
}

static void ev_pio(int cpu, uint64_t ts, uint32_t port, uint32_t val)
{
	ev_pio_tid(cpu, ts, VCPU_TID, port, val);
}

static void ev_mmio_full(int cpu, uint64_t ts, int32_t tid, uint32_t type, uint64_t gpa,
			 uint64_t val)
{
	uint8_t b[32] = { 0 };
	uint32_t len = 4;

	common(b, ID_MMIO, tid);
	memcpy(b + 8, &type, 4);
	memcpy(b + 12, &len, 4);
	memcpy(b + 16, &gpa, 8);
	memcpy(b + 24, &val, 8);
	emit(cpu, ts, b, sizeof(b));
}

static void ev_mmio(int cpu, uint64_t ts, uint64_t gpa, uint64_t val)
{
	ev_mmio_full(cpu, ts, VCPU_TID, MMIO_WRITE, gpa, val);
}

static void ev_writev(int cpu, uint64_t ts, int32_t tid, uint64_t fd)
{
	uint8_t b[40] = { 0 };
	int32_t nr = 20;
	uint64_t vec = 0x7ffd0000, vlen = 1;

	common(b, ID_WRITEV, tid);
	memcpy(b + 8, &nr, 4);
	memcpy(b + 16, &fd, 8);
	memcpy(b + 24, &vec, 8);
	memcpy(b + 32, &vlen, 8);
	emit(cpu, ts, b, sizeof(b));
}

static void ev_hc_tid(int cpu, uint64_t ts, int32_t tid, uint64_t nr, uint64_t a0, uint64_t a1,
		      uint64_t a2, uint64_t a3)
{
	uint8_t b[48] = { 0 };
	uint64_t a[5] = { nr, a0, a1, a2, a3 };

	common(b, ID_HC, tid);
	memcpy(b + 8, a, sizeof(a));
	emit(cpu, ts, b, sizeof(b));
}

static void ev_hc(int cpu, uint64_t ts, uint64_t nr, uint64_t a0, uint64_t a1, uint64_t a2,
		  uint64_t a3)
{
	ev_hc_tid(cpu, ts, VCPU_TID, nr, a0, a1, a2, a3);
}

/* One in-band hypercall: marker @seq's "before" and the chain's previous
 * "after" (@seq VT_MARKER_HC_CLOSE_SEQ: the closing call), in the 64-bit
 * ABI or, @abi32, the 32-bit one. */
static void ev_hc_inband(int cpu, uint64_t ts, int abi32, uint32_t chain, uint64_t seq,
			 uint64_t before, uint64_t prev_after)
{
	if (!abi32) {
		ev_hc(cpu, ts, VT_MARKER_HC_NR, before, prev_after, seq,
		      (uint64_t)chain << 32 | HC_CPU);
		return;
	}
	ev_hc(cpu, ts, seq == VT_MARKER_HC_CLOSE_SEQ ? VT_MARKER_HC_CLOSE32 :
		       VT_MARKER_HC_NR32 | (seq & VT_MARKER_HC_SEQ32_MASK),
	      (uint32_t)before, before >> 32, (uint32_t)prev_after, prev_after >> 32);
}

/* a write(2) of @count bytes to @fd (sys_enter_write) */
static void ev_write(int cpu, uint64_t ts, int32_t tid, uint64_t fd, uint64_t count)
{
	uint8_t b[40] = { 0 };
	int32_t nr = 1;
	uint64_t buf = 0x7ffd0000;

	common(b, ID_WRITE, tid);
	memcpy(b + 8, &nr, 4);
	memcpy(b + 16, &fd, 8);
	memcpy(b + 24, &buf, 8);
	memcpy(b + 32, &count, 8);
	emit(cpu, ts, b, sizeof(b));
}

/* a pwrite64(2) of @count bytes to @fd at offset 0 (sys_enter_pwrite64) */
static void ev_pwrite(int cpu, uint64_t ts, int32_t tid, uint64_t fd, uint64_t count)
{
	uint8_t b[48] = { 0 };
	int32_t nr = 18;
	uint64_t buf = 0x7ffd0000;

	common(b, ID_PWRITE, tid);
	memcpy(b + 8, &nr, 4);
	memcpy(b + 16, &fd, 8);
	memcpy(b + 24, &buf, 8);
	memcpy(b + 32, &count, 8);
	emit(cpu, ts, b, sizeof(b));
}

/* a guest's MSR read of @ecx (kvm_msr) */
static void ev_msr(int cpu, uint64_t ts, int32_t tid, uint32_t ecx)
{
	uint8_t b[24] = { 0 };

	common(b, ID_MSR, tid);
	memcpy(b + 12, &ecx, 4);
	emit(cpu, ts, b, sizeof(b));
}

/* kvm_entry (@id ID_ENTRY, @val the vCPU) or kvm_exit (its reason) */
static void ev_u32(int cpu, uint64_t ts, int32_t tid, uint16_t id, uint32_t val)
{
	uint8_t b[12] = { 0 };

	common(b, id, tid);
	memcpy(b + 8, &val, 4);
	emit(cpu, ts, b, sizeof(b));
}

/* -e FILE: its events on CPU @cpu, its "comm" lines appended to @cl */
static void extra_events(const char *path, int cpu, char *cl, size_t clsz)
{
	FILE *fp = fopen(path, "r");
	char line[512], ev[16];
	unsigned long long ts, a[5];
	int pid, n, off;

	if (!fp)
		die(path);
	while (fgets(line, sizeof(line), fp)) {
		if (!strcmp(line, "page\n")) {
			next_page(cpu);
			continue;
		}
		if (sscanf(line, "comm %d %n", &pid, &off) == 1) {
			size_t l = strlen(cl);

			snprintf(cl + l, clsz - l, "%d %s", pid, line + off);
			continue;
		}
		memset(a, 0, sizeof(a));
		n = sscanf(line, "%lli %d %15s %lli %lli %lli %lli %lli", &ts, &pid, ev, &a[0], &a[1],
			   &a[2], &a[3], &a[4]);
		if (n < 3)
			continue;
		if (!strcmp(ev, "entry"))
			ev_u32(cpu, ts, pid, ID_ENTRY, (uint32_t)a[0]);
		else if (!strcmp(ev, "exit"))
			ev_u32(cpu, ts, pid, ID_EXIT, (uint32_t)a[0]);
		else if (!strcmp(ev, "tsc"))
			ev_tsc_tid_cpu(cpu, ts, pid, (uint32_t)a[0], (int64_t)a[1], (int64_t)a[2]);
		else if (!strcmp(ev, "pio"))
			ev_pio_full(cpu, ts, pid, (uint32_t)a[0], (uint32_t)a[1], (uint32_t)a[2],
				    (uint32_t)a[3]);
		else if (!strcmp(ev, "mmio"))
			ev_mmio_full(cpu, ts, pid, (uint32_t)a[0], a[1], a[2]);
		else if (!strcmp(ev, "hc"))
			ev_hc_tid(cpu, ts, pid, a[0], a[1], a[2], a[3], a[4]);
		else if (!strcmp(ev, "writev"))
			ev_writev(cpu, ts, pid, a[0]);
		else if (!strcmp(ev, "write"))
			ev_write(cpu, ts, pid, a[0], a[1]);
		else if (!strcmp(ev, "pwrite"))
			ev_pwrite(cpu, ts, pid, a[0], a[1]);
		else if (!strcmp(ev, "msr"))
			ev_msr(cpu, ts, pid, (uint32_t)a[0]);
		else
			die(line);
	}
	fclose(fp);
}

static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(uint64_t n)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return n ? rnd_state % n : 0;
}

int main(int argc, char **argv)
{
	uint64_t n = 40, jitter = 4000, hz = 2096001000ull, step;
	int64_t off = 0, tp_off = -(int64_t)CREATE_TSC, dbg_off = 0, delta = 0;
	int has_tp = 1, has_dbg = 1, dbg_set = 0, chardev = 0, mmio = 0, has_meta = 1, reset = 0, foreign = 0, c;
	int io_writes = 0, inband = 0, abi32 = 0, two = 0, hc_guest = 0, hc_addr = 0, runs = 0;
	int ncpu = NR_CPUS;
	const char *extra = NULL;
	uint64_t prev_after[2] = { 0, 0 }, hc_last[2] = { 0, 0 };
	const char *clock = "local global counter [x86-tsc]";
	long change_at = -1, host_miss = -1, guest_miss = -1;
	static char cl[1 << 18];	/* cmdlines: -e may name thousands of threads */
	char path[4096], tmpl[64];
	uint64_t change_tsc = 0, last_ts = 0;
	struct vt_marker_writer *mw;
	struct vt_td_writer *w;
	struct vt_meta *m;
	char key[VT_META_KEY_MAX];
	int fds[MAX_CPUS];
	const char *lack[4];
	int nlack = 0;

	while ((c = getopt(argc, argv, "n:o:t:Td:Dj:cmx:H:G:z:MC:RFkK2gawre:L:")) != -1) {
		switch (c) {
		case 'n': n = strtoull(optarg, NULL, 0); break;
		case 'o': off = strtoll(optarg, NULL, 0); break;
		case 't': tp_off = strtoll(optarg, NULL, 0); break;
		case 'T': has_tp = 0; break;
		case 'd': dbg_off = strtoll(optarg, NULL, 0); dbg_set = 1; break;
		case 'D': has_dbg = 0; break;
		case 'j': jitter = strtoull(optarg, NULL, 0); break;
		case 'c': chardev = 1; break;
		case 'm': mmio = 1; break;
		case 'x':
			if (sscanf(optarg, "%ld:%ld", &change_at, &delta) != 2)
				return 2;
			break;
		case 'H': host_miss = atol(optarg); break;
		case 'G': guest_miss = atol(optarg); break;
		case 'z': hz = strtoull(optarg, NULL, 0); break;
		case 'M': has_meta = 0; break;
		case 'C': clock = optarg; break;
		case 'R': reset = 1; break;
		case 'F': foreign = 1; break;
		case 'k': inband = 1; break;
		case 'K': inband = 1; abi32 = 1; break;
		case '2': two = 1; break;
		case 'g': hc_guest = 1; break;
		case 'a': hc_addr = 1; break;
		case 'w': io_writes = 1; break;
		case 'r': runs = 1; break;
		case 'e': extra = optarg; ncpu = MAX_CPUS; break;
		case 'L':
			if (nlack == 4)
				die("-L: at most 4");
			lack[nlack++] = optarg;
			break;
		default:
			fprintf(stderr, "usage: mkfixture HOSTDIR GUESTDIR [-n N] [-o OFF] [-t TPOFF|-T] "
				"[-d DBGOFF|-D] [-j JITTER] [-c [-w]|-m] [-x AT:DELTA] [-H K] [-G K] [-z HZ] "
				"[-M] [-C CLOCKS] [-R] [-F] [-k|-K [-2] [-g]|-a] [-r] [-L EV:FIELD] [-e FILE]\n");
			return 2;
		}
	}
	if (argc - optind != 2)
		return 2;
	if (!dbg_set)
		dbg_off = off;
	step = hz / 10;
	if ((mkdir(argv[optind], 0755) && errno != EEXIST) ||
	    (mkdir(argv[optind + 1], 0755) && errno != EEXIST))
		die("mkdir");
	for (int i = 0; i < ncpu; i++) {
		snprintf(tmpl, sizeof(tmpl), "/tmp/mkfixture.XXXXXX");
		cpus[i].fd = mkstemp(tmpl);
		if (cpus[i].fd < 0)
			die("mkstemp");
		unlink(tmpl);
		vt_td_page_init(&cpus[i].pg, cpus[i].page, PAGE);
	}
	mw = vt_marker_writer_open(argv[optind + 1]);
	if (!mw)
		die("markers.dat");

	if (has_tp)
		ev_tsc(CREATE_TSC, 0, 0, tp_off);
	if (has_tp && reset) {
		ev_tsc(CREATE_TSC + RESET_GAP, 0, tp_off, tp_off + RESET_DRIFT);
		tp_off += RESET_DRIFT;
	}
	for (uint64_t i = 0; i < n; i++) {
		uint64_t h = CREATE_TSC + FIRST_GAP + i * step + rnd(step / 10);
		uint64_t lb = BASE_LAT + rnd(jitter), la = BASE_LAT + rnd(jitter);
		int cpu = (int)(i % NR_CPUS);
		struct vt_marker r;

		if ((long)i == change_at) {
			change_tsc = h - step / 2;
			off += delta;
			if (has_tp) {
				ev_tsc(change_tsc, 0, tp_off, tp_off + delta);
				tp_off += delta;
			}
			dbg_off += delta;
		}
		/* noise the aligner must ignore: another port, another fd */
		ev_pio(cpu, h - step / 3, NOISE_PORT, 0x56000000 | (uint32_t)i);
		if (foreign && i == n / 2)
			ev_tsc_tid(h - step / 4, FOREIGN_TID, 0, 0, FOREIGN_OFF);
		if (foreign)	/* another guest's marker with the same seq */
			ev_pio_tid(cpu, h - step / 5, FOREIGN_TID, VT_MARKER_PORT,
				   VT_MARKER_VALUE(i));
		if (chardev)
			ev_writev(cpu, h - step / 4, IO_TID, MARKER_FD + 1);
		memset(&r, 0, sizeof(r));
		r.kind = chardev ? VT_MARKER_CHARDEV : mmio ? VT_MARKER_MMIO : VT_MARKER_PIO;
		r.size = chardev ? 1 : 4;
		r.addr = chardev ? VT_MARKER_DEBUGCON_PORT : mmio ? MMIO_GPA : VT_MARKER_PORT;
		r.seq = two && i % 2 ? HC_SEQ_B + i / 2 : two ? i / 2 : i;
		r.value = chardev ? VT_MARKER_BYTE(i) : VT_MARKER_VALUE(r.seq);
		r.cpu = VT_MARKER_CPU_NONE;
		if (inband || hc_addr) {
			r.kind = VT_MARKER_HYPERCALL;
			r.addr = hc_addr ? HC_ADDR_NR : VT_MARKER_HC_NR;
			r.cpu = inband ? HC_CPU : VT_MARKER_CPU_NONE;
		}
		r.tsc_guest_before = h - lb + (uint64_t)off;
		r.tsc_guest_after = h + la + (uint64_t)off;
		if (runs) {	/* the run the marker's action ends */
			if (!i)
				ev_u32(cpu, h - step / 8, VCPU_TID, ID_ENTRY, 0);
			ev_u32(cpu, h, VCPU_TID, ID_EXIT, 0);
			r.cpu = 0;
		}
		if ((long)i != host_miss) {
			if (inband) {
				int k = two ? (int)(i % 2) : 0;

				ev_hc_inband(cpu, h, abi32, k ? HC_CHAIN_B : HC_CHAIN_A, r.seq,
					     r.tsc_guest_before, prev_after[k]);
			} else if (hc_addr)
				ev_hc(cpu, h, HC_ADDR_NR, r.value, 0, 0, 0);
			else if (chardev)
				ev_writev(cpu, h, io_writes ? IO_TID : VCPU_TID, MARKER_FD);
			else if (mmio)
				ev_mmio(cpu, h, MMIO_GPA, r.value);
			else
				ev_pio(cpu, h, VT_MARKER_PORT, r.value);
		}
		if (inband) {	/* the chain's next call carries this "after" */
			prev_after[two ? i % 2 : 0] = r.tsc_guest_after;
			hc_last[two ? i % 2 : 0] = h;
		}
		if (runs)	/* the next run, from RUN_GAP after the action */
			ev_u32(cpu, h + RUN_GAP, VCPU_TID, ID_ENTRY, 0);
		if ((long)i != guest_miss && (!inband || hc_guest) && vt_marker_writer_add(mw, &r))
			die("marker add");
		last_ts = h;
	}
	if (runs && n)	/* the last run's exit */
		ev_u32((int)((n - 1) % NR_CPUS), last_ts + step / 4, VCPU_TID, ID_EXIT, 0);
	for (int k = 0; inband && k < 1 + two; k++)	/* each chain's closing call */
		if (hc_last[k])
			ev_hc_inband(0, hc_last[k] + step / 2, abi32, k ? HC_CHAIN_B : HC_CHAIN_A,
				     VT_MARKER_HC_CLOSE_SEQ, hc_last[k] + step / 2 + (uint64_t)off,
				     prev_after[k]);
	if (vt_marker_writer_close(mw))
		die("markers.dat close");
	snprintf(cl, sizeof(cl), "%d qemu-system-x86\n%d CPU 0/KVM\n%d CPU 0/KVM\n", IO_TID,
		 VCPU_TID, FOREIGN_TID);
	if (extra)
		extra_events(extra, NR_CPUS, cl, sizeof(cl));
	for (int i = 0; i < ncpu; i++) {
		if (cpus[i].pg.nr_events && write(cpus[i].fd, cpus[i].page, PAGE) != PAGE)
			die("page write");
		lseek(cpus[i].fd, 0, SEEK_SET);
		fds[i] = cpus[i].fd;
	}

	snprintf(path, sizeof(path), "%s/%s", argv[optind], VT_TD_FILE);
	unlink(path);
	w = vt_td_create(path, PAGE);
	if (!w)
		die("trace.dat create");
	{
		const char *kvm[] = { fmt_tsc, fmt_pio, fmt_mmio, fmt_hc, fmt_entry, fmt_exit, fmt_msr };
		size_t kvml[] = { sizeof(fmt_tsc) - 1, sizeof(fmt_pio) - 1, sizeof(fmt_mmio) - 1,
				  sizeof(fmt_hc) - 1, sizeof(fmt_entry) - 1, sizeof(fmt_exit) - 1,
				  sizeof(fmt_msr) - 1 };
		const char *sys[] = { fmt_writev, fmt_write, fmt_pwrite };
		size_t sysl[] = { sizeof(fmt_writev) - 1, sizeof(fmt_write) - 1, sizeof(fmt_pwrite) - 1 };

		for (int i = 0; i < nlack; i++) {
			lack_field(kvm, kvml, 7, lack[i]);
			lack_field(sys, sysl, 3, lack[i]);
		}

		if (vt_td_write_headers(w, vt_td_header_page, strlen(vt_td_header_page), vt_td_header_event,
					strlen(vt_td_header_event)) ||
		    vt_td_write_ftrace_formats(w, 0, NULL, NULL) || vt_td_systems_begin(w, 2) ||
		    vt_td_write_system(w, "kvm", 7, kvm, kvml) ||
		    vt_td_write_system(w, "syscalls", 3, sys, sysl) ||
		    vt_td_write_kallsyms(w, "", 0) || vt_td_write_printk(w, "", 0) ||
		    vt_td_write_cmdlines(w, cl, strlen(cl)) ||
		    vt_td_add_option(w, VT_TD_OPT_TRACECLOCK, clock, strlen(clock) + 1) ||
		    vt_td_write_cpu_data(w, ncpu, fds, NULL) || vt_td_close(w))
			die("trace.dat");
	}
	for (int i = 0; i < ncpu; i++)
		close(cpus[i].fd);

	if (has_meta) {
		m = vt_meta_new();
		vt_meta_set(m, VT_MK_DOMAIN, "host");
		vt_meta_set(m, VT_MK_CLOCK, "tsc");
		vt_meta_set_u64(m, VT_MK_TSC_HZ, hz);
		vt_meta_set(m, VT_MK_TSC_HZ_SOURCE, "mkfixture");
		vt_meta_set_u64(m, VT_MK_RECORD_START_TSC_HOST, CREATE_TSC - step);
		vt_meta_set_u64(m, VT_MK_RECORD_STOP_TSC_HOST, last_ts + step);
		vt_meta_set(m, VT_MK_KVM_VCPU_THREADS, "1");
		snprintf(key, sizeof(key), VT_MK_FMT_THREAD_TID, 0ULL);
		vt_meta_set(m, key, "%d", VCPU_TID);
		snprintf(key, sizeof(key), VT_MK_FMT_THREAD_VCPU, 0ULL);
		vt_meta_set(m, key, "0");
		if (has_dbg) {
			vt_meta_set(m, VT_MK_KVM_VMS, "1");
			snprintf(key, sizeof(key), VT_MK_FMT_VM_VCPUS, 0);
			vt_meta_set(m, key, "1");
			if (change_tsc) {
				snprintf(key, sizeof(key), VT_MK_FMT_VCPU_TSC_OFFSET_NR, 0, 0);
				vt_meta_set(m, key, "2");
				snprintf(key, sizeof(key), VT_MK_FMT_VCPU_TSC_OFFSET, 0, 0, 0);
				vt_meta_set(m, key, "%lld %llu start",
					    (long long)(dbg_off - delta),
					    (unsigned long long)(CREATE_TSC + 1));
				snprintf(key, sizeof(key), VT_MK_FMT_VCPU_TSC_OFFSET, 0, 0, 1);
				vt_meta_set(m, key, "%lld %llu change",
					    (long long)dbg_off, (unsigned long long)(change_tsc + 1));
			} else {
				snprintf(key, sizeof(key), VT_MK_FMT_VCPU_TSC_OFFSET_NR, 0, 0);
				vt_meta_set(m, key, "%d", reset ? 2 : 1);
				snprintf(key, sizeof(key), VT_MK_FMT_VCPU_TSC_OFFSET, 0, 0, 0);
				vt_meta_set(m, key, "%lld %llu start",
					    (long long)dbg_off, (unsigned long long)(CREATE_TSC + 1));
				snprintf(key, sizeof(key), VT_MK_FMT_VCPU_TSC_OFFSET, 0, 0, 1);
				if (reset)
					vt_meta_set(m, key, "%lld %llu end",
						    (long long)dbg_off,
						    (unsigned long long)(last_ts + step / 2));
			}
		}
		if (vt_meta_write_dir(m, argv[optind]))
			die("host meta");
		vt_meta_free(m);
	}
	m = vt_meta_new();
	vt_meta_set(m, VT_MK_DOMAIN, "guest");
	vt_meta_set(m, VT_MK_CLOCK, "tsc");
	vt_meta_set_u64(m, VT_MK_TSC_HZ, hz + hz / 2000);	/* a guest's calibration */
	if (vt_meta_write_dir(m, argv[optind + 1]))
		die("guest meta");
	vt_meta_free(m);
	printf("{\"offset\": %lld, \"offset_before_change\": %lld, \"change_tsc_host\": %llu, "
	       "\"hz\": %llu, \"markers\": %llu, \"create_tsc_host\": %llu}\n", (long long)off,
	       (long long)(off - delta), (unsigned long long)change_tsc, (unsigned long long)hz,
	       (unsigned long long)n, (unsigned long long)CREATE_TSC);
	return 0;
}
