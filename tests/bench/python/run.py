"""Driver of tests/bench/b-python.sh: interleaved runs of every workload
under no tracer, vmtrace, cProfile and yappi, on each interpreter; prints a
Markdown table of medians and writes it into docs/benchmarks.md."""
import json
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROUNDS = int(os.environ.get("B_ROUNDS", "7"))
WORKS = ["fib", "mixed", "lines"]
MODES = ["none", "vmtrace", "cprofile", "yappi"]


def has(py, env, mod):
    return subprocess.run([py, "-c", "import " + mod], env=env,
                          capture_output=True).returncode == 0


def one(py, env, mode, work, out):
    r = subprocess.run([py, os.path.join(HERE, "one.py"), mode, work, out], env=env,
                       capture_output=True, text=True)
    if r.returncode:
        raise SystemExit(f"{py} {mode} {work}: {r.stderr.strip()[-400:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def bench(label, py, pypath, tmp):
    env = dict(os.environ, PYTHONPATH=pypath)
    modes = [m for m in MODES if m in ("none", "vmtrace") or
             has(py, env, {"cprofile": "cProfile"}.get(m, m))]
    res = {(w, m): [] for w in WORKS for m in modes}
    for _ in range(ROUNDS):
        for w in WORKS:
            for m in modes:
                res[(w, m)].append(one(py, env, m, w, os.path.join(tmp, "o")))
    ver = subprocess.run([py, "-c", "import sys; print(sys.version.split()[0])"],
                         capture_output=True, text=True).stdout.strip()
    backend = subprocess.run([py, "-c", "import vmtrace; print(vmtrace.backend)"], env=env,
                             capture_output=True, text=True).stdout.strip()
    rows = []
    for w in WORKS:
        base = statistics.median(r["s"] for r in res[(w, "none")])
        calls = res[(w, "none")][0]["calls"]
        cbase = statistics.median(r["cpu"] for r in res[(w, "none")])
        for m in modes:
            s = statistics.median(r["s"] for r in res[(w, m)])
            c = statistics.median(r["cpu"] for r in res[(w, m)])
            ns = (c - cbase) / calls * 1e9 if w == "fib" else None
            b = statistics.median(r["bytes"] for r in res[(w, m)]) if m == "vmtrace" else None
            stop = statistics.median(r["stop_s"] for r in res[(w, m)]) if m == "vmtrace" else None
            rows.append((f"{label} {ver} ({backend})", w, m, s, s / base, c / cbase, ns,
                         b / calls if (b is not None and w == "fib") else None, b, stop))
    return rows


def breakdown(label, py, pypath, tmp):
    """The per-call breakdown table of breakdown.py for one interpreter."""
    ver = subprocess.run([py, "-c", "import sys; print(sys.version.split()[0])"],
                         capture_output=True, text=True).stdout.strip()
    d = os.path.join(tmp, "bd")
    os.makedirs(d, exist_ok=True)
    r = subprocess.run([sys.executable, os.path.join(HERE, "breakdown.py"), f"{label} {ver}", py,
                        pypath, d], capture_output=True, text=True)
    if r.returncode:
        raise SystemExit(f"breakdown {py}: {r.stderr.strip()[-400:]}")
    lines = r.stdout.strip().splitlines()
    return "\n".join(lines[:-1]) + "\n\n" + summary(json.loads(lines[-1]))


def summary(bd):
    """One sentence: the full cost as the sum of its steps."""
    v = {row["mode"]: row for row in bd["rows"]}
    ns = {m: v[m]["ns"] for m in v}
    text = (f"{bd['label']}: vmtrace {ns['vmtrace']:.1f} ns per call = "
            f"{ns['noop']:.1f} CPython's own dispatch + {ns['tsc'] - ns['noop']:.1f} two TSC "
            f"reads + {ns['vmtrace'] - ns['tsc']:.1f} vmtrace's own work")
    if all(v[m]["ins"] is not None for m in v):
        i = {m: v[m]["ins"] for m in v}
        text += (f" (instructions: {i['none']:.0f} untraced, +{i['noop'] - i['none']:.0f}, "
                 f"+{i['tsc'] - i['noop']:.0f}, +{i['vmtrace'] - i['tsc']:.0f})")
    return text + f"; cProfile {ns['cprofile']:.1f} ns."


def fmt(rows):
    out = ["| python | workload | tracer | wall s | wall ratio | CPU ratio | ns/call (fib, CPU) "
           "| bytes/call (fib) | .dat MB | stop s |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append("| {} | {} | {} | {:.3f} | {:.2f} | {:.2f} | {} | {} | {} | {} |".format(
            r[0], r[1], r[2], r[3], r[4], r[5],
            "%.0f" % r[6] if r[6] is not None and r[2] != "none" else "",
            "%.1f" % r[7] if r[7] is not None else "",
            "%.1f" % (r[8] / 1e6) if r[8] is not None else "",
            "%.3f" % r[9] if r[9] is not None else ""))
    return "\n".join(out)


