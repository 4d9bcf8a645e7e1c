/*
 * kvmfacts.c - collects KVM facts of traced QEMU processes for the
 * recorder's metadata: vCPU threads ("CPU n/KVM", also "CPU n/TCG") from
 * /proc, and each vCPU's debugfs tsc-offset / tsc-scaling-ratio with the
 * host TSC read just before, and the ratio's fraction bits
 * (tsc-scaling-ratio-frac-bits, where KVM scales TSCs).  Runs on the
 * recorder's main thread from its poll loop; allocates, does blocking file
 * I/O (small files only).
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "err.h"
#include "kvmfacts.h"
#include "proc.h"
#include "tsc.h"

#define KVM_DEBUGFS_DIR		"/sys/kernel/debug/kvm"
#define KVM_VAL_MAX		32
#define KVM_COMM_MAX		32
#define KVM_PATH_MAX		1200
#define KVM_FRAC_BITS_LIMIT	64	/* a u64 ratio: fewer fraction bits */
#define KVM_READ_TRIES		4	/* reads of a value that keeps changing */

enum kvm_when { KVM_START, KVM_CHANGE, KVM_END };
static const char *const kvm_when_name[] = { "start", "change", "end" };

/* One reading of a debugfs value. */
struct kvm_reading {
	char val[KVM_VAL_MAX];
	uint64_t tsc_host;
	enum kvm_when when;
};

/* The history of one debugfs file of a vCPU, and the latest poll that
 * read it (the end reading when the VM is gone before the final poll). */
struct kvm_series {
	struct kvm_reading *r;
	int nr, cap;
	struct kvm_reading seen;
	int has_seen;
};

struct kvm_vcpu {
	int idx;
	struct kvm_series offset;
	struct kvm_series ratio;
};

struct kvm_vm {
	pid_t pid;
	char dir[64];		/* "<pid>-<fd>" */
	struct kvm_vcpu *vcpu;
	int nr_vcpu;
};

struct kvm_thread {
	pid_t tid, pid;
	int idx;
	char comm[KVM_COMM_MAX];
};

struct host_kvm {
	char *dir;
	struct kvm_vm *vm;
	int nr_vm;
	struct kvm_thread *thr;
	int nr_thr;
	unsigned frac_bits;	/* fraction bits of the scaling ratio, 0 = unknown */
	int pid_filtered;	/* a poll named pids: later polls with none (the
				 * traced tasks are gone) add no VM */
};

struct host_kvm *host_kvm_new(const char *debugfs_dir)
{
	struct host_kvm *k = calloc(1, sizeof(*k));

	if (!k)
		return NULL;
	k->dir = strdup(debugfs_dir ? debugfs_dir : KVM_DEBUGFS_DIR);
	if (!k->dir) {
		free(k);
		return NULL;
	}
	return k;
}

void host_kvm_free(struct host_kvm *k)
{
	if (!k)
		return;
	for (int i = 0; i < k->nr_vm; i++) {
		for (int j = 0; j < k->vm[i].nr_vcpu; j++) {
			free(k->vm[i].vcpu[j].offset.r);
			free(k->vm[i].vcpu[j].ratio.r);
		}
		free(k->vm[i].vcpu);
	}
	free(k->vm);
	free(k->thr);
	free(k->dir);
	free(k);
}

/* Append a reading of @val taken at host TSC @tsc. */
static void kvm_series_add(struct kvm_series *s, const char *val, uint64_t tsc, int final)
{
	struct kvm_reading *rd;

	if (s->nr == s->cap) {
		int cap = s->cap ? s->cap * 2 : 4;
		struct kvm_reading *n = realloc(s->r, cap * sizeof(*n));

		if (!n)
			return;
		s->r = n;
		s->cap = cap;
	}
	rd = &s->r[s->nr++];
	snprintf(rd->val, sizeof(rd->val), "%s", val);
	rd->tsc_host = tsc;
	rd->when = final ? KVM_END : (s->nr == 1 ? KVM_START : KVM_CHANGE);
}

/*
 * The value of debugfs file @path into @val (KVM_VAL_MAX bytes) and in
 * *@tsc a host TSC at which it held: read, stamp, read again, until two
 * reads around the stamp agree.  A stamp taken before a single read dates
 * a value KVM changed in between (a guest writing IA32_TSC_ADJUST while
 * the recorder was preempted: seen once in the KVM lab) before the
 * kvm_write_tsc_offset that made it.  0, or -1 (unreadable, or changing
 * at every try: left to the next poll).
 */
