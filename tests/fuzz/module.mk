# tests/fuzz: libFuzzer targets, one per parser we own (tests/fuzz/fuzz-*.c).
# `make fuzz` fuzzes each for FUZZ_SECONDS (default 600) from its seed corpus
# tests/fuzz/corpus/<name>/ (+ regressions in tests/fuzz/regress/<name>/);
# `make test` replays the seeds and regressions through every target
# (tests/fuzz/t-fuzz-replay.sh), so a fixed finding stays fixed.
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

TEST_TARGETS += $(FUZZ_BINS)
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
