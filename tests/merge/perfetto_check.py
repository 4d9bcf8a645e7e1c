"""Check a `vmtrace merge` Perfetto trace the way Perfetto's importer needs it.

Usage: /usr/bin/python3 perfetto_check.py DECODED.txt [--machine-ids] [--json OUT]

DECODED.txt is the output of `protoc --decode=perfetto.protos.Trace` with
merge/perfetto_subset.proto (protoc, not our code, parses the bytes).
Asserted (exit 1 with "FAIL: ..." otherwise):
  - one packet sequence; its first packet has SEQ_INCREMENTAL_STATE_CLEARED
    and every event packet SEQ_NEEDS_INCREMENTAL_STATE;
  - every TrackEvent's track_uuid has a TrackDescriptor earlier in the file;
  - process descriptors have a pid, one per (machine, pid); thread
    descriptors have pid + tid, a parent that is the process descriptor of
    that pid, one per (machine, pid, tid); a track that is neither names its
    parent, an earlier thread track;
  - interned event / annotation names are defined before use, each iid once;
  - timestamps never go back; begin/end balanced per track, never below 0;
  - every terminating flow id was started before;
  - machine_id only with --machine-ids (then on every guest packet, as the
    host's packets carry none), never otherwise.
Prints a JSON summary: processes -> {name, pid, machine, threads: [{name,
tid, lane, events, slices, names}]}.
"""
import json
import re
import sys

TOKEN = re.compile(r'\s*(?:([A-Za-z_][A-Za-z0-9_]*)\s*(\{|:\s*("(?:[^"\\]|\\.)*"|[^\s]+))|(\}))')


def parse(text):
    """protoc text format -> nested lists of (field, value) pairs."""
    stack = [[]]
    pos = 0
    while True:
        m = TOKEN.match(text, pos)
        if not m:
            if text[pos:].strip():
                sys.exit("FAIL: cannot parse decoded text at %r" % text[pos:pos + 40])
            break
        pos = m.end()
        if m.group(4):
            done = stack.pop()
            stack[-1][-1] = (stack[-1][-1][0], done)
        elif m.group(2) == "{":
            stack[-1].append((m.group(1), None))
            stack.append([])
        else:
            v = m.group(3)
            if v.startswith('"'):
                v = bytes(v[1:-1], "utf-8").decode("unicode_escape").encode("latin-1").decode("utf-8", "replace")
            else:
                try:
                    v = int(v)
                except ValueError:
                    pass
            stack[-1].append((m.group(1), v))
    if len(stack) != 1:
        sys.exit("FAIL: unbalanced braces in decoded text")
    return stack[0]


def get(msg, field, default=None):
    for k, v in msg:
        if k == field:
            return v
    return default


def get_all(msg, field):
    return [v for k, v in msg if k == field]


def fail(msg):
    sys.exit("FAIL: " + msg)


