/*
 * mkuftrace.c - test helper: writes a uftrace data directory with a known
 * two-thread call tree through lib/uftrace_write.c, for the consumer tests that
 * read it back with the real uftrace.  Single-threaded tool.
 *
 *   mkuftrace synth DIR [HZ]  fake image /opt/vmtrace-demo/demo, synthetic
 *                             map + .sym; clock=ns, or clock=tsc at HZ
 *   mkuftrace self DIR        this program's own functions, /proc/self/maps
 *                             and the .sym from its ELF symbol table
 *   mkuftrace elf DIR         the same, with the map made from its ELF
 *                             program headers (as freestanding guests do)
 *
 * Call tree (both modes): thread A: main -> foo -> bar, foo -> bar;
 * thread B: baz -> bar.  Durations in ns: bar 1000, foo 3000, main 10000,
 * baz 5000.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "elfread.h"
#include "err.h"
#include "meta.h"
#include "uftrace.h"

#define DEMO_EXE	"/opt/vmtrace-demo/demo"
#define DEMO_BASE	0x400000ULL
#define TID_A		4242
#define TID_B		4243
#define T0_NS		1000000000ULL	/* 1 s: first timestamp */

enum { F_MAIN, F_FOO, F_BAR, F_BAZ, NR_F };

static const char *const fname[NR_F] = { "main", "foo", "bar", "baz" };

/* functions whose addresses the 'self' mode records */
__attribute__((noinline)) void mk_main(void) { __asm__ volatile(""); }
__attribute__((noinline)) void mk_foo(void) { __asm__ volatile(""); }
__attribute__((noinline)) void mk_bar(void) { __asm__ volatile(""); }
__attribute__((noinline)) void mk_baz(void) { __asm__ volatile(""); }

struct ev {
	int entry;
	int fn;
	uint64_t t_ns;		/* offset from T0_NS */
};

static const struct ev tree_a[] = {
	{ 1, F_MAIN, 0 }, { 1, F_FOO, 1000 }, { 1, F_BAR, 2000 }, { 0, F_BAR, 3000 },
	{ 0, F_FOO, 4000 }, { 1, F_FOO, 5000 }, { 1, F_BAR, 6000 }, { 0, F_BAR, 7000 },
	{ 0, F_FOO, 8000 }, { 0, F_MAIN, 10000 },
};
static const struct ev tree_b[] = {
	{ 1, F_BAZ, 1500 }, { 1, F_BAR, 2500 }, { 0, F_BAR, 3500 }, { 0, F_BAZ, 6500 },
};

static uint64_t ts(uint64_t ns, uint64_t hz)
{
	return hz ? (unsigned __int128)ns * hz / 1000000000ULL : ns;
}

static int write_dat(const char *dir, int tid, const struct ev *ev, int n,
		     const uint64_t *addr, uint64_t hz)
{
	char path[4096];
	FILE *fp;
	int depth = 0;

	if (vt_uft_dat_path(path, sizeof(path), dir, tid))
		return -1;
	fp = fopen(path, "wb");
	if (!fp)
		return vt_err_errno("%s: cannot create", path);
	for (int i = 0; i < n; i++) {
		struct vt_uft_record r;

		if (!ev[i].entry)
			depth--;
		r.time = ts(T0_NS + ev[i].t_ns, hz);
		r.bits = vt_uft_pack(ev[i].entry ? VT_UFT_ENTRY : VT_UFT_EXIT, depth,
				     addr[ev[i].fn]);
		if (ev[i].entry)
			depth++;
		fwrite(&r, sizeof(r), 1, fp);
	}
	if (fclose(fp))
		return vt_err_errno("%s: write failed", path);
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t addr[NR_F], hz = 0;
	const char *dir, *exe;
	char sid[VT_UFT_SID_LEN + 1], self[4096];
	struct vt_uft_info info = { 0 };
	struct vt_meta *m;
	int synth;

	if (argc < 3) {
		fprintf(stderr, "usage: mkuftrace synth|self DIR [HZ]\n");
		return 2;
	}
	synth = !strcmp(argv[1], "synth");
	dir = argv[2];
	if (argc > 3)
		hz = strtoull(argv[3], NULL, 0);
	if (vt_uft_dir_create(dir, 1))
		goto fail;
	vt_uft_sid_make(sid, TID_A, T0_NS);
	if (synth) {
		struct vt_uft_sym syms[NR_F];

		exe = DEMO_EXE;
		for (int i = 0; i < NR_F; i++) {
			addr[i] = DEMO_BASE + 0x1000 + 0x100 * i;
			syms[i].addr = addr[i];
			syms[i].size = 0x80;
			syms[i].type = 'T';
			syms[i].name = fname[i];
		}
		if (vt_uft_write_map_fixed(dir, sid, DEMO_BASE, DEMO_BASE + 0x10000, exe) ||
		    vt_uft_write_syms(dir, exe, syms, NR_F))
			goto fail;
	} else {
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

		if (n < 0)
			return vt_err_errno("/proc/self/exe"), vt_err_print("mkuftrace"), 1;
		self[n] = 0;
		exe = self;
		addr[F_MAIN] = (uintptr_t)mk_main;
		addr[F_FOO] = (uintptr_t)mk_foo;
		addr[F_BAR] = (uintptr_t)mk_bar;
		addr[F_BAZ] = (uintptr_t)mk_baz;
		if (!strcmp(argv[1], "elf")) {
			extern char __executable_start[];
			struct vt_elf *e = vt_elf_open(exe);
			uint64_t bias;

			if (!e)
				goto fail;
			bias = (uintptr_t)__executable_start - vt_elf_base_vaddr(e);
			vt_elf_close(e);
			if (vt_uft_write_map_elf(dir, sid, exe, bias))
				goto fail;
		} else if (vt_uft_write_map(dir, sid, 0)) {
			goto fail;
		}
		if (vt_uft_write_syms_elf(dir, exe, 0))
			goto fail;
	}
	if (vt_uft_task_session(dir, ts(T0_NS - 1000, hz), TID_A, sid, exe) ||
	    vt_uft_task_thread(dir, ts(T0_NS - 900, hz), TID_A, TID_A) ||
	    vt_uft_task_thread(dir, ts(T0_NS - 800, hz), TID_B, TID_A) ||
	    write_dat(dir, TID_A, tree_a, VT_ARRAY_SIZE(tree_a), addr, hz) ||
	    write_dat(dir, TID_B, tree_b, VT_ARRAY_SIZE(tree_b), addr, hz))
		goto fail;
	info.exename = exe;
	info.cmdline = synth ? "demo --synthetic" : exe;
	info.exit_status = 0;
	info.max_stack = 64;
	info.elapsed_ns = 10000;
	if (vt_uft_write_info(dir, &info))
		goto fail;
	m = vt_meta_new();
	if (!m || vt_meta_set(m, VT_MK_FORMAT, "uftrace") || vt_meta_set(m, VT_MK_PRODUCER, "mkuftrace") ||
	    vt_meta_set(m, VT_MK_DOMAIN, "host") || vt_meta_set(m, VT_MK_CLOCK, hz ? "tsc" : "ns") ||
	    (hz && vt_meta_set_u64(m, VT_MK_TSC_HZ, hz)) || vt_meta_write_dir(m, dir)) {
		vt_meta_free(m);
		goto fail;
	}
	vt_meta_free(m);
	return 0;
fail:
	vt_err_print("mkuftrace");
	return 1;
}
