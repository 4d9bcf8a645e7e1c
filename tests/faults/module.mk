# tests/faults: fault tests (SIGKILL mid-trace, full disk, one-byte
# corruption of every input kind, recorder output safety, valgrind on the
# mcount runtime).  Scripts only; they use the tools the other modules build.
TEST_DEPS += valgrind uftrace trace-cmd python3
