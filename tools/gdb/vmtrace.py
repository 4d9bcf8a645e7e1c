# tools/gdb/vmtrace.py - gdb extension: save the records a vmtrace-traced
# program still holds in memory, from a live process or a core file, so
# that a crashed program's last events are not lost.
#
#   (gdb) source tools/gdb/vmtrace.py
#   (gdb) vmtrace-dump [--from SRCDIR] [--force] DIR
#
# The Linux mcount runtime (guest/mcount/linux.c, libvmtrace-mcount.so)
# keeps each thread's unflushed records in a per-thread buffer and links
# every live thread into the list `mcount_threads`; a thread's
# <TID>.dat on disk holds its first `written` bytes.  vmtrace-dump copies
# the trace directory the program was writing (SRCDIR; default: the
# runtime's own `mcount_dir`, resolved against the process's working
# directory when live, gdb's when reading a core) to DIR and appends each
# thread's buffered records to DIR/<TID>.dat.  The result is an ordinary
# vmtrace/uftrace data directory (uftrace replay, vmtrace merge); its
# vmtrace.meta gains dump.from=core|live and dump.records=N (through
# `vmtrace meta`, when the vmtrace command is found).
#
# The runtime must have its debug information (it is built with -g): the
# layout of struct mcount_thread is read from it.  Memory of a core file
# is untrusted: sizes are checked against the thread's mapping, the list
# walk is bounded and a torn last record (bad magic) is dropped.

import os
import shutil
import subprocess
import sys

import gdb

# gdb's `source` does not set __file__: the path comes from the code object
_HERE = os.path.dirname(os.path.abspath(sys._getframe().f_code.co_filename))

RECORD_BYTES = 16
RECORD_MAGIC = 5
MAX_THREADS = 1 << 16


def _static(name):
    """The value of the runtime's static variable @name, or None."""
    sym = None
    if hasattr(gdb, "lookup_static_symbol"):
        sym = gdb.lookup_static_symbol(name)
    if sym is None:
        sym = gdb.lookup_global_symbol(name)
    if sym is None:
        return None
    return sym.value()


def _is_core():
    return "core dump" in gdb.execute("info target", to_string=True)


def _vmtrace_bin():
    """The vmtrace command: $VT_BIN, build/bin/vmtrace of this tree, PATH."""
    cands = [os.environ.get("VT_BIN", "")]
    cands.append(os.path.join(_HERE, "..", "..", "build", "bin", "vmtrace"))
    cands.append(shutil.which("vmtrace") or "")
    for c in cands:
        if c and os.access(c, os.X_OK):
            return c
    return None


def _good_prefix(data):
    """Length of the longest prefix of whole records with a valid magic."""
    n = len(data) - len(data) % RECORD_BYTES
    good = 0
    for off in range(0, n, RECORD_BYTES):
        bits = int.from_bytes(data[off + 8:off + 16], "little")
        if (bits >> 3) & 7 != RECORD_MAGIC:
            break
        good = off + RECORD_BYTES
    return good


class _Thread:
    def __init__(self, tid, data, written, dropped):
        self.tid = tid
        self.data = data          # bytes of whole records, in order
        self.written = written    # bytes the .dat on disk should hold
        self.dropped = dropped    # torn/invalid bytes not saved


def read_threads():
    """Walk mcount_threads and read every thread's unflushed records."""
    head = _static("mcount_threads")
    if head is None:
        raise gdb.GdbError(
            "vmtrace-dump: no symbol mcount_threads: is libvmtrace-mcount.so "
            "loaded here, with its debug information?")
    inf = gdb.selected_inferior()
    out = []
    seen = set()
    t = head
    while int(t) != 0:
        addr = int(t)
        if addr in seen or len(seen) >= MAX_THREADS:
            gdb.write("vmtrace-dump: warning: the thread list loops or is too "
                      "long; stopped at %d threads\n" % len(seen))
            break
        seen.add(addr)
        th = t.dereference()
        try:
            tid = int(th["tid"])
            buf = int(th["buf"])
            pos = int(th["ctx"]["pos"])
            map_len = int(th["map_len"])
            written = int(th["written"])
            dead = int(th["dead"])
            nxt = th["next"]
        except gdb.MemoryError as e:
            gdb.write("vmtrace-dump: warning: thread at %#x unreadable: %s\n" % (addr, e))
            break
        t = nxt
        if dead or buf == 0:
            continue
        nbytes = pos - buf
        if nbytes < 0 or nbytes > map_len or tid <= 0:
            gdb.write("vmtrace-dump: warning: thread %d: implausible buffer "
                      "(buf %#x pos %#x); skipped\n" % (tid, buf, pos))
            continue
        try:
            data = bytes(inf.read_memory(buf, nbytes)) if nbytes else b""
        except gdb.MemoryError as e:
            gdb.write("vmtrace-dump: warning: thread %d: buffer unreadable: %s\n" % (tid, e))
            continue
        good = _good_prefix(data)
        out.append(_Thread(tid, data[:good], max(written, 0), nbytes - good))
    return out


