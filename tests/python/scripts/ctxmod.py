# vmtrace.trace() as a context manager; also run as `-m ctxmod`.
import sys

import vmtrace


def inner():
    return len("abc")


def outer():
    return inner()


if __name__ == "__main__" and len(sys.argv) > 1 and sys.argv[1] == "ctx":
    with vmtrace.trace(sys.argv[2], clock="ns"):
        outer()
    outer()	# after the with block: not traced
else:
    outer()