static int kvm_read_stamped(const char *path, char *val, uint64_t *tsc)
{
	char again[KVM_VAL_MAX];

	if (host_proc_read_small(path, val, KVM_VAL_MAX))
		return -1;
	for (int i = 0; i < KVM_READ_TRIES; i++) {
		*tsc = vt_rdtsc_ordered();
		if (host_proc_read_small(path, again, sizeof(again)))
			return -1;
		if (likely(!strcmp(val, again)))
			return 0;
		memcpy(val, again, KVM_VAL_MAX);
	}
	return -1;
}

static void kvm_series_note(struct kvm_series *s, const char *path, int final)
{
	char val[KVM_VAL_MAX];
	uint64_t tsc;

	if (kvm_read_stamped(path, val, &tsc))
		return;
	snprintf(s->seen.val, sizeof(s->seen.val), "%s", val);
	s->seen.tsc_host = tsc;
	s->has_seen = 1;
	if (!final && s->nr && !strcmp(s->r[s->nr - 1].val, val))
		return;
	kvm_series_add(s, val, tsc, final);
}

/* At the final poll: a series the poll could not read (QEMU has exited and
 * its VM's debugfs directory is gone, the usual case when the recorder
 * runs QEMU as its command) ends with what the last poll that could read
 * it saw, dated by that poll: the value held at least until then. */
static void kvm_series_close(struct kvm_series *s)
{
	const struct kvm_reading *last = s->nr ? &s->r[s->nr - 1] : NULL;

	/* nothing read ever, the final poll read it, or the last poll that
	 * read it stored a change already */
	if (!s->has_seen || (last && (last->when == KVM_END ||
				      last->tsc_host == s->seen.tsc_host)))
		return;
	kvm_series_add(s, s->seen.val, s->seen.tsc_host, 1);
}

static struct kvm_vm *kvm_vm_find(struct host_kvm *k, const char *dir)
{
	for (int i = 0; i < k->nr_vm; i++)
		if (!strcmp(k->vm[i].dir, dir))
			return &k->vm[i];
	return NULL;
}

static struct kvm_vm *kvm_vm_get(struct host_kvm *k, pid_t pid, const char *dir)
{
	struct kvm_vm *n = kvm_vm_find(k, dir);

	if (n)
		return n;
	n = realloc(k->vm, (k->nr_vm + 1) * sizeof(*n));
	if (!n)
		return NULL;
	k->vm = n;
	n = &k->vm[k->nr_vm++];
	memset(n, 0, sizeof(*n));
	n->pid = pid;
	snprintf(n->dir, sizeof(n->dir), "%.63s", dir);
	return n;
}

static struct kvm_vcpu *kvm_vcpu_get(struct kvm_vm *vm, int idx)
{
	struct kvm_vcpu *n;

	for (int i = 0; i < vm->nr_vcpu; i++)
		if (vm->vcpu[i].idx == idx)
			return &vm->vcpu[i];
	n = realloc(vm->vcpu, (vm->nr_vcpu + 1) * sizeof(*n));
	if (!n)
		return NULL;
	vm->vcpu = n;
	n = &vm->vcpu[vm->nr_vcpu++];
	memset(n, 0, sizeof(*n));
	n->idx = idx;
	return n;
}

static int kvm_pid_wanted(pid_t pid, const pid_t *pids, int nr)
{
	if (!nr)
		return 1;
	for (int i = 0; i < nr; i++)
		if (pids[i] == pid)
			return 1;
	return 0;
}

/* The scaling ratio's fraction bits from debugfs (48 on Intel, 32 on AMD;
 * the file exists only where KVM can scale the TSC): kept in k->frac_bits. */
static void kvm_read_frac_bits(struct host_kvm *k, const struct kvm_vm *vm, const char *vcpu)
{
	char path[KVM_PATH_MAX], val[KVM_VAL_MAX], *end;
	unsigned long v;

	snprintf(path, sizeof(path), "%s/%s/%s/tsc-scaling-ratio-frac-bits", k->dir, vm->dir,
		 vcpu);
	if (host_proc_read_small(path, val, sizeof(val)))
		return;
	v = strtoul(val, &end, 10);
	if (!*end && v > 0 && v < KVM_FRAC_BITS_LIMIT)
		k->frac_bits = (unsigned)v;
}

