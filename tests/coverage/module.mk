# tests/coverage: `make coverage` - line and branch coverage of the fast
# tests per folder (tools/coverage: gcc --coverage build in build/cov,
# gcovr), written to docs/coverage.md.  T='...' limits the tests.
DEPS += gcovr
.PHONY: coverage
coverage: deps
	@$(SRC)/tools/coverage $(T)