def _source_dir(arg_from):
    if arg_from:
        return arg_from
    d = _static("mcount_dir")
    if d is None:
        return None
    path = d.string()
    if not path or os.path.isabs(path):
        return path or None
    if not _is_core():
        pid = gdb.selected_inferior().pid
        return os.path.join("/proc/%d/cwd" % pid, path)
    return path


def dump(dest, src, force):
    """Write the trace directory @dest; returns (threads, records)."""
    threads = read_threads()
    if os.path.exists(dest) and os.listdir(dest) and not force:
        raise gdb.GdbError("vmtrace-dump: %s exists and is not empty "
                           "(--force replaces it)" % dest)
    os.makedirs(dest, exist_ok=True)
    if src and os.path.isdir(src):
        for name in os.listdir(src):
            p = os.path.join(src, name)
            if os.path.isfile(p) and not name.startswith("."):
                shutil.copyfile(p, os.path.join(dest, name))
    else:
        gdb.write("vmtrace-dump: warning: trace directory %s not found (give "
                  "--from DIR): writing only the buffered records, without "
                  "info, task.txt, maps or symbols\n" % (src or "?"))
    records = 0
    for th in threads:
        path = os.path.join(dest, "%d.dat" % th.tid)
        have = os.path.getsize(path) if os.path.exists(path) else 0
        if have < th.written:
            gdb.write("vmtrace-dump: warning: %s holds %d bytes, the runtime "
                      "wrote %d: %d bytes are missing before the buffered "
                      "records\n" % (path, have, th.written, th.written - have))
        with open(path, "ab") as f:
            f.truncate(min(have, th.written) - min(have, th.written) % RECORD_BYTES)
            f.write(th.data)
        records += len(th.data) // RECORD_BYTES
        if th.dropped:
            gdb.write("vmtrace-dump: thread %d: dropped %d bytes of a torn "
                      "record\n" % (th.tid, th.dropped))
    return threads, records


class VmtraceDump(gdb.Command):
    """Save vmtrace's unflushed per-thread records as a trace directory.

Usage: vmtrace-dump [--from SRCDIR] [--force] DIR

Copies the trace directory the program writes (SRCDIR, default the
runtime's mcount_dir) to DIR and appends every live thread's buffered
records to DIR/<TID>.dat.  Works on a live process or a core file."""

    def __init__(self):
        super().__init__("vmtrace-dump", gdb.COMMAND_DATA, gdb.COMPLETE_FILENAME)

    def invoke(self, arg, from_tty):
        argv = gdb.string_to_argv(arg)
        src = None
        force = False
        dest = None
        i = 0
        while i < len(argv):
            a = argv[i]
            if a == "--from" and i + 1 < len(argv):
                src = argv[i + 1]
                i += 1
            elif a == "--force":
                force = True
            elif a.startswith("-") or dest is not None:
                raise gdb.GdbError("usage: vmtrace-dump [--from SRCDIR] [--force] DIR")
            else:
                dest = a
            i += 1
        if dest is None:
            raise gdb.GdbError("usage: vmtrace-dump [--from SRCDIR] [--force] DIR")
        kind = "core" if _is_core() else "live"
        threads, records = dump(dest, _source_dir(src), force)
        vm = _vmtrace_bin()
        if vm and os.path.exists(os.path.join(dest, "vmtrace.meta")):
            r = subprocess.run([vm, "meta", dest, "dump.from=" + kind,
                                "dump.records=%d" % records],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            if r.returncode:
                gdb.write("vmtrace-dump: warning: vmtrace meta: %s" % r.stdout.decode())
        gdb.write("vmtrace-dump: %d threads, %d buffered records saved to %s (%s)\n"
                  % (len(threads), records, dest, kind))


VmtraceDump()
