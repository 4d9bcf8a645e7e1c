# tests/fresh: the fresh-machine test (.ci/run runs tests/fresh/fresh-root):
# a debootstrapped bare Debian 12 root, the checkout cloned into it.
DEPS += debootstrap git
