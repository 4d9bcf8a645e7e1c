#!/usr/bin/env python3
"""tests/align/tracecmd-pair-check.py: how close trace-cmd's host-guest time
sync came to the truth, for one round of tests/align/tracecmd-pair.sh.

Usage: tracecmd-pair-check.py ROUNDDIR [TSC_MHZ]

ROUNDDIR holds trace.dat (host), trace-guest.dat (guest) and markers.dat (the
guest's vmtrace markers of that round).  Truth: each marker is a hypercall
(or PIO) the host recorded at host TSC h, bracketed by the guest TSC reads
before <= g(h) <= after, so guest - host lies in [before - h, after - h].
trace-cmd's answer: the guest file's TimeShift samples (`trace-cmd dump
--options`), "offset * scaling >> fraction @ time": host = guest + offset
(scaling 1 on this AMD host: no TSC scaling), interpolated between samples by
the guest time as trace-cmd does for ptp (kvm's samples are all equal).
Only rounds whose clock is x86-tsc on both sides compare (the markers are TSC
readings); for another clock it says so and exits 0.  Prints one summary and
writes nothing.  Exit 0 done; 1 a file is missing or unreadable.
"""
import re
import struct
import subprocess
import sys

TRACECMD = "trace-cmd"


def die(msg):
    print(f"tracecmd-pair-check: {msg}", file=sys.stderr)
    sys.exit(1)


def run(*args):
    r = subprocess.run([TRACECMD, *args], capture_output=True, text=True)
    if r.returncode != 0:
        die(f"trace-cmd {' '.join(args)} failed: {r.stderr.strip()[:300]}")
    return r.stdout


def markers(path):
    try:
        data = open(path, "rb").read()
    except OSError as e:
        die(f"cannot read {path}: {e}")
    out = {}
    for i in range(0, len(data) - 47, 48):
        magic, _ver, kind, _size, addr, _val, cpu, seq, before, after = \
            struct.unpack("<IHBBQIIQQQ", data[i:i + 48])
        if magic == 0x4B4D5456:
            out[seq] = (kind, addr, before, after, cpu)
    return out


def main():
    if len(sys.argv) not in (2, 3):
        die("usage: tracecmd-pair-check.py ROUNDDIR [TSC_MHZ]")
    d = sys.argv[1]
    mhz = float(sys.argv[2]) if len(sys.argv) == 3 and sys.argv[2] else 0.0
    opts = run("dump", "--options", "-i", f"{d}/trace-guest.dat")
    # version 7: the BUFFER option names the clock; version 6: TRACECLOCK
    # lists the clocks, the one in use in brackets
    clocks = re.findall(r'"([^"]+)" \[clock\]', opts) or \
        re.findall(r"\[Option TRACECLOCK[^\n]*\n[^\n]*?\[([^\]]+)\]", opts)
    if clocks and clocks[0] != "x86-tsc":
        print(f"clock {clocks[0]}: not comparable with the TSC markers (only x86-tsc rounds are checked)")
        return
    # per guest CPU: trace-cmd dump prints the "N [samples count for CPU c]"
    # lines first, then every CPU's N samples in that order
    counts, flat = [], []
    for line in opts.splitlines():
        m = re.match(r"(\d+) \[samples count for CPU (\d+)\]", line.strip())
        if m:
            counts.append((int(m.group(2)), int(m.group(1))))
            continue
        m = re.match(r"\s+(-?\d+) (\d+) (\d+) (\d+)\[offset", line)
        if m:
            flat.append(tuple(int(x) for x in m.groups()))
    samples = {}
    for cpu, n in counts:
        samples[cpu], flat = flat[:n], flat[n:]
    if not any(samples.values()):
        die(f"no TimeShift samples in {d}/trace-guest.dat")
    if any(s not in (0, 1) or f != 0 for v in samples.values() for _, s, f, _ in v):
        print("note: samples with TSC scaling; the check assumes scaling 1")
    mk = markers(f"{d}/markers.dat")
    host = {}
    for line in run("report", "-i", f"{d}/trace.dat").splitlines():
        # (trace-cmd 3.3: the 5 latency flags before the stamp, e.g. "d..2.")
        m = re.search(r"\](?:[^\d\s].{4})?(\d+): kvm_hypercall:\s+nr 0x56540001 a0 \S+ a1 \S+ a2 (0x[0-9a-f]+)", line)
        if m:
            host[int(m.group(2), 16)] = int(m.group(1))
            continue
        m = re.search(r"\](?:[^\d\s].{4})?(\d+): kvm_pio:\s+pio_write at 0x5f0 size 4 count 1 val 0x(56[0-9a-f]{6})", line)
        if m:
            host[int(m.group(2), 16) & 0xFFFFFF] = int(m.group(1))
    pairs = [(mk[s][2], mk[s][3], host[s], mk[s][4]) for s in sorted(mk) if s in host]
    if not pairs:
        die(f"no marker of {d}/markers.dat is in the host trace")
    lo = max(b - h for b, a, h, _ in pairs)
    hi = min(a - h for b, a, h, _ in pairs)
    width = min(a - b for b, a, h, _ in pairs)

    def offset_at(g, cpu):
        # trace-cmd: the samples of the event's CPU (CPU 0 when the marker's
        # is unknown), linear between those around guest time g
        pts = sorted((t, o) for o, _, _, t in samples.get(cpu) or samples[min(samples)])
        if g <= pts[0][0]:
            return pts[0][1]
        for (t0, o0), (t1, o1) in zip(pts, pts[1:]):
            if g <= t1:
                return o0 + (o1 - o0) * (g - t0) / (t1 - t0) if t1 != t0 else o1
        return pts[-1][1]

    def us(ticks):
        return f"{ticks / mhz:.1f} us" if mhz else f"{ticks} ticks"

    worst = 0.0
    for b, a, h, cpu in pairs:
        est = -offset_at(b, cpu)  # trace-cmd's guest - host
        err = max(b - h - est, est - (a - h), 0)
        worst = max(worst, err)
    print(f"markers joined: {len(pairs)} of {len(mk)}; narrowest bracket {us(width)}")
    if lo <= hi:
        print(f"truth: guest - host in [{lo}, {hi}] ticks (constant offset; width {us(hi - lo)})")
    else:
        print(f"truth: the markers allow no single constant offset (spread {us(lo - hi)}): the offset changed")
    mid = (lo + hi) / 2
    for cpu in sorted(samples):
        v = sorted(samples[cpu], key=lambda x: x[3])
        offs = [-o for o, _, _, _ in v]
        print(f"trace-cmd, guest CPU {cpu}: {len(v)} samples, guest - host = "
              + (", ".join(str(o) for o in offs) if len(offs) <= 4 else
                 f"{offs[0]} (all)" if len(set(offs)) == 1 else f"{min(offs)} .. {max(offs)}")
              + f"; minus the truth's middle: {us(min(offs) - mid)} .. {us(max(offs) - mid)}")
    print(f"worst distance of trace-cmd's mapping outside a marker's bracket: {us(worst)}"
          + (" (inside every bracket)" if worst == 0 else ""))

if __name__ == "__main__":
    main()
