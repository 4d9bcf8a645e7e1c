/*
 * src_debugfs.c - the debugfs alignment source: a vCPU's tsc-offset (and
 * tsc-scaling-ratio) as KVM reports it in /sys/kernel/debug/kvm/<vm>/vcpuN,
 * read by the recorder at start, on change and at the end into
 * vmtrace.meta (kvm.vmV.vcpuN.tsc_offset.K = "OFFSET TSC_HOST WHEN").
 * Loaded here from the host's meta (which VMs' readings count), estimated
 * per segment as KVM defines the offset.  Read back from the vCPU itself:
 * ranked after markers, before the tracepoint (which is what KVM was asked
 * to write).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "align/gather.h"
#include "err.h"

/* the keys' VM, vCPU and reading numbers are ints (VT_MK_FMT_VM_*,
 * VT_MK_FMT_VCPU_*): every one used here is below these bounds */
#define SRC_MAX_VMS		64
#define SRC_MAX_VCPUS		1024
#define SRC_MAX_SERIES		100000	/* debugfs readings per vCPU */
#define SRC_FRAC_INTEL		48
#define SRC_FRAC_AMD		32
#define SRC_FRAC_GUESS_MIN	40	/* ratio >= 2^40: 48 fraction bits */

static int est_debugfs(const struct seg_ctx *x, struct line *l)
{
	if (!x->snap)
		return 0;
	*l = align_line_kvm(x->ref_h, x->snap->offset_tsc, x->ratio, x->frac);
	return 1;
}

/* frac bits of the scaling ratio: meta's kvm.tsc_scaling_frac_bits, else
 * the CPU vendor, else the ratio's size (ratios are close to 1.0) */
static uint32_t frac_bits_of(const struct vt_meta *m, uint64_t ratio)
{
	const char *vendor = vt_meta_get(m, VT_MK_CPU_VENDOR);
	uint64_t fb;

	if (!vt_meta_get_u64(m, VT_MK_KVM_TSC_SCALING_FRAC_BITS, &fb) && fb > 0 && fb < 64)
		return (uint32_t)fb;
	if (vendor && strstr(vendor, "AMD"))
		return SRC_FRAC_AMD;
	if (vendor && strstr(vendor, "Intel"))
		return SRC_FRAC_INTEL;
	return ratio >= (1ull << SRC_FRAC_GUESS_MIN) ? SRC_FRAC_INTEL : SRC_FRAC_AMD;
}

/* "VALUE TSC_HOST WHEN" of the recorder's debugfs series */
static int parse_reading(const char *v, long long *val, unsigned long long *tsc)
{
	char *end;

	errno = 0;
	*val = strtoll(v, &end, 0);
	if (errno || end == v || *end != ' ')
		return -1;
	*tsc = strtoull(end + 1, &end, 0);
	if (errno || (*end && *end != ' '))
		return -1;
	return 0;
}

/* Reading @i of VM @vm's vCPU @v tsc-offset series: 0 with *@val and
 * *@tsc, -1 when absent or malformed (@key then names it). */
static int vm_offset_reading(const struct vt_meta *m, uint64_t vm, uint64_t v, uint64_t i,
			     char *key, size_t keylen, long long *val, unsigned long long *tsc)
{
	const char *rv;

	snprintf(key, keylen, VT_MK_FMT_VCPU_TSC_OFFSET, (int)vm, (int)v, (int)i);
	rv = vt_meta_get(m, key);
	return !rv || parse_reading(rv, val, tsc) ? -1 : 0;
}

