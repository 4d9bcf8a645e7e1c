/*
 * kvm-probe.c - vt-kvm-probe: says in one line whether this machine can run
 * a KVM guest, for the tests and examples that choose between KVM and TCG
 * (tests/lib/kvm.sh, examples/common/vm.sh).  It opens /dev/kvm (or the
 * device given), checks KVM_GET_API_VERSION, creates a VM and one vCPU and
 * closes them again: an existing /dev/kvm is not enough (a module without
 * hardware support, a device node left in a container, a VM limit).
 * A PVM /dev/kvm (the kvm_pvm module, neither kvm_amd nor kvm_intel) is
 * not a full KVM for vmtrace: its kvm_write_tsc_offset is not the guest's
 * offset and Linux guests hang there; it is refused unless VT_KVM=direct.
 * Single-threaded command; no allocation.
 *
 * usage: vt-kvm-probe [DEVICE]
 * exit:  0 usable; 4 no permission; 5 no (full) KVM here; 2 usage.  The one line
 *        printed (stdout on success, stderr otherwise) gives the reason.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include "err.h"

#define PROBE_DEFAULT_DEV	"/dev/kvm"
#define PROBE_API_VERSION	12	/* the only stable KVM API there is */
#define PROBE_VCPU_ID		0

/* ioctl() retried when a signal interrupts it */
static int probe_ioctl(int fd, unsigned long req, unsigned long arg)
{
	int r;

	do
		r = ioctl(fd, req, arg);
	while (r < 0 && errno == EINTR);
	return r;
}

/* 1 when the KVM here is PVM's (kvm_pvm loaded, no hardware KVM module) */
static int probe_is_pvm(void)
{
	return !access("/sys/module/kvm_pvm", F_OK) && access("/sys/module/kvm_amd", F_OK) &&
	       access("/sys/module/kvm_intel", F_OK);
}

/* exit code for a failed open/ioctl */
static int probe_code(int err)
{
	return err == EACCES || err == EPERM ? VT_EXIT_PERM : VT_EXIT_UNSUPPORTED;
}

int main(int argc, char **argv)
{
	const char *dev = PROBE_DEFAULT_DEV;
	int kvm, vm, vcpu, api, tsc_control, err;

	if (argc > 2 || (argc == 2 && argv[1][0] == '-')) {
		fprintf(stderr, "usage: vt-kvm-probe [DEVICE]   (default %s)\n", PROBE_DEFAULT_DEV);
		return VT_EXIT_USAGE;
	}
	if (argc == 2)
		dev = argv[1];
	kvm = open(dev, O_RDWR | O_CLOEXEC);
	if (kvm < 0) {
		err = errno;
		fprintf(stderr, "no %s: cannot open it read-write: %s\n", dev, strerror(err));
		return probe_code(err);
	}
	if (probe_is_pvm() && !(getenv("VT_KVM") && !strcmp(getenv("VT_KVM"), "direct"))) {
		fprintf(stderr, "no full KVM: %s is PVM's (kvm_pvm): its TSC offsets are not the guest's and Linux guests hang (VT_KVM=direct uses it anyway)\n", dev);
		close(kvm);
		return VT_EXIT_UNSUPPORTED;
	}
	api = probe_ioctl(kvm, KVM_GET_API_VERSION, 0);
	if (api != PROBE_API_VERSION) {
		err = errno;
		if (api < 0)
			fprintf(stderr, "no KVM at %s: KVM_GET_API_VERSION failed: %s\n", dev,
				strerror(err));
		else
			fprintf(stderr, "no KVM at %s: KVM API version %d, want %d\n", dev, api,
				PROBE_API_VERSION);
		close(kvm);
		return VT_EXIT_UNSUPPORTED;
	}
	vm = probe_ioctl(kvm, KVM_CREATE_VM, 0);
	if (vm < 0) {
		err = errno;
		fprintf(stderr, "no KVM at %s: KVM_CREATE_VM failed: %s\n", dev, strerror(err));
		close(kvm);
		return probe_code(err);
	}
	vcpu = probe_ioctl(vm, KVM_CREATE_VCPU, PROBE_VCPU_ID);
	if (vcpu < 0) {
		err = errno;
		fprintf(stderr, "no KVM at %s: KVM_CREATE_VCPU failed: %s\n", dev, strerror(err));
		close(vm);
		close(kvm);
		return probe_code(err);
	}
	tsc_control = probe_ioctl(kvm, KVM_CHECK_EXTENSION, KVM_CAP_TSC_CONTROL);
	printf("kvm ok: %s API %d, VM and vCPU %d created, TSC scaling %s\n", dev, api,
	       PROBE_VCPU_ID, tsc_control > 0 ? "yes" : "no");
	close(vcpu);
	close(vm);
	close(kvm);
	return VT_EXIT_OK;
}
