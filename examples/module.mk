# examples/: the `make runkvm` workflows.  Each example has its own Makefile
# (run by the top-level `runkvm` target and by tests/examples); nothing here
# joins the main build.  Host packages the examples need: QEMU, busybox-static
# (the guest's userland, and its cpio writes the initramfs), e2fsprogs (the
# data disk), binutils (objcopy reads kernel module dependencies).
DEPS += qemu-system-x86 busybox-static e2fsprogs binutils