/* The host TSC span of VM @vm's debugfs readings (its first and last). */
static void vm_reading_span(const struct vt_meta *m, uint64_t vm, uint64_t *lo, uint64_t *hi)
{
	char key[SRC_KEY_MAX];
	uint64_t nvcpu = 0, nr;

	*lo = UINT64_MAX;
	*hi = 0;
	snprintf(key, sizeof(key), VT_MK_FMT_VM_VCPUS, (int)vm);
	if (vt_meta_get_u64(m, key, &nvcpu) || nvcpu > SRC_MAX_VCPUS)
		return;
	for (uint64_t v = 0; v < nvcpu; v++) {
		snprintf(key, sizeof(key), VT_MK_FMT_VCPU_TSC_OFFSET_NR, (int)vm, (int)v);
		if (vt_meta_get_u64(m, key, &nr) || nr == 0 || nr > SRC_MAX_SERIES)
			continue;
		for (uint64_t i = 0; i < nr; i++) {
			unsigned long long tsc;
			long long val;

			if (vm_offset_reading(m, vm, v, i, key, sizeof(key), &val, &tsc))
				continue;
			if (tsc < *lo)
				*lo = tsc;
			if (tsc > *hi)
				*hi = tsc;
		}
	}
}

/* Did the recording's VMs run one after the other (a VM saved and restored
 * into a new QEMU, a guest restarted): no two spans of readings overlap?
 * Then they are one guest's timeline; VMs that ran at once are not. */
static int vms_in_sequence(const struct vt_meta *m, uint64_t nvm)
{
	uint64_t lo[SRC_MAX_VMS], hi[SRC_MAX_VMS];

	if (nvm > SRC_MAX_VMS)
		return 0;
	for (uint64_t i = 0; i < nvm; i++) {
		vm_reading_span(m, i, &lo[i], &hi[i]);
		if (lo[i] > hi[i])
			return 0;	/* no reading: nothing says when it ran */
		for (uint64_t k = 0; k < i; k++)
			if (lo[i] <= hi[k] && lo[k] <= hi[i])
				return 0;
	}
	return 1;
}

/* The debugfs readings of VM @vm's vCPUs into s->snaps. */
static int load_vm_debugfs(struct align_samples *s, const struct vt_meta *m, const char *path,
			   uint64_t vm, size_t *cap)
{
	uint64_t nvcpu, nr;
	char key[SRC_KEY_MAX];

	snprintf(key, sizeof(key), VT_MK_FMT_VM_VCPUS, (int)vm);
	if (vt_meta_get_u64(m, key, &nvcpu))
		return 0;
	if (nvcpu > SRC_MAX_VCPUS)
		return vt_err_set("%s: %s = %llu: too many", path, key,
				  (unsigned long long)nvcpu);
	for (uint64_t v = 0; v < nvcpu; v++) {
		uint64_t ratio = 0, rnr = 0;

		/* the latest ratio reading applies to every offset reading */
		snprintf(key, sizeof(key), VT_MK_FMT_VCPU_TSC_RATIO_NR, (int)vm, (int)v);
		if (!vt_meta_get_u64(m, key, &rnr) && rnr > 0 && rnr <= SRC_MAX_SERIES) {
			long long val;
			unsigned long long tsc;
			const char *rv;

			snprintf(key, sizeof(key), VT_MK_FMT_VCPU_TSC_RATIO, (int)vm, (int)v,
				 (int)(rnr - 1));
			rv = vt_meta_get(m, key);
			if (rv && !parse_reading(rv, &val, &tsc))
				ratio = (uint64_t)val;
		}
		snprintf(key, sizeof(key), VT_MK_FMT_VCPU_TSC_OFFSET_NR, (int)vm, (int)v);
		if (vt_meta_get_u64(m, key, &nr) || nr == 0)
			continue;
		if (nr > SRC_MAX_SERIES)
			return vt_err_set("%s: %s = %llu: too many", path, key,
					  (unsigned long long)nr);
		for (uint64_t i = 0; i < nr; i++) {
			struct align_debugfs_snap d = { 0 };
			unsigned long long tsc;
			long long val;

			if (vm_offset_reading(m, vm, v, i, key, sizeof(key), &val, &tsc)) {
				const char *rv = vt_meta_get(m, key);

				return vt_err_set("%s: %s: expected \"OFFSET TSC WHEN\", got \"%s\"",
						  path, key, rv ? rv : "(missing)");
			}
			d.tsc_host = tsc;
			d.vcpu = (int32_t)v;
			d.offset_tsc = val;
			d.ratio = ratio;
			d.frac_bits = ratio ? frac_bits_of(m, ratio) : 0;
			if (align_gather_push((void **)&s->snaps, &s->in.n_snaps, cap, sizeof(d), &d))
				return -1;
		}
	}
	return 0;
}

