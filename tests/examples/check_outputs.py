"""Checks an example's outputs (tests/examples): the alignment and the merged
timeline, read with python3's json (a consumer vmtrace did not write).

usage: check_outputs.py OUT GUEST_FUNCTION HOST_EVENT_PREFIX

- OUT/align.json: method "markers", error bound below the limit of the
  accelerator in OUT/run.txt (20 us KVM, 250 us KVM in the KVM lab, an
  emulated host, accel_host=lab; 100 us TCG), at least 3 marker
  pairs, and every pair's host instant, mapped through the model, inside
  its guest TSC bracket widened by the bound;
- OUT/merged.json: guest slices named GUEST_FUNCTION*, host events named
  HOST_EVENT_PREFIX*, and the guest slices inside the host recording's span.
"""
import json
import sys

KVM_LIMIT_NS = 20000
LAB_LIMIT_NS = 250000
TCG_LIMIT_NS = 100000
GUEST_PID_BASE = 10000000
MIN_PAIRS = 3


def main():
    out, guest_fn, host_prefix = sys.argv[1:4]
    run = dict(l.strip().split("=", 1) for l in open(out + "/run.txt") if "=" in l)
    accel = run["accel"]
    limit = KVM_LIMIT_NS if accel == "kvm" else TCG_LIMIT_NS
    if accel == "kvm" and run.get("accel_host") == "lab":
        limit = LAB_LIMIT_NS
    a = json.load(open(out + "/align.json"))
    bound = a["bound_ns"]
    assert a["method"] == "markers", a["method"]
    assert 0 <= bound < limit, "bound %.1f ns not below %d ns (%s)" % (bound, limit, accel)
    pairs = [p for p in a["pairs"] if not p["outlier"]]
    assert len(pairs) >= MIN_PAIRS, "only %d marker pairs" % len(pairs)
    assert a["markers"]["pairs"] == a["markers"]["guest"], a["markers"]
    bound_ticks = bound * a["host_hz"] / 1e9
    for p in pairs:
        seg = [s for s in a["segments"] if s["tsc_host_start"] <= p["tsc_host"] and
               (s["tsc_host_end"] is None or p["tsc_host"] < s["tsc_host_end"])][0]
        g = seg["ref_tsc_guest"] + seg["slope"] * (p["tsc_host"] - seg["ref_tsc_host"])
        lo = p["tsc_guest_before"] - bound_ticks
        hi = p["tsc_guest_after"] + bound_ticks
        assert lo <= g <= hi, "marker %d: host twin maps to guest TSC %d, outside [%d, %d]" % (
            p["seq"], g, lo, hi)

    d = json.load(open(out + "/merged.json"))
    ev = d["traceEvents"] if isinstance(d, dict) else d
    guest = [e for e in ev if e.get("ph") in ("B", "X") and e.get("pid", 0) >= GUEST_PID_BASE
             and e.get("name", "").startswith(guest_fn)]
    assert guest, "no guest slice %s* in merged.json" % guest_fn
    host = [e for e in ev if e.get("ph") in ("i", "B", "X") and
            0 < e.get("pid", 0) < GUEST_PID_BASE and e.get("name", "").startswith(host_prefix)]
    assert host, "no host event %s* in merged.json" % host_prefix
    t0, t1 = min(e["ts"] for e in host), max(e["ts"] for e in host)
    assert all(t0 <= e["ts"] <= t1 for e in guest), "guest slices outside the host events' span"
    print("ok: %s, bound %.2f us, %d markers, %d %s slices, %d host %s* events"
          % (accel, bound / 1e3, len(pairs), len(guest), guest_fn, len(host), host_prefix))


if __name__ == "__main__":
    main()
