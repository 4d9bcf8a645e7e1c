"""Driver of tests/bench/b-python.sh: interleaved runs of every workload
under no tracer, vmtrace, cProfile and yappi, on each interpreter; prints a
Markdown table of medians and writes it into docs/benchmarks.md."""
import json
import os
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
    pys = [("Debian", "/usr/bin/python3", os.path.join(build, "python") + ":" + HERE)]
    py313 = os.environ.get("PY313")
    if py313:
        pys.append(("CPython", py313, os.path.join(build, "python313") + ":" + HERE))
    rows = []
    for label, py, pp in pys:
        rows += bench(label, py, pp, tmp)
    table = fmt(rows)
    print(table)
    section = f"""## python: tracing cost per call (b-python)

Command: `make bench B=python` (tests/bench/b-python.sh, {time.strftime('%Y-%m-%d')},
{os.cpu_count()} CPUs shared). Each workload runs in a fresh process per tracer
(tests/bench/python/one.py), {ROUNDS} interleaved rounds, medians; the wall
time is the workload's own (start-up excluded), "stop s" is vmtrace.stop()
(no save phase: records are on disk as they happen). fib = recursive fib(27)
(635621 Python calls; ns/call = (traced - untraced CPU time) / calls, one
call = entry + exit; CPU time because the 2 cores are shared); mixed = objects, sorted(key=lambda), json, re; lines = a 200000
iteration loop traced with --lines (cProfile and yappi trace no lines).
vmtrace records C calls too (cProfile does; yappi does not by default).
Targets: 3.11 below cProfile's cost; 3.13 (sys.monitoring) <= 80 ns/call.

{table}
"""
    doc = os.path.join(src, "docs", "benchmarks.md")
    text = open(doc).read() if os.path.exists(doc) else "# vmtrace benchmarks\n"
    start = text.find("## python: tracing cost per call")
    if start >= 0:
        end = text.find("\n## ", start + 1)
        text = text[:start] + section + (text[end + 1:] if end >= 0 else "")
    else:
        text = text.rstrip("\n") + "\n\n" + section
    with open(doc, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