/*
 * debugfs readings of the recording's VMs.  One VM: its own.  Several that
 * ran one after the other (saved and restored into a new QEMU, restarted):
 * one guest's timeline, every VM's readings (each applies where it was
 * read; the offset writes between them start new segments).  Several at
 * once: vm0's, and a note (their vCPU numbers cannot be told apart).
 */
static int load_debugfs(struct align_samples *s, const struct vt_meta *m, const char *path,
			size_t *cap)
{
	uint64_t nvm = 0, use = 1;

	if (vt_meta_get_u64(m, VT_MK_KVM_VMS, &nvm) || nvm == 0)
		return 0;
	s->vms_in_sequence = nvm > 1 && vms_in_sequence(m, nvm);
	if (s->vms_in_sequence) {
		use = nvm;
		align_gather_note(s, "host: %llu VMs in the recording, one after the other (a saved and "
		     "restored or restarted guest): one guest's timeline", (unsigned long long)nvm);
	} else if (nvm > 1) {
		align_gather_note(s, "host: %llu VMs in the recording at once: using vm0's debugfs readings",
		     (unsigned long long)nvm);
	}
	for (uint64_t vm = 0; vm < use; vm++)
		if (load_vm_debugfs(s, m, path, vm, cap))
			return -1;
	if (s->in.n_snaps)
		align_gather_note(s, "host: %zu debugfs tsc-offset readings (%s)", s->in.n_snaps,
		     use > 1 ? "every VM" : "vm0");
	return 0;
}

/*
 * The PVM signature (../shared/ENVIRONMENT.md): a kvm_write_tsc_offset that
 * starts the guest's TSC near 0 (next offset within a second of -(its own
 * host TSC)) while debugfs, read back from the vCPU, says 0 (no scaling).  The model's
 * SOURCES DISAGREE warning then follows; this note says why, once per vCPU.
 */
static void note_unapplied_offsets(struct align_samples *s)
{
	for (size_t i = 0; i < s->in.n_snaps; i++) {
		const struct align_debugfs_snap *d = &s->snaps[i];
		int seen = 0;

		for (size_t k = 0; k < i; k++)
			seen |= s->snaps[k].vcpu == d->vcpu && s->snaps[k].offset_tsc == 0;
		if (d->offset_tsc != 0 || d->ratio || seen || !s->in.host_hz)
			continue;
		for (size_t k = 0; k < s->in.n_offsets; k++) {
			const struct align_offset_event *e = &s->offsets[k];
			/* the guest TSC right after the write, modulo 2^64 */
			uint64_t from_zero = (uint64_t)e->next_offset_tsc + e->tsc_host;

			if (e->vcpu != d->vcpu || e->next_offset_tsc >= 0 ||
			    (from_zero > s->in.host_hz && -from_zero > s->in.host_hz))
				continue;
			align_gather_note(s, "host: vCPU %d: kvm_write_tsc_offset asked for offset %lld (guest TSC "
			     "from 0) but debugfs tsc-offset reads 0: this KVM does not apply the "
			     "tracepoint's offset (PVM, docs/align.md); debugfs and markers hold",
			     (int)d->vcpu, (long long)e->next_offset_tsc);
			break;
		}
	}
}

static int debugfs_host_meta(struct align_gather *g)
{
	return load_debugfs(g->s, g->m, g->mpath, &g->cap_snap);
}

const struct align_source_def align_src_debugfs = {
	.id = ALIGN_SRC_DEBUGFS,
	.name = "debugfs",
	.rank = 2,
	.estimate = est_debugfs,
};

const struct align_source_io align_io_debugfs = {
	.id = ALIGN_SRC_DEBUGFS,
	.host_meta = debugfs_host_meta,
	.host_notes = note_unapplied_offsets,
};
