/*
 * t-kvmfacts.c - unit test of host/kvmfacts.c against a fake debugfs tree
 * (DIR/<pid>-<fd>/vcpuN/tsc-offset, tsc-scaling-ratio) and a real thread
 * of this process named "CPU 0/KVM": readings at start, on change, at the
 * end, each with a host TSC; the vCPU thread found; the meta keys of
 * docs/format/meta.md, spelt out as the page spells them (not by their
 * lib/meta_keys.h names: this checks what lands in the file).
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "check.h"
#include "kvmfacts.h"
#include "meta.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int named, done;
static pid_t vcpu_tid;

static void *vcpu_thread(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "CPU 0/KVM");
	pthread_mutex_lock(&lock);
	vcpu_tid = (pid_t)syscall(SYS_gettid);
	named = 1;
	pthread_cond_broadcast(&cond);
	while (!done)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	return NULL;
}

static void put(const char *path, const char *val)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(val, f);
		fclose(f);
	}
}

int main(void)
{
	char dir[] = "/tmp/vt-kvmf.XXXXXX", vm[256], vcpu[300], off[320], ratio[340], frac[360], key[128];
	pid_t me = getpid();
	struct host_kvm *k;
	struct vt_meta *m;
	pthread_t th;
	uint64_t tsc0 = 0, tsc2 = 0;
	const char *v;

	if (!mkdtemp(dir))
		return 1;
	snprintf(vm, sizeof(vm), "%s/%d-11", dir, (int)me);
	snprintf(vcpu, sizeof(vcpu), "%s/vcpu0", vm);
	snprintf(off, sizeof(off), "%s/tsc-offset", vcpu);
	snprintf(ratio, sizeof(ratio), "%s/tsc-scaling-ratio", vcpu);
	mkdir(vm, 0755);
	mkdir(vcpu, 0755);
	put(off, "-123456789\n");
	put(ratio, "281474976710656\n");
	snprintf(frac, sizeof(frac), "%s/tsc-scaling-ratio-frac-bits", vcpu);
	put(frac, "48\n");

	pthread_create(&th, NULL, vcpu_thread, NULL);
	pthread_mutex_lock(&lock);
	while (!named)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);

	k = host_kvm_new(dir);
	CHECK(k != NULL);
	host_kvm_poll(k, &me, 1, 1, 0);		/* start */
	host_kvm_poll(k, &me, 1, 1, 0);		/* unchanged: no reading */
	put(off, "0\n");
	host_kvm_poll(k, &me, 1, 1, 0);		/* change */
	host_kvm_poll(k, &me, 1, 1, 1);		/* end */

	CHECK(host_kvm_nr_threads(k) == 1);
	CHECK(host_kvm_thread_tid(k, 0) == vcpu_tid);
	CHECK_STR(host_kvm_thread_comm(k, 0), "CPU 0/KVM");

	m = vt_meta_new();
	CHECK(host_kvm_to_meta(k, m) == 0);
	CHECK_STR(vt_meta_get(m, "kvm.vms"), "1");
	snprintf(key, sizeof(key), "%d", (int)me);
	CHECK_STR(vt_meta_get(m, "kvm.vm0.pid"), key);
	snprintf(key, sizeof(key), "%d-11", (int)me);
	CHECK_STR(vt_meta_get(m, "kvm.vm0.debugfs"), key);
	CHECK_STR(vt_meta_get(m, "kvm.vm0.vcpus"), "1");
	CHECK_STR(vt_meta_get(m, "kvm.vcpu_threads"), "1");
	CHECK_STR(vt_meta_get(m, "kvm.thread0.vcpu"), "0");
	CHECK_STR(vt_meta_get(m, "kvm.thread0.comm"), "CPU 0/KVM");
	CHECK_STR(vt_meta_get(m, "kvm.vm0.vcpu0.tsc_offset.nr"), "3");
	v = vt_meta_get(m, "kvm.vm0.vcpu0.tsc_offset.0");
	CHECK(v && sscanf(v, "-123456789 %" SCNu64 " start", &tsc0) == 1 && tsc0 > 0);
	v = vt_meta_get(m, "kvm.vm0.vcpu0.tsc_offset.1");
	CHECK(v && strstr(v, "0 ") == v && strstr(v, " change"));
	v = vt_meta_get(m, "kvm.vm0.vcpu0.tsc_offset.2");
	CHECK(v && sscanf(v, "0 %" SCNu64 " end", &tsc2) == 1 && tsc2 >= tsc0);
	CHECK_STR(vt_meta_get(m, "kvm.vm0.vcpu0.tsc_scaling_ratio.nr"), "2");
	CHECK_STR(vt_meta_get(m, "kvm.tsc_scaling_frac_bits"), "48");

	/* QEMU exits before the recorder stops (record -- qemu): the final
	 * poll finds neither the process nor its VM directory.  The series
	 * end with what the last poll saw (at that poll's TSC); a VM of
	 * another process that appears meanwhile is not collected. */
	vt_meta_free(m);
	host_kvm_free(k);
	k = host_kvm_new(dir);
	CHECK(k != NULL);
	host_kvm_poll(k, &me, 1, 1, 0);		/* start: "0" */
	host_kvm_poll(k, &me, 1, 1, 0);		/* unchanged: seen again */
	{
		char other_vm[300], other_vcpu[320], other_off[340];

		snprintf(other_vm, sizeof(other_vm), "%s/1-12", dir);
		snprintf(other_vcpu, sizeof(other_vcpu), "%s/vcpu0", other_vm);
		snprintf(other_off, sizeof(other_off), "%s/tsc-offset", other_vcpu);
		mkdir(other_vm, 0755);
		mkdir(other_vcpu, 0755);
		put(other_off, "-5\n");
		unlink(off);
		unlink(ratio);
		unlink(frac);
		rmdir(vcpu);
		rmdir(vm);
		host_kvm_poll(k, NULL, 0, 1, 0);	/* no live pid: known VMs only */
		host_kvm_poll(k, NULL, 0, 1, 1);	/* end */
		unlink(other_off);
		rmdir(other_vcpu);
		rmdir(other_vm);
	}
	m = vt_meta_new();
	CHECK(host_kvm_to_meta(k, m) == 0);
	CHECK_STR(vt_meta_get(m, "kvm.vms"), "1");
	CHECK_STR(vt_meta_get(m, "kvm.vcpu_threads"), "1");
	CHECK_STR(vt_meta_get(m, "kvm.vm0.vcpu0.tsc_offset.nr"), "2");
	v = vt_meta_get(m, "kvm.vm0.vcpu0.tsc_offset.0");
	CHECK(v && sscanf(v, "0 %" SCNu64 " start", &tsc0) == 1);
	v = vt_meta_get(m, "kvm.vm0.vcpu0.tsc_offset.1");
	CHECK(v && sscanf(v, "0 %" SCNu64 " end", &tsc2) == 1 && tsc2 > tsc0);
	CHECK_STR(vt_meta_get(m, "kvm.vm0.vcpu0.tsc_scaling_ratio.nr"), "2");
	v = vt_meta_get(m, "kvm.vm0.vcpu0.tsc_scaling_ratio.1");
	CHECK(v && strstr(v, "281474976710656 ") == v && strstr(v, " end"));
	CHECK(vt_meta_get(m, "kvm.vm1.pid") == NULL);

	/* a VM of another process is ignored when pids are given */
	vt_meta_free(m);
	host_kvm_free(k);
	mkdir(vm, 0755);
	mkdir(vcpu, 0755);
	put(off, "0\n");
	put(ratio, "281474976710656\n");
	put(frac, "48\n");
	k = host_kvm_new(dir);
	{
		pid_t other = 1;

		host_kvm_poll(k, &other, 1, 1, 0);
	}
	m = vt_meta_new();
	host_kvm_to_meta(k, m);
	CHECK_STR(vt_meta_get(m, "kvm.vms"), "0");
	CHECK(vt_meta_get(m, "kvm.tsc_scaling_frac_bits") == NULL);
	vt_meta_free(m);
	host_kvm_free(k);

	pthread_mutex_lock(&lock);
	done = 1;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	pthread_join(th, NULL);
	unlink(off);
	unlink(ratio);
	unlink(frac);
	rmdir(vcpu);
	rmdir(vm);
	rmdir(dir);
	return check_done();
}