def main():
    args = sys.argv[1:]
    machine_ids = "--machine-ids" in args
    out_json = args[args.index("--json") + 1] if "--json" in args else None
    packets = get_all(parse(open(args[0]).read()), "packet")
    if not packets:
        fail("no packets")
    if get(packets[0], "sequence_flags") != 1:
        fail("first packet does not have SEQ_INCREMENTAL_STATE_CLEARED")
    tracks = {}          # uuid -> descriptor info
    procs = {}           # (machine, pid) -> uuid
    threads = {}         # (machine, pid, tid) -> uuid
    names, ann = {}, {}  # iid -> name
    flows = set()
    last_ts = 0
    depth = {}
    for n, p in enumerate(packets):
        if get(p, "trusted_packet_sequence_id") != 1:
            fail("packet %d: not on sequence 1" % n)
        mid = get(p, "machine_id", 0)
        if mid and not machine_ids:
            fail("packet %d: machine_id %d without --machine-id" % (n, mid))
        td = get(p, "track_descriptor")
        if td is not None:
            uuid = get(td, "uuid")
            if uuid in tracks:
                fail("track %d described twice" % uuid)
            pd, thd, parent = get(td, "process"), get(td, "thread"), get(td, "parent_uuid")
            info = {"machine": mid, "events": 0, "slices": 0, "names": set()}
            if pd is not None:
                pid = get(pd, "pid")
                if pid is None:
                    fail("process descriptor %d without pid" % uuid)
                if (mid, pid) in procs:
                    fail("two process descriptors for pid %d on machine %d" % (pid, mid))
                procs[(mid, pid)] = uuid
                info.update(kind="process", pid=pid, name=get(pd, "process_name", ""), threads=[])
            elif thd is not None:
                pid, tid = get(thd, "pid"), get(thd, "tid")
                if pid is None or tid is None:
                    fail("thread descriptor %d without pid/tid" % uuid)
                if (mid, pid, tid) in threads:
                    fail("two thread descriptors for %d/%d (Perfetto allows one per thread)" % (pid, tid))
                if parent not in tracks or tracks[parent].get("kind") != "process" or \
                        tracks[parent]["pid"] != pid:
                    fail("thread %d/%d: parent %s is not its process's descriptor" % (pid, tid, parent))
                threads[(mid, pid, tid)] = uuid
                info.update(kind="thread", pid=pid, tid=tid, name=get(thd, "thread_name", ""), lane=0)
                tracks[parent]["threads"].append(uuid)
            else:
                if parent not in tracks or tracks[parent].get("kind") != "thread":
                    fail("track %d: parent %s is not an earlier thread track" % (uuid, parent))
                main = tracks[parent]
                info.update(kind="lane", pid=main["pid"], tid=main["tid"], name=get(td, "name", ""),
                            lane=1)
                tracks[procs[(main["machine"], main["pid"])]]["threads"].append(uuid)
            tracks[uuid] = info
        idata = get(p, "interned_data")
        if idata is not None:
            if get(p, "track_event") is None:
                fail("packet %d: interned data outside an event packet" % n)
            for table, what in ((names, "event_names"), (ann, "debug_annotation_names")):
                for e in get_all(idata, what):
                    iid = get(e, "iid")
                    if iid in table:
                        fail("%s iid %d defined twice" % (what, iid))
                    table[iid] = get(e, "name", "")
        te = get(p, "track_event")
        if te is None:
            continue
        if get(p, "sequence_flags") != 2:
            fail("packet %d: event without SEQ_NEEDS_INCREMENTAL_STATE" % n)
        ts = get(p, "timestamp")
        if ts is None or ts < last_ts:
            fail("packet %d: timestamp %s after %d" % (n, ts, last_ts))
        last_ts = ts
        uuid = get(te, "track_uuid")
        if uuid not in tracks or tracks[uuid]["kind"] == "process":
            fail("packet %d: event on track %s with no thread/lane descriptor before it" % (n, uuid))
        t = tracks[uuid]
        if machine_ids and mid != t["machine"]:
            fail("packet %d: machine_id %d, its track's %d" % (n, mid, t["machine"]))
        iid = get(te, "name_iid")
        if iid is not None:
            if iid not in names:
                fail("packet %d: name_iid %d used before it is defined" % (n, iid))
            t["names"].add(names[iid])
        for a in get_all(te, "debug_annotations"):
            if get(a, "name_iid") not in ann:
                fail("packet %d: annotation name_iid %s not defined" % (n, get(a, "name_iid")))
        typ = get(te, "type")
        t["events"] += 1
        if typ == "TYPE_SLICE_BEGIN":
            depth[uuid] = depth.get(uuid, 0) + 1
            t["slices"] += 1
        elif typ == "TYPE_SLICE_END":
            depth[uuid] = depth.get(uuid, 0) - 1
            if depth[uuid] < 0:
                fail("packet %d: slice end without begin on track %d" % (n, uuid))
        flows.update(get_all(te, "flow_ids"))
        for f in get_all(te, "terminating_flow_ids"):
            if f not in flows:
                fail("packet %d: flow %d ends but never started" % (n, f))
    open_ = [u for u, d in depth.items() if d]
    if open_:
        fail("slices left open on tracks %s" % open_)
    summary = []
    for (mid, pid), pu in sorted(procs.items()):
        p = tracks[pu]
        summary.append({"name": p["name"], "pid": pid, "machine": mid, "threads": [
            {"name": tracks[u]["name"], "tid": tracks[u]["tid"], "lane": tracks[u]["lane"],
             "events": tracks[u]["events"], "slices": tracks[u]["slices"],
             "names": sorted(tracks[u]["names"])} for u in p["threads"]]})
    text = json.dumps(summary, indent=1)
    if out_json:
        with open(out_json, "w") as f:
            f.write(text)
    print("ok: %d packets, %d processes, %d tracks" % (len(packets), len(procs), len(tracks)))


if __name__ == "__main__":
    main()
