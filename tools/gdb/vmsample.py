# tools/gdb/vmsample.py - sampling profiler for QEMU guests through QEMU's
# gdbstub, run inside ONE gdb for the whole session (tools/vmtrace-sample
# starts it; docs/tools.md).  Each sample: let the guest run for one
# period, interrupt it, read every vCPU's pc and backtrace, stamp the
# sample with the host TSC, continue.
#
# Parameters come from the environment (set by tools/vmtrace-sample):
#   VMSAMPLE_TARGET   host:port of the gdbstub (127.0.0.1:1234)
#   VMSAMPLE_RATE     samples per second (default 100)
#   VMSAMPLE_COUNT    number of samples (default 0: use VMSAMPLE_SECONDS)
#   VMSAMPLE_SECONDS  duration when no count is given (default 5)
#   VMSAMPLE_DEPTH    deepest frames kept per stack (default 64)
#   VMSAMPLE_OUT      output directory (must exist)
#   VMSAMPLE_KILL     "1": kill the guest at the end (else detach, running)
#   VMSAMPLE_START    a guest function: run until it is entered (one
#                     temporary breakpoint), then start sampling
# The guest's symbols are the file gdb was started with.
#
# Timestamps: the host TSC read in this process through a 10-byte rdtsc
# routine mapped executable with ctypes (x86-64 hosts); each sample gets
# the TSC read just before the interrupt request and just after gdb saw
# the guest stop, and is placed at their midpoint with half their gap as
# its error.  Where no TSC can be read (not x86-64, no executable
# mapping), CLOCK_MONOTONIC nanoseconds are recorded instead and the
# output says clock=mono-ns (docs/format/samples.md).
#
# Output in VMSAMPLE_OUT: samples.tsv (the track vmtrace merge takes, see
# docs/format/samples.md) and samples.folded (root;...;leaf COUNT lines,
# flame graph input).

import ctypes
import mmap
import os
import platform
import signal
import sys
import time

import gdb

SAMPLES_HEADER = "# vmtrace-samples 1"
NS_PER_SEC = 1000000000

# rdtsc; shl $32, %rdx; or %rdx, %rax; ret
_RDTSC_CODE = b"\x0f\x31\x48\xc1\xe2\x20\x48\x09\xd0\xc3"


def _tsc_reader():
    """A function returning the host TSC, or None where it cannot be made."""
    if platform.machine() not in ("x86_64", "AMD64"):
        return None, None
    try:
        buf = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    except (OSError, ValueError):
        return None, None
    buf.write(_RDTSC_CODE)
    addr = ctypes.addressof(ctypes.c_char.from_buffer(buf))
    fn = ctypes.CFUNCTYPE(ctypes.c_uint64)(addr)
    return fn, buf     # keep buf alive as long as fn


def _env_num(name, default, cast):
    v = os.environ.get(name, "")
    if v == "":
        return default
    try:
        return cast(v)
    except ValueError:
        raise gdb.GdbError("vmsample: %s=%r is not a number" % (name, v))


def _frames(depth):
    """root-first list of (name, pc) of the selected thread's stack."""
    out = []
    f = gdb.newest_frame()
    while f is not None and len(out) < depth:
        try:
            pc = f.pc()
        except gdb.error:
            break
        if pc == 0 and out:
            break  # the zero return address below a guest's entry code
        name = f.name()
        if not name:
            name = "0x%x" % pc
        out.append((name, pc))
        try:
            f = f.older()
        except gdb.error:
            break
    out.reverse()
    return out


class _Timer:
    """A POSIX timer that sends SIGINT to this process once, after a delay:
    gdb's own SIGINT handler then interrupts the remote guest.  Kernel
    timers need no Python thread (gdb may hold the GIL while the guest
    runs)."""

    class _Sigevent(ctypes.Structure):
        _fields_ = [("value", ctypes.c_void_p), ("signo", ctypes.c_int),
                    ("notify", ctypes.c_int), ("pad", ctypes.c_byte * 48)]

    class _Itimerspec(ctypes.Structure):
        # two struct timespec {tv_sec, tv_nsec}: interval (0: one-shot), value
        _fields_ = [("interval", ctypes.c_long * 2), ("value", ctypes.c_long * 2)]

    SIGEV_SIGNAL = 0

    def __init__(self):
        self.libc = ctypes.CDLL(None, use_errno=True)
        ev = self._Sigevent()
        ev.signo = signal.SIGINT
        ev.notify = self.SIGEV_SIGNAL
        self.id = ctypes.c_void_p()
        if self.libc.timer_create(time.CLOCK_MONOTONIC, ctypes.byref(ev), ctypes.byref(self.id)):
            raise gdb.GdbError("vmsample: timer_create: %s" % os.strerror(ctypes.get_errno()))

    def arm(self, ns):
        its = self._Itimerspec()
        its.value[0] = ns // NS_PER_SEC
        its.value[1] = ns % NS_PER_SEC
        if self.libc.timer_settime(self.id, 0, ctypes.byref(its), None):
            raise gdb.GdbError("vmsample: timer_settime: %s" % os.strerror(ctypes.get_errno()))


