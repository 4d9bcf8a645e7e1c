# examples/: the `make runkvm` workflows.  Each example has its own Makefile
# (run by the top-level `runkvm` target and by tests/examples); nothing here
# joins the main build.  Host packages the examples need: QEMU, busybox-static
# (the guest's userland, and its cpio writes the initramfs), e2fsprogs (the
# data disk), binutils (objcopy reads kernel module dependencies).  All of
# them are `make runkvm`'s (DEPS, not TEST_DEPS).
DEPS += qemu-system-x86 busybox-static e2fsprogs binutils

# The examples' guest images are built before the tests run: the KVM tests
# run them inside the KVM lab, where the build directory is read-only.
TEST_TARGETS += examples-images
.PHONY: examples-images
examples-images: $(OUT)/bin/vmtrace $(TARGETS)
	@$(MAKE) -s --no-print-directory -C $(SRC)/examples/unikernel O=$(OUT) images
	@$(MAKE) -s --no-print-directory -C $(SRC)/examples/python-virtio O=$(OUT) image