def main():
    src, build, tmp = os.environ["VT_SRC"], os.environ["VT_BUILD"], os.environ["VT_TMP"]
    pys = [("Debian", "/usr/bin/python3", os.path.join(build, "python") + ":" + HERE,
            os.environ.get("FLOOR"))]
    py313 = os.environ.get("PY313")
    if py313:
        pys.append(("CPython", py313, os.path.join(build, "python313") + ":" + HERE,
                    os.environ.get("FLOOR313")))
    rows = []
    breakdowns = []
    for label, py, pp, floor in pys:
        rows += bench(label, py, pp, tmp)
        if floor:
            bd = breakdown(label, py, floor + ":" + pp, tmp)
            print(bd)
            breakdowns.append(bd)
    table = fmt(rows)
    print(table)
    bdtext = "\n\n".join(breakdowns)
    section = f"""<!-- b-python begin -->
## python: tracing cost per call (b-python)

Command: `make bench B=python` (tests/bench/b-python.sh, {time.strftime('%Y-%m-%d')},
{os.cpu_count()} CPUs shared; B_ROUNDS=N for more rounds, B_CALLGRIND=0 skips the
instruction counts). Each workload runs in a fresh process per tracer
(tests/bench/python/one.py), {ROUNDS} interleaved rounds, medians; the wall
time is the workload's own (start-up excluded), "stop s" is vmtrace.stop()
(no save phase: records are on disk as they happen). fib = recursive fib(27)
(635621 Python calls; ns/call = (traced - untraced CPU time) / calls, one
call = entry + exit; CPU time because the 2 cores are shared, and it counts
the kernel time of writing the trace); mixed = objects, sorted(key=lambda),
json, re; lines = a 200000 iteration loop traced with --lines (cProfile and
yappi trace no lines). vmtrace records C calls too (cProfile does; yappi
does not by default). bytes/call: the .dat bytes per fib call (two 16-byte
uftrace records). Targets: 3.11 below cProfile's cost; 3.13
(sys.monitoring) <= 80 ns/call.

{table}

### Where the time of one traced call goes (tests/bench/python/breakdown.py)

fib(27) under: no tracer; C hooks that return at once (tests/bench/python/floor.c:
sys.monitoring PY_START + PY_RETURN callbacks on 3.13, a C profile function on
3.11 = what CPython itself costs any C tracer); the same hooks reading the TSC
into a static; vmtrace; cProfile. CPU ns per call over untraced: medians of
{ROUNDS} interleaved fresh processes ("step": the difference to the row above).
Instructions per call: callgrind, (Ir of fib(20) - Ir of fib(14)) / (calls
difference), PYTHONHASHSEED=0: start-up cancels out, the count repeats
exactly (it does not see kernel time, nor what a page fault costs).

{bdtext}

Reading it: what vmtrace adds to a call beyond CPython's own dispatch and
the two TSC reads is two leaf callbacks of 29 instructions each on 3.13
(36 before issue #28's round of 2026-11-29, below): the record word cached
in co_extra (no type check: CPython passes the frame's code object), the
thread's store from an initial-exec TLS pointer (never NULL: a store of no
session stands in until the first event), one bounds and one depth
compare, rdtsc stored as its two halves, the word, into a reused 256 KiB
stage mapping, plus one pwrite() of the stage into the .dat every 16383
records (~3.5 ns of kernel time per record here; it replaced writing
through a fresh mapping of the .dat, whose first touch of each page cost
~5 us under this hypervisor's shadow paging: that change alone took 3.13
fib(28) from 76 to 44 ns per call, measured in the same hour). The
instruction column also holds what vmtrace.stop() does per record since
the tracers finish their directory for uftrace (the .dat rewritten in ns,
13 instructions per record, 26 per call). CPython's dispatch dominates:
~400 instructions per call on 3.13 (a new int object for the offset
argument, the tool loop, the vectorcall) and ~1400 on 3.11 (a frame object
per call for the profile function). The TSC read costs 11-60 ns in a
back-to-back loop on this PVM guest depending on the host's load (the "one
rdtsc" row), less inside the callbacks where it overlaps other work. CPU
figures move by +-10 ns between runs on the shared machine, and by 2x
between days (the untraced call: 33.6 ns on 2026-11-22, 66.5 ns on
2026-11-29); the instruction counts repeat exactly.
<!-- b-python end -->
"""
    doc = os.path.join(src, "docs", "benchmarks.md")
    text = open(doc).read() if os.path.exists(doc) else "# vmtrace benchmarks\n"
    # between its markers: what is written by hand after it stays
    pat = re.compile(r"<!-- b-python begin -->.*?<!-- b-python end -->\n", re.S)
    if pat.search(text):
        text = pat.sub(lambda m: section, text)
    else:
        text = text.rstrip("\n") + "\n\n" + section
    with open(doc, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
