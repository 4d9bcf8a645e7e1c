/*
 * plan.h - the pure part of merge's plan (merge/plan.c), inside merge/:
 * from what each input declares (struct merge_input: its DIR@NAME, its
 * vmtrace.meta, which files it holds; read by merge_plan, pipeline.c),
 * decide which input is the host's and which a guest's and of which VM,
 * each input's label, machine and clock map, and the inputs align builds
 * each VM's model from.  No I/O: tests/unit/t-merge-plan.c gives it inputs
 * that exist nowhere.
 */
#ifndef MERGE_PLAN_H
#define MERGE_PLAN_H

#include <stdint.h>
#include "merge.h"

#define MERGE_VM_NAME_MAX	64	/* a VM's name (DIR@NAME, meta vm=NAME) */

enum merge_dom { MERGE_DOM_UNKNOWN, MERGE_DOM_HOST, MERGE_DOM_GUEST };

/* What one input declares. */
struct merge_input {
	char path[4096];		/* as given, without its @NAME */
	char vm[MERGE_VM_NAME_MAX];	/* its @NAME, else its meta's vm= ("": none) */
	int named;			/* an @NAME was given: it overrides the meta */
	enum merge_dom dom;		/* its meta's domain= */
	int is_ns;			/* stamps in ns (meta clock=ns, plain uftrace data) */
	uint64_t hz;			/* its own TSC frequency (meta, trace.dat), 0 none */
	int is_dir, is_file;		/* a directory; a regular file (a trace.dat) */
	int has_td, has_markers, has_samples;	/* the directory's trace.dat, markers.dat,
						 * samples.tsv */
	struct merge_host_facts host;	/* its meta's QEMU and vCPU-thread facts */
};

/* What was decided. */
struct merge_plan {
	int nin;
	enum merge_dom dom[MERGE_MAX_SOURCES];
	uint64_t hz;			/* the host TSC frequency: one decision */
	int host_in;			/* the input that is align's HOSTDIR, -1 none */
	int unscaled;			/* the first input with no frequency, -1 none */
	int nr_vms;			/* guest machine N is VM N-1 */
	char vm_name[MERGE_MAX_SOURCES][MERGE_VM_NAME_MAX];
	int vm_clock_in[MERGE_MAX_SOURCES];	/* by VM: the input that is align's
						 * GUESTDIR, -1 none */
};

/*
 * Plan the @n inputs @in (1 <= @n <= MERGE_MAX_SOURCES) into @p and set up
 * @src[0..@n) (zero-filled by the caller; path, label, machine, clock map,
 * host facts, lane): @hz the host TSC frequency given (0: the first host
 * input's own), @offset_tsc the guest offset every guest map starts with.
 * 0, or -1 with the message set (a clock map that cannot be made).
 */
int merge_plan_decide(const struct merge_input *in, int n, uint64_t hz, int64_t offset_tsc,
		      struct merge_plan *p, struct merge_source *src);

#endif
