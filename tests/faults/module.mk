# tests/faults: fault tests (SIGKILL mid-trace, full disk, one-byte
# corruption of every input kind, recorder output safety, valgrind on the
# mcount runtime, allocation failures).  Scripts, and the one shim below;
# they use the tools the other modules build.
TEST_DEPS += valgrind uftrace trace-cmd python3

# the allocation-failure shim of t-fault-oom (LD_PRELOAD): built without the
# sanitizer and coverage flags of the build (it is the malloc the sanitizer's
# runtime sits behind, and gcov's runtime must not run inside malloc)
TEST_TARGETS += $(OUT)/tests/faults/failalloc.so
$(OUT)/tests/faults/failalloc.so: $(SRC)/tests/faults/failalloc.c
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(OPT) -g $(WARN) -fPIC -fvisibility=hidden -shared -o $@ $< -ldl
