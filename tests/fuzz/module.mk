# tests/fuzz: libFuzzer targets, one per parser we own (tests/fuzz/fuzz-*.c).
# `make fuzz` fuzzes each for FUZZ_SECONDS (default 600) from its seed corpus
# tests/fuzz/corpus/<name>/ (+ regressions in tests/fuzz/regress/<name>/);
# `make test` replays the seeds and regressions through every target
# (tests/fuzz/t-fuzz-replay.sh), so a fixed finding stays fixed: through the
# libFuzzer binaries (clang, ASan+UBSan) and through replay-<name>, the same
# target linked with tests/fuzz/replay-main.c by the build's own CC and flags
# (instrumented by `make coverage`, sanitized by SAN=1; built without clang).
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 600
FUZZ_FLAGS   = -g -O1 -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined $(CSTD) $(CPPFLAGS_ALL)
FUZZ_SRCS    := $(sort $(wildcard $(SRC)/tests/fuzz/fuzz-*.c))
FUZZ_BINS    := $(FUZZ_SRCS:$(SRC)/tests/fuzz/%.c=$(OUT)/fuzz/%)
FUZZ_CORE    := $(CORE_SRCS:%.c=$(OUT)/fuzz/obj/%.o)
FUZZ_EXTRA_LIBS ?=

$(OUT)/fuzz/obj/%.o: $(SRC)/%.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -c -o $@ $<

$(OUT)/fuzz/%: $(SRC)/tests/fuzz/%.c $(FUZZ_CORE)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_CORE) $(FUZZ_EXTRA_LIBS) $(VMTRACE_LIBS) -lm

# the libFuzzer runtime of $(FUZZ_CC), if it has one: without it the
# libFuzzer binaries are not part of `make test` (the replay binaries are)
FUZZ_RT := $(wildcard $(shell $(FUZZ_CC) -print-runtime-dir 2>/dev/null)/libclang_rt.fuzzer*.a)
ifneq ($(FUZZ_RT),)
TEST_TARGETS += $(FUZZ_BINS)
endif

REPLAY_BINS  := $(FUZZ_SRCS:$(SRC)/tests/fuzz/fuzz-%.c=$(OUT)/fuzz/replay-%)
REPLAY_EXTRA ?=
$(OUT)/fuzz/replay-%: $(SRC)/tests/fuzz/fuzz-%.c $(SRC)/tests/fuzz/replay-main.c \
		$(SRC)/tests/fuzz/fuzz-util.h $(OUT)/lib/libvtcore.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) $(LDFLAGS_ALL) -o $@ $< $(SRC)/tests/fuzz/replay-main.c \
		$(REPLAY_EXTRA) $(OUT)/lib/libvtcore.a $(VMTRACE_LIBS) -lm
TEST_TARGETS += $(REPLAY_BINS)
# libclang-rt-dev: the runtime (libFuzzer, sanitizers) of Debian's default
# clang, whichever version the release has (14 on Debian 12, 19 on 13)
TEST_DEPS += clang libclang-rt-dev

.PHONY: fuzz fuzz-build
fuzz-build: $(FUZZ_BINS)
fuzz: test-deps fuzz-build
	@VT_SRC=$(SRC) VT_BUILD=$(OUT) FUZZ_SECONDS=$(FUZZ_SECONDS) $(SRC)/tests/fuzz/run $(F)
# the targets share fuzz-util.h
$(FUZZ_BINS): $(SRC)/tests/fuzz/fuzz-util.h
# keep the instrumented objects: as make intermediates they were deleted
# after each link, racing with a parallel `make test` / `make fuzz`
.SECONDARY: $(FUZZ_CORE)
