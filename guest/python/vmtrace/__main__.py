"""python3 -m vmtrace [options] script.py [args] | -m module [args]

Runs a Python program with vmtrace on, like cProfile does, and leaves a
uftrace data directory (TSC clock) behind; says on stderr where it is, its
size and the commands that open it (-q: not).
"""
import argparse
import errno
import os
import runpy
import sys

import vmtrace

EXIT_FAIL, EXIT_USAGE, EXIT_PARTIAL, EXIT_PERM = 1, 2, 3, 4


def parse(argv):
    p = argparse.ArgumentParser(
        prog="python3 -m vmtrace",
        description="Trace every Python call of a program with the raw TSC into "
                    "a uftrace data directory.")
    p.add_argument("-o", "--output", default=vmtrace.DEFAULT_DIR, metavar="DIR",
                   help="output directory (default %(default)s; replaced if it exists)")
    p.add_argument("--lines", metavar="PREFIX[,PREFIX...]", default=None,
                   help="record line events in modules whose name starts with a prefix")
    p.add_argument("--no-c-calls", action="store_true",
                   help="do not record calls of builtins and C functions")
    p.add_argument("--max-depth", type=int, default=0, metavar="N",
                   help="do not record calls deeper than N")
    p.add_argument("--clock", choices=("tsc", "ns"), default=None,
                   help="timestamp clock (default tsc; ns for plain uftrace)")
    p.add_argument("--markers", type=int, default=0, metavar="MS",
                   help="under KVM, send an in-band sync marker every MS ms while tracing")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="do not say where the trace is when done")
    p.add_argument("-m", dest="module", metavar="MODULE", default=None,
                   help="run a library module as a script")
    p.add_argument("args", nargs=argparse.REMAINDER, help="script.py [args]")
    opts = p.parse_args(argv)
    if opts.module is None and not opts.args:
        p.error("a script or -m MODULE is required")
    if opts.max_depth < 0:
        p.error("--max-depth must be >= 0")
    if opts.markers < 0:
        p.error("--markers must be >= 0")
    return opts


def main(argv=None):
    opts = parse(sys.argv[1:] if argv is None else argv)
    if opts.module is not None:
        sys.argv = [opts.module] + opts.args
        target = ("module", opts.module)
    else:
        script = opts.args[0]
        if not os.path.isfile(script):
            print(f"vmtrace: {script}: no such file", file=sys.stderr)
            return EXIT_USAGE
        sys.argv = opts.args
        sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
        target = ("path", script)
    try:
        vmtrace.start(opts.output, lines=opts.lines, c_calls=not opts.no_c_calls,
                      max_depth=opts.max_depth, clock=opts.clock, markers_ms=opts.markers)
    except PermissionError as e:
        print(f"{e}", file=sys.stderr)
        return EXIT_PERM
    except OSError as e:
        print(f"{e}", file=sys.stderr)
        return EXIT_PERM if e.errno in (errno.EACCES, errno.EPERM) else EXIT_FAIL
    status = 0
    try:
        if target[0] == "module":
            runpy.run_module(target[1], run_name="__main__", alter_sys=True)
        else:
            runpy.run_path(target[1], run_name="__main__")
    except SystemExit as e:
        code = e.code
        if code is None:
            status = 0
        elif isinstance(code, int):
            status = code
        else:
            print(code, file=sys.stderr)
            status = 1
    except BaseException as e:
        import traceback
        # the script's frames only, as plain python would show them
        tb = e.__traceback__
        while tb and (tb.tb_frame.f_code.co_filename == __file__ or
                      "runpy" in tb.tb_frame.f_code.co_filename):
            tb = tb.tb_next
        traceback.print_exception(type(e), e, tb)
        status = 1
    res = vmtrace.stop(exit_status=(status & 0xff) << 8)
    if res and res["lost"]:
        err = os.strerror(res["errno"]) if res["errno"] else "unknown error"
        print(f"vmtrace: {res['dir']}: {res['lost']} records lost ({err}); "
              f"the records before are complete", file=sys.stderr)
        if status == 0:
            status = EXIT_PARTIAL
    elif res and res["errno"]:
        print(f"vmtrace: {res['dir']}: {os.strerror(res['errno'])}", file=sys.stderr)
        if status == 0:
            status = EXIT_FAIL
    if res and not opts.quiet:
        summary(res["dir"])
    return status


def _size(n):
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return "%d %s" % (n, unit) if unit == "bytes" else "%.1f %s" % (n, unit)
        n /= 1024.0


def summary(d):
    """Where the trace is, its size, and the commands that open it (stderr)."""
    total = 0
    for root, _, files in os.walk(d):
        for f in files:
            try:
                total += os.path.getsize(os.path.join(root, f))
            except OSError:
                pass
    clock, ns_copies = "tsc", False
    try:
        with open(os.path.join(d, "vmtrace.meta"), encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("clock="):
                    clock = line.strip().split("=", 1)[1]
                elif line.startswith("uftrace.ns_hz="):
                    ns_copies = True
    except OSError:
        pass
    rel = os.path.relpath(d)
    shown = rel if not rel.startswith("..") else d
    err = sys.stderr
    print("vmtrace: trace in %s (%s, %s clock)" % (shown, _size(total),
                                                  "TSC" if clock == "tsc" else clock), file=err)
    print("vmtrace:   timeline: vmtrace merge %s -o trace.json (or trace.pftrace for "
          "ui.perfetto.dev)" % shown, file=err)
    if clock == "tsc" and not ns_copies:
        print("vmtrace:   uftrace:  its stamps are TSC ticks (the frequency was not known): "
              "vmtrace finalize --tsc-hz HZ %s, then uftrace replay -d %s" % (shown, shown),
              file=err)
    else:
        print("vmtrace:   uftrace:  uftrace replay -d %s" % shown, file=err)


if __name__ == "__main__":
    sys.exit(main())
