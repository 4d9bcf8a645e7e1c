"""vmtrace: trace a Python program's calls with the raw TSC.

Every Python call (and, in the modules named by ``lines``, every line) is
written as it happens into a uftrace data directory, one memory-mapped file
per thread, timestamps in the TSC clock of the machine (guest) it runs on.

    import vmtrace
    vmtrace.start("trace.data", lines=["myproject"])   # default: ./vmtrace-python
    ...
    vmtrace.stop()

    with vmtrace.trace("trace.data"):
        ...
"""
import atexit
import contextlib
import os
import sys

from . import _vmtrace

__all__ = ["start", "stop", "trace", "active", "finalize", "marker", "backend", "DEFAULT_DIR"]

# where a trace goes without a dir: vmtrace-KIND in the current directory
# (docs/cli.md, "Default output")
DEFAULT_DIR = "vmtrace-python"
_MARKERS_MAX_MS = 3600 * 1000
backend = _vmtrace.backend
_atexit_done = False


def _split(lines):
    if lines is None:
        return ()
    if isinstance(lines, str):
        lines = lines.split(",")
    return tuple(p.strip() for p in lines if p.strip())


def marker():
    """Send one in-band guest<->host sync marker: a hypercall whose registers
    carry this guest's TSC readings into the host's kvm:kvm_hypercall event,
    so `vmtrace align HOSTDIR` proves the clock map from the host trace alone
    (docs/format/markers.md).  Any user may send one.  Returns its sequence
    number, or None when not running under KVM (nothing is sent)."""
    return _vmtrace.marker()


def start(dir=DEFAULT_DIR, lines=None, c_calls=True, max_depth=0, clock=None,
          markers_ms=0):
    """Begin tracing all threads into the uftrace directory ``dir``.

    lines: module-name prefixes ("pkg,other") whose line events are wanted.
    c_calls: record calls of builtins and other C functions.
    max_depth: do not record calls deeper than this (0: uftrace's 1024).
    clock: "tsc" (default) or "ns" (CLOCK_MONOTONIC, for direct uftrace use);
    the VMTRACE_CLOCK environment variable sets the default.
    markers_ms: under KVM, send an in-band sync marker every this many ms
    from a C thread (not traced) while tracing (0: none).
    """
    global _atexit_done
    markers_ms = int(markers_ms)
    if not 0 <= markers_ms <= _MARKERS_MAX_MS:
        raise ValueError("vmtrace: markers_ms %d: want 0..%d" % (markers_ms, _MARKERS_MAX_MS))
    clock = clock or os.environ.get("VMTRACE_CLOCK", "tsc")
    _vmtrace.start(os.path.abspath(dir), lines=_split(lines), c_calls=bool(c_calls),
                   max_depth=int(max_depth), exename=os.path.realpath(sys.executable),
                   cmdline=" ".join([sys.executable] + sys.argv), clock=clock)
    if markers_ms:
        _vmtrace.markers_start(markers_ms)
    if not _atexit_done:
        atexit.register(_at_exit)
        _atexit_done = True


def stop(exit_status=-1):
    """End tracing; the directory is complete.  Returns a dict with 'lost'
    (records not written, e.g. the disk was full), 'errno' and 'dir', or
    None if tracing was off."""
    _vmtrace.markers_stop()
    res = _vmtrace.stop(exit_status=exit_status)
    if res is not None:
        finalize(res["dir"])
    return res


def active():
    """True while tracing."""
    return _vmtrace.active()


def _pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def finalize(dir):
    """Cut the .dat files of finished writers in ``dir`` and its fork-PID
    children after their last complete record (a writer killed or ended by
    os._exit leaves preallocated space), then make each directory readable
    by uftrace (ns copies, the TSC stamps kept beside: ``vmtrace finalize``
    does the same).  Live writers are left alone."""
    for root, dirs, files in os.walk(dir):
        base = os.path.basename(root)
        if root != dir:
            if not base.startswith("fork-"):
                continue
            try:
                if _pid_alive(int(base[5:])):
                    continue
            except ValueError:
                continue
        for f in files:
            if f.endswith(".dat"):
                _vmtrace.trim(os.path.join(root, f))
        _vmtrace.finish_ns(root)


def _at_exit():
    if _vmtrace.active():
        stop()


@contextlib.contextmanager
def trace(dir=DEFAULT_DIR, **kw):
    """Context manager: trace the body of the with statement."""
    start(dir, **kw)
    try:
        yield
    finally:
        stop()
