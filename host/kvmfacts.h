/*
 * kvmfacts.h - KVM facts of traced QEMU processes: their vCPU threads
 * ("CPU n/KVM") and, from debugfs (/sys/kernel/debug/kvm/<pid>-<fd>/vcpuN),
 * every vCPU's tsc-offset and tsc-scaling-ratio with the host TSC at which
 * they were read: at start, on every change seen by a poll, and at the end.
 * Main thread of the recorder only; allocates.
 */
#ifndef HOST_KVMFACTS_H
#define HOST_KVMFACTS_H

#include <sys/types.h>
#include "meta.h"

struct host_kvm;

/* @debugfs_dir NULL = /sys/kernel/debug/kvm.  NULL on allocation failure. */
struct host_kvm *host_kvm_new(const char *debugfs_dir);
void host_kvm_free(struct host_kvm *k);

/* One poll: look at the VMs of the processes @pids[0..nr) (all VMs when
 * @nr is 0 and no earlier poll named pids; only the VMs already known when
 * one did: the traced processes have exited), read their vCPU threads
 * (only with @threads: the caller knows when none can have started) and
 * TSC facts, and remember changes.  @final marks the readings as the end
 * ones; a value the final poll cannot read (the VM is gone) ends with what
 * the last poll that could read it saw.  Never fails: facts that cannot be
 * read are simply absent. */
void host_kvm_poll(struct host_kvm *k, const pid_t *pids, int nr, int threads, int final);

/* The QEMU processes known (their VMs' and vCPU threads'; only those
 * with vCPU threads found with @threads_only): up to @max in @out,
 * without repeats; returns how many. */
int host_kvm_pids(const struct host_kvm *k, pid_t *out, int max, int threads_only);

/* Number of vCPU threads found, and the i-th one's tid and name. */
int host_kvm_nr_threads(const struct host_kvm *k);
pid_t host_kvm_thread_tid(const struct host_kvm *k, int i);
const char *host_kvm_thread_comm(const struct host_kvm *k, int i);

/* Store the facts in @m under kvm.* (docs/format/meta.md).  0 or -1. */
int host_kvm_to_meta(const struct host_kvm *k, struct vt_meta *m);

#endif
