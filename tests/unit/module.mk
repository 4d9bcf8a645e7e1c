# tests/unit: C unit tests, one program per file, run by tests/run.
TEST_PROGS += $(sort $(patsubst $(SRC)/%,%,$(wildcard $(SRC)/tests/unit/t-*.c)))
