# tests/fresh: the fresh-machine test (.ci/run runs tests/fresh/fresh-root):
# a debootstrapped bare Debian root (12 or 13), the checkout cloned into it.
TEST_DEPS += debootstrap git