class Sampler:
    def __init__(self):
        self.target = os.environ.get("VMSAMPLE_TARGET", "127.0.0.1:1234")
        self.rate = _env_num("VMSAMPLE_RATE", 100.0, float)
        self.count = _env_num("VMSAMPLE_COUNT", 0, int)
        self.seconds = _env_num("VMSAMPLE_SECONDS", 5.0, float)
        self.depth = _env_num("VMSAMPLE_DEPTH", 64, int)
        self.out = os.environ.get("VMSAMPLE_OUT", ".")
        self.kill = os.environ.get("VMSAMPLE_KILL", "") == "1"
        self.start = os.environ.get("VMSAMPLE_START", "")
        if self.rate <= 0 or self.depth <= 0 or self.count < 0:
            raise gdb.GdbError("vmsample: rate and depth must be > 0, count >= 0")
        self.tsc, self._tsc_mem = _tsc_reader()
        self.clock = "tsc" if self.tsc else "mono-ns"
        self.now = self.tsc if self.tsc else time.monotonic_ns
        self.timer = _Timer()
        self.samples = []
        self.early = 0

    def take(self, clk_cont, mono_cont, period_ns):
        """One sample of every vCPU (the guest is stopped).  The interrupt
        fired at mono_cont + period_ns; its time in the sample clock is
        interpolated between the reads at continue and at the stop, and
        the sample is placed between it and the stop."""
        clk_stop = self.now()
        mono_stop = time.monotonic_ns()
        span = mono_stop - mono_cont
        if span > period_ns:
            clk_fire = clk_cont + (clk_stop - clk_cont) * period_ns // span
        else:
            clk_fire = clk_cont
        mid = (clk_fire + clk_stop) // 2
        err = (clk_stop - clk_fire + 1) // 2
        for th in gdb.selected_inferior().threads():
            th.switch()
            stack = _frames(self.depth)
            if not stack:
                continue
            self.samples.append((mid, err, mono_stop, th.num - 1, stack[-1][1],
                                 ";".join(n for n, _ in stack)))

    def run(self):
        gdb.execute("set pagination off")
        gdb.execute("set confirm off")
        try:
            gdb.execute("target remote " + self.target, to_string=True)
        except gdb.error as e:
            raise gdb.GdbError("vmsample: cannot connect to the gdbstub at %s: %s"
                               % (self.target, e))
        if self.start:
            gdb.execute("tbreak " + self.start, to_string=True)
            gdb.execute("continue", to_string=True)
            if gdb.selected_frame().name() != self.start:
                raise gdb.GdbError("vmsample: stopped outside %s before sampling" % self.start)
        period_ns = int(NS_PER_SEC / self.rate)
        n = self.count if self.count else max(1, int(self.seconds * self.rate))
        t0 = time.monotonic()
        for _ in range(n):
            clk_cont = self.now()
            mono_cont = time.monotonic_ns()
            self.timer.arm(period_ns)
            try:
                gdb.execute("continue", to_string=True)
            except KeyboardInterrupt:
                self.early += 1     # fired before the guest ran: still stopped
            except gdb.error as e:
                gdb.write("vmsample: stopped: %s\n" % e)     # QEMU went away
                break
            self.take(clk_cont, mono_cont, period_ns)
        wall = time.monotonic() - t0
        try:
            gdb.execute("kill" if self.kill else "detach", to_string=True)
        except gdb.error:
            pass
        self.write()
        gdb.write("vmsample: %d samples (%d requested) in %.2f s (%.1f/s), clock %s\n"
                  % (len(self.samples), n, wall, len(self.samples) / wall if wall else 0,
                     self.clock))

    def write(self):
        tsv = os.path.join(self.out, "samples.tsv")
        with open(tsv + ".tmp", "w") as f:
            f.write(SAMPLES_HEADER + "\n")
            f.write("# clock=%s rate_hz=%g\n" % (self.clock, self.rate))
            f.write("# time\terror\tmono_ns\tvcpu\tpc\tstack\n")
            for s in self.samples:
                f.write("%d\t%d\t%d\t%d\t0x%x\t%s\n" % s)
        os.replace(tsv + ".tmp", tsv)
        folded = {}
        for s in self.samples:
            folded[s[5]] = folded.get(s[5], 0) + 1
        fp = os.path.join(self.out, "samples.folded")
        with open(fp + ".tmp", "w") as f:
            for stack in sorted(folded):
                f.write("%s %d\n" % (stack, folded[stack]))
        os.replace(fp + ".tmp", fp)


try:
    Sampler().run()
except gdb.GdbError as e:
    sys.stderr.write("%s\n" % e)
    gdb.execute("quit 1")
