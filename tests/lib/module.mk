# tests/lib: tests of the shared module lib/ (uftrace format, TSC, ELF).
# mkuftrace writes known uftrace data directories for the consumer tests.
TEST_TARGETS += $(OUT)/tests/helpers/mkuftrace

$(OUT)/tests/helpers/mkuftrace: $(SRC)/tests/lib/mkuftrace.c $(OUT)/lib/libvtcore.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) $(LDFLAGS_ALL) -o $@ $< $(OUT)/lib/libvtcore.a $(VMTRACE_LIBS) -lm