static void kvm_poll_vm(struct host_kvm *k, struct kvm_vm *vm, int final)
{
	char path[KVM_PATH_MAX];
	struct dirent *de;
	DIR *d;
	int idx;

	snprintf(path, sizeof(path), "%s/%s", k->dir, vm->dir);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		struct kvm_vcpu *v;

		if (strlen(de->d_name) > 32 || sscanf(de->d_name, "vcpu%d", &idx) != 1)
			continue;
		v = kvm_vcpu_get(vm, idx);
		if (!v)
			continue;
		snprintf(path, sizeof(path), "%s/%s/%s/tsc-offset", k->dir, vm->dir, de->d_name);
		kvm_series_note(&v->offset, path, final);
		snprintf(path, sizeof(path), "%s/%s/%s/tsc-scaling-ratio", k->dir, vm->dir,
			 de->d_name);
		kvm_series_note(&v->ratio, path, final);
		if (!k->frac_bits)
			kvm_read_frac_bits(k, vm, de->d_name);
	}
	closedir(d);
}

/* A poll's scan of threads: the tids listed so far (a process is listed
 * once, not once per traced thread of it). */
struct kvm_scan {
	struct host_kvm *k;
	pid_t *seen;
	int nr, cap;
};

static int kvm_scan_seen(const struct kvm_scan *s, pid_t tid)
{
	for (int i = 0; i < s->nr; i++)
		if (s->seen[i] == tid)
			return 1;
	return 0;
}

/* host_proc_each_task callback: note thread @tid of @pid if its name is
 * "CPU n/KVM" (or /TCG) and it is not known yet. */
static void kvm_note_thread(void *arg, pid_t pid, pid_t tid)
{
	struct kvm_scan *s = arg;
	struct host_kvm *k = s->k;
	char path[KVM_PATH_MAX], comm[KVM_COMM_MAX], kind[KVM_COMM_MAX];
	struct kvm_thread *n;
	int idx;

	if (s->nr == s->cap) {
		int cap = s->cap ? 2 * s->cap : 64;
		pid_t *ns = realloc(s->seen, cap * sizeof(*ns));

		if (ns) {
			s->seen = ns;
			s->cap = cap;
		}
	}
	if (s->nr < s->cap)
		s->seen[s->nr++] = tid;
	for (int i = 0; i < k->nr_thr; i++)
		if (k->thr[i].tid == tid)
			return;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	if (host_proc_read_small(path, comm, sizeof(comm)) ||
	    sscanf(comm, "CPU %d/%31s", &idx, kind) != 2)
		return;
	n = realloc(k->thr, (k->nr_thr + 1) * sizeof(*n));
	if (!n)
		return;
	k->thr = n;
	n = &k->thr[k->nr_thr++];
	n->tid = tid;
	n->pid = pid;
	n->idx = idx;
	snprintf(n->comm, sizeof(n->comm), "%s", comm);
}

/* Find "CPU n/KVM" (or /TCG) threads of the process of thread @pid,
 * unless this poll listed them already. */
static void kvm_scan_threads(struct kvm_scan *s, pid_t pid)
{
	if (!kvm_scan_seen(s, pid))
		host_proc_each_task(pid, kvm_note_thread, s);
}

void host_kvm_poll(struct host_kvm *k, const pid_t *pids, int nr, int threads, int final)
{
	struct kvm_scan scan = { .k = k };
	struct dirent *de;
	DIR *d;

	int known_only;

	/* pids once, none now: every traced task has exited, and an empty
	 * list must not widen the collection to every VM on the machine */
	if (nr)
		k->pid_filtered = 1;
	known_only = !nr && k->pid_filtered;
	for (int i = 0; threads && i < nr; i++)
		kvm_scan_threads(&scan, pids[i]);
	d = opendir(k->dir);
	while (d && (de = readdir(d))) {
		struct kvm_vm *vm;
		int pid, fd;

		if (strlen(de->d_name) >= sizeof(((struct kvm_vm *)0)->dir) ||
		    sscanf(de->d_name, "%d-%d", &pid, &fd) != 2 ||
		    !kvm_pid_wanted(pid, pids, nr))
			continue;
		vm = known_only ? kvm_vm_find(k, de->d_name) : kvm_vm_get(k, pid, de->d_name);
		if (!vm)
			continue;
		if (threads && !nr && !known_only)
			kvm_scan_threads(&scan, pid);
		kvm_poll_vm(k, vm, final);
	}
	if (d)
		closedir(d);
	free(scan.seen);
	if (!final)
		return;
	for (int i = 0; i < k->nr_vm; i++)
		for (int j = 0; j < k->vm[i].nr_vcpu; j++) {
			kvm_series_close(&k->vm[i].vcpu[j].offset);
			kvm_series_close(&k->vm[i].vcpu[j].ratio);
		}
}

