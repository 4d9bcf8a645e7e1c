/*
 * cmd_lab.c - `vmtrace lab`: runs a command inside the KVM lab, a Linux host
 * with a working /dev/kvm nested under QEMU's TCG (docs/lab.md).  The lab
 * is a shell program (it builds an initramfs and drives QEMU), installed
 * beside the vmtrace binary as vmtrace-lab; this subcommand finds it there
 * and replaces itself with it, so its exit status is the lab's.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "err.h"

/*
 * cmd_lab - exec BINDIR/vmtrace-lab with our arguments.
 * @argc, @argv: "lab" and the lab's options and command.
 * Returns only on failure: VT_EXIT_UNSUPPORTED when vmtrace-lab is not
 * installed beside this binary, VT_EXIT_FAIL when it cannot be run.
 */
int cmd_lab(int argc, char **argv)
{
	char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
	char *slash;

	if (n <= 0)
		vt_die(VT_EXIT_FAIL, "lab: cannot read /proc/self/exe: %s", strerror(errno));
	path[n] = '\0';
	slash = strrchr(path, '/');
	if (!slash || (size_t)(slash - path) + sizeof("/vmtrace-lab") > sizeof(path))
		vt_die(VT_EXIT_FAIL, "lab: binary path too long: %s", path);
	strcpy(slash, "/vmtrace-lab");
	if (access(path, X_OK))
		vt_die(VT_EXIT_UNSUPPORTED, "lab: %s not installed beside vmtrace (make builds it)", path);
	argv[0] = path;
	(void)argc;
	execv(path, argv);
	vt_die(VT_EXIT_FAIL, "lab: cannot run %s: %s", path, strerror(errno));
}
