# tests/mutate: `make mutate` - the mutation harness (tools/mutate): each
# mutant of tests/mutate/mutants.txt applied to a clean copy of HEAD (a
# temp dir), rebuilt, its fast tests run; killed/survived listed, the
# table in $(OUT)/mutate.md.  M='ID ...' runs only the mutants whose id
# has one of those substrings.  Never part of `make test` (docs/testing.md).
.PHONY: mutate
mutate: deps
	@$(SRC)/tools/mutate -o $(OUT)/mutate.md $(M)
