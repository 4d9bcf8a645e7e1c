#!/usr/bin/env python3
"""tests/lib/td-zlib.py: rewrite an uncompressed trace.dat v7 as trace-cmd
3.x writes it with --compression zlib, for tests on machines whose trace-cmd
has no zlib (Debian 12's 3.1.6: zstd only).

Usage: td-zlib.py IN.dat OUT.dat

IN must be v7 with compression "none" (`trace-cmd convert --file-version 7
--compression none` makes one from any file).  As trace-cmd does (man 5
trace-cmd.dat.v7): the header names "zlib" and zlib's version; each metadata
section (header info, ftrace and event formats, kallsyms, printk, cmdlines)
is written compressed (flag 1; u32 compressed size, u32 size, zlib stream);
the flyrecord section is flagged compressed and each CPU's data, from the
next page boundary on, becomes u32 chunk count + chunks of up to CHUNK_PAGES
pages (u32 compressed size, u32 size, zlib stream), its BUFFER option naming
the count's offset and the chunks' size; options sections stay plain, their
offsets moved.
Checked once against trace-cmd 3.2 built with zlib (it reads the output).
A test tool: it trusts IN (made by trace-cmd) and exits 1 on anything else.
"""
import struct
import sys
import zlib

CHUNK_PAGES = 10
SEC = struct.Struct("<HHIQ")          # id, flags, string id, size
OPT = struct.Struct("<HI")            # option id, size
META_IDS = range(16, 23)              # HEADER_INFO .. BUFFER_TEXT: u64 offset
BUFFER = 3


def cstr(d, p):
    e = d.index(b"\0", p)
    return d[p:e], e + 1


def main(src, dst):
    d = open(src, "rb").read()
    if d[10:12] != b"7\0" or d[12] != 0:
        sys.exit("td-zlib: %s: not a little-endian trace.dat v7" % src)
    page = struct.unpack_from("<I", d, 14)[0]
    p = 18
    name, p = cstr(d, p)
    _, p = cstr(d, p)
    if name != b"none":
        sys.exit("td-zlib: %s: already compressed (%s)" % (src, name.decode()))
    first = struct.unpack_from("<Q", d, p)[0]
    head = d[:18] + b"zlib\0" + zlib.ZLIB_VERSION.encode() + b"\0"

    # the sections: options chain, what its options point at
    regions = {}                      # old offset -> [kind, data...]
    off = first
    while off:
        sid, flags, strid, size = SEC.unpack_from(d, off)
        body = d[off + SEC.size: off + SEC.size + size]
        regions[off] = ["opt", strid, body]
        off, q = 0, 0
        while q < len(body):
            oid, n = OPT.unpack_from(body, q)
            data = body[q + OPT.size: q + OPT.size + n]
            if oid == 0:
                off = struct.unpack_from("<Q", data)[0]
                break
            if oid in META_IDS:
                mo = struct.unpack_from("<Q", data)[0]
                _, _, mstr, msize = SEC.unpack_from(d, mo)
                regions[mo] = ["meta", mstr, d[mo + SEC.size: mo + SEC.size + msize],
                               SEC.unpack_from(d, mo)[0]]
            if oid == BUFFER:
                fo = struct.unpack_from("<Q", data)[0]
                _, e = cstr(data, 8)
                _, e = cstr(data, e)
                _, ncpu = struct.unpack_from("<II", data, e)
                e += 8
                cpus = [struct.unpack_from("<IQQ", data, e + 20 * i) for i in range(ncpu)]
                fid, _, fstr, _ = SEC.unpack_from(d, fo)
                regions[fo] = ["fly", fstr, cpus, fid]
            q += OPT.size + n

    # lay out: compress, give each region its new offset
    pos = len(head) + 8
    order = sorted(regions)
    new_off, blobs, fly_cpus = {}, {}, {}
    for o in order:
        r = regions[o]
        new_off[o] = pos
        if r[0] == "opt":
            blobs[o] = (0, 0, r[1], r[2])
            pos += SEC.size + len(r[2])
        elif r[0] == "meta":
            z = zlib.compress(r[2], 9)
            blob = struct.pack("<II", len(z), len(r[2])) + z
            blobs[o] = (r[3], 1, r[1], blob)
            pos += SEC.size + len(blob)
        else:
            # as trace-cmd: the section flagged compressed, the CPU data
            # from the next page boundary on (padding first)
            base = pos + SEC.size
            pad = -base % page
            body, cpus = b"\0" * pad, []
            for cpu, coff, csize in r[2]:
                raw = d[coff: coff + csize]
                chunks = [raw[i: i + CHUNK_PAGES * page]
                          for i in range(0, len(raw), CHUNK_PAGES * page)]
                stream = b""
                for c in chunks:
                    z = zlib.compress(c, 9)
                    stream += struct.pack("<II", len(z), len(c)) + z
                cpus.append((cpu, base + len(body), len(stream) if csize else 0))
                body += struct.pack("<I", len(chunks)) + stream if csize else b""
            blobs[o] = (r[3], 1, r[1], body)
            fly_cpus[o] = cpus
            pos += SEC.size + len(body)

    # patch the options' offsets, write
    out = bytearray(head + struct.pack("<Q", new_off[first]))
    for o in order:
        sid, flags, strid, body = blobs[o]
        if regions[o][0] == "opt":
            body = bytearray(body)
            q = 0
            while q < len(body):
                oid, n = OPT.unpack_from(body, q)
                at = q + OPT.size
                if oid == 0 or oid in META_IDS or oid == BUFFER:
                    old = struct.unpack_from("<Q", body, at)[0]
                    if old:
                        struct.pack_into("<Q", body, at, new_off[old])
                if oid == BUFFER:
                    _, e = cstr(body, at + 8)
                    _, e = cstr(body, e)
                    e += 8
                    for i, c in enumerate(fly_cpus[old]):
                        struct.pack_into("<IQQ", body, e + 20 * i, *c)
                if oid == 0:
                    break
                q += OPT.size + n
        out += SEC.pack(sid, flags, strid, len(body)) + body
    open(dst, "wb").write(out)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
