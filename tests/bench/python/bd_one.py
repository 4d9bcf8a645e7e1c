"""One run of the per-call breakdown (breakdown.py): python bd_one.py MODE N OUTDIR
runs fib(N) under MODE and prints a JSON line with its CPU/wall time and calls.

MODE: none | noop | tsc (the _vtfloor hooks: sys.monitoring PY_START +
PY_RETURN on 3.12+, a C profile function before) | vmtrace | vmtrace-noc
(vmtrace with c_calls=False) | cprofile."""
import json
import resource
import sys
import time

sys.setrecursionlimit(10000)


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def calls_of(n):
    a, b = 0, 1
    for _ in range(n + 1):
        a, b = b, a + b
    return 2 * a - 1


TOOL = 2    # sys.monitoring PROFILER, as vmtrace uses


def floor_on(mode):
    import _vtfloor
    m = 0 if mode == "noop" else 1
    if sys.version_info >= (3, 12):
        mon = sys.monitoring
        mon.use_tool_id(TOOL, "floor")
        ev = mon.events
        mon.register_callback(TOOL, ev.PY_START, _vtfloor.hook(m))
        mon.register_callback(TOOL, ev.PY_RETURN, _vtfloor.hook(m))
        mon.set_events(TOOL, ev.PY_START | ev.PY_RETURN)
        return lambda: (mon.set_events(TOOL, 0), mon.free_tool_id(TOOL))
    _vtfloor.setprofile(m)
    return lambda: _vtfloor.setprofile(None)


def main():
    mode, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    fib(10)     # warm the code object (specialisation) before any tracer
    stop = None
    if mode in ("noop", "tsc"):
        stop = floor_on(mode)
    elif mode in ("vmtrace", "vmtrace-noc"):
        import vmtrace
        vmtrace.start(out, c_calls=(mode == "vmtrace"))
        stop = vmtrace.stop
    elif mode == "cprofile":
        import cProfile
        pr = cProfile.Profile()
        pr.enable()
        stop = pr.disable
    elif mode != "none":
        sys.exit("unknown mode " + mode)
    t0 = time.perf_counter()
    c0 = time.process_time()
    u0 = resource.getrusage(resource.RUSAGE_SELF)
    fib(n)
    u1 = resource.getrusage(resource.RUSAGE_SELF)
    c1 = time.process_time()
    t1 = time.perf_counter()
    if stop:
        stop()
    print(json.dumps({"cpu": c1 - c0, "s": t1 - t0, "user": u1.ru_utime - u0.ru_utime,
                      "sys": u1.ru_stime - u0.ru_stime, "calls": calls_of(n)}))


if __name__ == "__main__":
    main()
