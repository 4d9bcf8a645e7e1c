# An audit hook that refuses sys.setprofile: vmtrace.start() raises the
# hook's error and leaves nothing installed; once allowed, start() works.
import sys
import threading

import vmtrace

refuse = [True]


def hook(event, args):
    if event == "sys.setprofile" and refuse[0]:
        raise PermissionError("no profiling here")


def f():
    return 1


sys.addaudithook(hook)
try:
    vmtrace.start(sys.argv[1], clock="ns")
    sys.exit("start() did not raise")
except PermissionError as e:
    assert str(e) == "no profiling here", e
assert not vmtrace.active()
assert sys.getprofile() is None and threading._profile_hook is None
refuse[0] = False
vmtrace.start(sys.argv[1], clock="ns")
f()
vmtrace.stop()