int host_kvm_pids(const struct host_kvm *k, pid_t *out, int max, int threads_only)
{
	int n = 0;

	for (int i = threads_only ? k->nr_vm : 0; i < k->nr_vm + k->nr_thr; i++) {
		pid_t p = i < k->nr_vm ? k->vm[i].pid : k->thr[i - k->nr_vm].pid;
		int j;

		for (j = 0; j < n && out[j] != p; j++)
			;
		if (j == n && n < max)
			out[n++] = p;
	}
	return n;
}

int host_kvm_nr_threads(const struct host_kvm *k)
{
	return k->nr_thr;
}

pid_t host_kvm_thread_tid(const struct host_kvm *k, int i)
{
	return k->thr[i].tid;
}

const char *host_kvm_thread_comm(const struct host_kvm *k, int i)
{
	return k->thr[i].comm;
}

/* The readings @s of VM @vm's vCPU @vcpu: its tsc_scaling_ratio series
 * if @ratio, else its tsc_offset series (the .nr key, then one a reading). */
static int kvm_series_meta(struct vt_meta *m, int vm, int vcpu, int ratio,
			   const struct kvm_series *s)
{
	char key[VT_META_KEY_MAX];

	if (!s->nr)
		return 0;
	snprintf(key, sizeof(key),
		 ratio ? VT_MK_FMT_VCPU_TSC_RATIO_NR : VT_MK_FMT_VCPU_TSC_OFFSET_NR, vm, vcpu);
	if (vt_meta_set(m, key, "%d", s->nr))
		return -1;
	for (int i = 0; i < s->nr; i++) {
		snprintf(key, sizeof(key),
			 ratio ? VT_MK_FMT_VCPU_TSC_RATIO : VT_MK_FMT_VCPU_TSC_OFFSET, vm, vcpu, i);
		if (vt_meta_set(m, key, "%s %llu %s", s->r[i].val,
				(unsigned long long)s->r[i].tsc_host,
				kvm_when_name[s->r[i].when]))
			return -1;
	}
	return 0;
}

int host_kvm_to_meta(const struct host_kvm *k, struct vt_meta *m)
{
	char key[VT_META_KEY_MAX];

	struct vt_meta_vthread *vt = calloc((size_t)k->nr_thr + 1, sizeof(*vt));
	int ret;

	if (!vt)
		return vt_err_set("out of memory");
	for (int i = 0; i < k->nr_thr; i++) {
		const struct kvm_thread *t = &k->thr[i];

		vt[i] = (struct vt_meta_vthread){ .tid = t->tid, .pid = t->pid, .vcpu = t->idx };
		snprintf(vt[i].comm, sizeof(vt[i].comm), "%s", t->comm);
	}
	ret = vt_meta_set(m, VT_MK_KVM_VMS, "%d", k->nr_vm) ||
	      vt_meta_set_vthreads(m, vt, k->nr_thr);
	free(vt);
	if (ret)
		return -1;
	if (k->frac_bits && vt_meta_set(m, VT_MK_KVM_TSC_SCALING_FRAC_BITS, "%u", k->frac_bits))
		return -1;
	for (int i = 0; i < k->nr_vm; i++) {
		const struct kvm_vm *vm = &k->vm[i];

		snprintf(key, sizeof(key), VT_MK_FMT_VM_PID, i);
		if (vt_meta_set(m, key, "%d", (int)vm->pid))
			return -1;
		snprintf(key, sizeof(key), VT_MK_FMT_VM_DEBUGFS, i);
		if (vt_meta_set(m, key, "%s", vm->dir))
			return -1;
		snprintf(key, sizeof(key), VT_MK_FMT_VM_VCPUS, i);
		if (vt_meta_set(m, key, "%d", vm->nr_vcpu))
			return -1;
		for (int j = 0; j < vm->nr_vcpu; j++) {
			if (kvm_series_meta(m, i, vm->vcpu[j].idx, 0, &vm->vcpu[j].offset) ||
			    kvm_series_meta(m, i, vm->vcpu[j].idx, 1, &vm->vcpu[j].ratio))
				return -1;
		}
	}
	return 0;
}
