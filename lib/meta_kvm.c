/*
 * meta_kvm.c - the typed KVM facts of vmtrace.meta (lib/meta.h): the list
 * of vCPU threads the host recorder found (kvm.vcpu_threads, then
 * kvm.threadN.tid / .pid / .vcpu / .comm, docs/format/meta.md), written in
 * one place (host/kvmfacts.c's snapshot) and read in one place (align's
 * gathering layer and merge's plan).  Command thread; no per-event work.
 */
#include <stdio.h>
#include <string.h>
#include "meta.h"

int vt_meta_set_vthreads(struct vt_meta *m, const struct vt_meta_vthread *t, int n)
{
	char key[VT_META_KEY_MAX];

	if (vt_meta_set(m, VT_MK_KVM_VCPU_THREADS, "%d", n))
		return -1;
	for (int i = 0; i < n; i++) {
		snprintf(key, sizeof(key), VT_MK_FMT_THREAD_TID, (unsigned long long)i);
		if (vt_meta_set(m, key, "%d", (int)t[i].tid))
			return -1;
		snprintf(key, sizeof(key), VT_MK_FMT_THREAD_PID, (unsigned long long)i);
		if (vt_meta_set(m, key, "%d", (int)t[i].pid))
			return -1;
		snprintf(key, sizeof(key), VT_MK_FMT_THREAD_VCPU, (unsigned long long)i);
		if (vt_meta_set(m, key, "%d", (int)t[i].vcpu))
			return -1;
		snprintf(key, sizeof(key), VT_MK_FMT_THREAD_COMM, (unsigned long long)i);
		if (vt_meta_set(m, key, "%s", t[i].comm))
			return -1;
	}
	return 0;
}

int vt_meta_get_vthreads(const struct vt_meta *m, struct vt_meta_vthread *t, int max)
{
	char key[VT_META_KEY_MAX];
	uint64_t n = 0;
	int nr = 0;

	if (vt_meta_get_u64(m, VT_MK_KVM_VCPU_THREADS, &n))
		return 0;
	for (uint64_t i = 0; i < n && nr < max; i++) {
		int64_t tid, pid = 0, vcpu;
		const char *comm;

		snprintf(key, sizeof(key), VT_MK_FMT_THREAD_TID, (unsigned long long)i);
		if (vt_meta_get_i64(m, key, &tid) || tid <= 0 || tid > INT32_MAX)
			continue;
		snprintf(key, sizeof(key), VT_MK_FMT_THREAD_VCPU, (unsigned long long)i);
		if (vt_meta_get_i64(m, key, &vcpu) || vcpu < 0 || vcpu > INT32_MAX)
			continue;
		snprintf(key, sizeof(key), VT_MK_FMT_THREAD_PID, (unsigned long long)i);
		if (vt_meta_get_i64(m, key, &pid) || pid < 0 || pid > INT32_MAX)
			pid = 0;
		snprintf(key, sizeof(key), VT_MK_FMT_THREAD_COMM, (unsigned long long)i);
		comm = vt_meta_get(m, key);
		t[nr] = (struct vt_meta_vthread){ .tid = (int32_t)tid, .pid = (int32_t)pid,
						  .vcpu = (int32_t)vcpu };
		snprintf(t[nr].comm, sizeof(t[nr].comm), "%s", comm ? comm : "");
		nr++;
	}
	return nr;
}
