"""Per-call cost breakdown of the Python tracer (run by tests/bench/b-python.sh).

For each interpreter: fib(N) untraced, under C hooks that do nothing
(CPython's own cost of calling a tracer: sys.monitoring PY_START + PY_RETURN
on 3.12+, a C profile function before), hooks that only read the TSC,
vmtrace, and cProfile.  Two measures:
  - CPU ns per call over untraced: medians of interleaved fresh processes;
  - instructions per call (callgrind, deterministic): the difference between
    fib(CG_SMALL) and fib(CG_BIG) runs, so start-up cancels out.
Plus the cost of one rdtsc in a tight loop.

Usage: breakdown.py LABEL PYTHON PYTHONPATH TMPDIR -> a Markdown table on
stdout (and the rows as JSON on the last line, for run.py)."""
import json
import os
import re
import shutil
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROUNDS = int(os.environ.get("B_ROUNDS", "7"))
FIB_N = 27
CG_SMALL, CG_BIG = 14, 20
MODES = ["none", "noop", "tsc", "vmtrace", "cprofile"]
DESC = {
    "none": "untraced",
    "noop": "no-op C hooks (CPython's own dispatch)",
    "tsc": "C hooks that only read the TSC",
    "vmtrace": "vmtrace (full tracer)",
    "cprofile": "cProfile",
}


def run(py, env, mode, n, out, wrap=()):
    r = subprocess.run(list(wrap) + [py, os.path.join(HERE, "bd_one.py"), mode, str(n), out],
                       env=env, capture_output=True, text=True)
    if r.returncode:
        raise SystemExit(f"{py} {mode}: {r.stderr.strip()[-400:]}")
    return json.loads(r.stdout.strip().splitlines()[-1]), r.stderr


def instructions(py, env, mode, tmp):
    """Instructions per traced call (callgrind), or None without valgrind."""
    if not shutil.which("valgrind") or os.environ.get("B_CALLGRIND", "1") == "0":
        return None
    ir = {}
    for n in (CG_SMALL, CG_BIG):
        cg = os.path.join(tmp, f"cg.{mode}.{n}")
        res, err = run(py, env, mode, n, os.path.join(tmp, "o"),
                       ("valgrind", "--tool=callgrind", "--callgrind-out-file=" + cg))
        m = re.search(r"Collected : (\d+)", err)
        if not m:
            return None
        ir[n] = (int(m.group(1)), res["calls"])
    return (ir[CG_BIG][0] - ir[CG_SMALL][0]) / (ir[CG_BIG][1] - ir[CG_SMALL][1])


def main():
    label, py, pypath, tmp = sys.argv[1:5]
    env = dict(os.environ, PYTHONPATH=pypath, PYTHONHASHSEED="0")
    modes = list(MODES)
    cpu = {m: [] for m in modes}
    calls = 0
    for _ in range(ROUNDS):
        for m in modes:
            res, _err = run(py, env, m, FIB_N, os.path.join(tmp, "o"))
            cpu[m].append(res["cpu"])
            calls = res["calls"]
    med = {m: statistics.median(cpu[m]) for m in modes}
    ins = {m: instructions(py, env, m, tmp) for m in modes}
    rd = subprocess.run([py, "-c", "import _vtfloor, statistics; print(statistics.median("
                         "_vtfloor.rdtsc_ns(1000000) for _ in range(9)))"],
                        env=env, capture_output=True, text=True)
    rdtsc_ns = float(rd.stdout) if rd.returncode == 0 else None
    ns = {m: (med[m] - med["none"]) / calls * 1e9 for m in modes}
    rows = []
    out = [f"| {label}: fib({FIB_N}), {calls} calls | CPU ns/call over untraced "
           "| step | instructions/call | step |", "|---|---|---|---|---|"]
    prev = None
    for m in modes:
        step = "" if prev is None or m == "cprofile" else "%+.1f" % (ns[m] - ns[prev])
        istep = "" if prev is None or m == "cprofile" or ins[m] is None or ins[prev] is None \
            else "%+.0f" % (ins[m] - ins[prev])
        out.append("| {} | {} | {} | {} | {} |".format(
            DESC[m], "%.1f" % ns[m] if m != "none" else "(%.1f per call)" % (med[m] / calls * 1e9),
            step, "%.0f" % ins[m] if ins[m] is not None else "n/a", istep))
        rows.append({"mode": m, "ns": ns[m], "ins": ins[m]})
        if m != "cprofile":
            prev = m
    if rdtsc_ns is not None:
        out.append(f"| one rdtsc, back-to-back loop | {rdtsc_ns:.1f} ns | | | |")
    print("\n".join(out))
    print(json.dumps({"label": label, "rows": rows, "rdtsc_ns": rdtsc_ns}))


if __name__ == "__main__":
    main()
