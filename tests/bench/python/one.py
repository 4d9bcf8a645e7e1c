"""One measured run: python one.py MODE WORKLOAD OUTDIR -> JSON line with
the workload's wall time, the tracer's stop time, calls and output bytes."""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workloads  # noqa: E402
import benchlines  # noqa: E402,F401

mode, work, out = sys.argv[1], sys.argv[2], sys.argv[3]
fn = getattr(workloads, "run_" + work)
lines = "benchlines" if work == "lines" else None
stop_s = 0.0
nbytes = 0

if mode == "none":
    t0 = time.perf_counter(); c0 = time.process_time()
    calls = fn()
    t1 = time.perf_counter(); c1 = time.process_time()
elif mode == "vmtrace":
    import vmtrace
    vmtrace.start(out, lines=lines)
    t0 = time.perf_counter(); c0 = time.process_time()
    calls = fn()
    t1 = time.perf_counter(); c1 = time.process_time()
    vmtrace.stop()
    stop_s = time.perf_counter() - t1
    nbytes = sum(os.path.getsize(os.path.join(out, f)) for f in os.listdir(out)
                 if f.endswith(".dat"))
elif mode == "cprofile":
    import cProfile
    pr = cProfile.Profile()
    pr.enable()
    t0 = time.perf_counter(); c0 = time.process_time()
    calls = fn()
    t1 = time.perf_counter(); c1 = time.process_time()
    pr.disable()
elif mode == "yappi":
    import yappi
    yappi.set_clock_type("wall")
    yappi.start()
    t0 = time.perf_counter(); c0 = time.process_time()
    calls = fn()
    t1 = time.perf_counter(); c1 = time.process_time()
    yappi.stop()
else:
    sys.exit("unknown mode " + mode)
print(json.dumps({"s": t1 - t0, "cpu": c1 - c0, "stop_s": stop_s, "calls": calls, "bytes": nbytes}))
