"""vmtrace_build - the PEP 517 build backend of the vmtrace Python package.

pyproject.toml names it (requires = [], backend-path = guest/python/pybuild),
so `pip install .` builds with nothing but the standard library of the
interpreter it installs for, under build isolation and without a network.
Runs in pip's hook process: compiles the C sources listed in
guest/python/ext-sources.txt (the list guest/python/module.mk reads too)
with that interpreter's sysconfig compiler and flags plus the Makefile's
-std and warning flags, links vmtrace._vmtrace with sysconfig's LDSHARED and
writes the wheel (build_wheel), an editable wheel (build_editable) or a
source archive (build_sdist).  Objects go to a temporary directory: nothing
is written into the source tree.  CC, LDSHARED, CPPFLAGS, CFLAGS and LDFLAGS
from the environment are honoured as distutils did.
"""
import base64
import concurrent.futures
import hashlib
import io
import os
import re
import shlex
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import time
import zipfile

NAME = "vmtrace"
VERSION = "0.1"
SUMMARY = "Trace Python calls with the raw TSC into uftrace data directories"
LICENSE = "GPL-2.0"
REQUIRES_PYTHON = ">=3.8"

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__)))))
SOURCE_LIST = "guest/python/ext-sources.txt"
PACKAGE_DIR = "guest/python/vmtrace"
BACKEND_DIR = "guest/python/pybuild"
# the Makefile variables whose flags every C file of the project gets
MAKE_FLAG_VARS = ("CSTD", "WARN")
# what the Makefile and guest/python/module.mk add for this extension; a
# C-API function missing from an older Python fails the build, not the import
EXTRA_CFLAGS = ["-fno-omit-frame-pointer", "-fvisibility=hidden", "-D_GNU_SOURCE",
                "-Werror=implicit-function-declaration"]
INCLUDE_DIRS = ["lib", "."]
LIBS = ["-lpthread"]
DIST_INFO = "%s-%s.dist-info" % (NAME, VERSION)
# zip entries: regular files; the extension executable like any shared object
MODE_FILE = 0o100644
MODE_EXEC = 0o100755
# archive timestamps: SOURCE_DATE_EPOCH or the zip format's first day
ZIP_EPOCH_S = 315532800
MIN_PYTHON = (3, 8)


class BuildError(Exception):
    """A build that cannot go on; the message names the file and problem."""


def _log(msg):
    print("vmtrace_build: " + msg, file=sys.stderr, flush=True)


def _path(rel):
    return os.path.join(ROOT, rel)


def _read_text(rel):
    try:
        with open(_path(rel), encoding="utf-8") as f:
            return f.read()
    except OSError as e:
        raise BuildError("%s: %s" % (_path(rel), e.strerror)) from None


def _sources():
    """The extension's C sources from SOURCE_LIST, relative to ROOT."""
    srcs = []
    for n, line in enumerate(_read_text(SOURCE_LIST).splitlines(), 1):
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        where = "%s:%d" % (_path(SOURCE_LIST), n)
        if len(words) > 1 or not words[0].endswith(".c"):
            raise BuildError("%s: want one .c path per line, got %r" % (where, line))
        if not os.path.isfile(_path(words[0])):
            raise BuildError("%s: %s does not exist" % (where, _path(words[0])))
        srcs.append(words[0])
    if not srcs:
        raise BuildError("%s lists no sources" % _path(SOURCE_LIST))
    return srcs


def _make_flags():
    """The flags of MAKE_FLAG_VARS, as the Makefile sets them (VAR := ...)."""
    text = _read_text("Makefile")
    flags = []
    for var in MAKE_FLAG_VARS:
        m = re.search(r"^%s\s*:=[ \t]*(.*)$" % var, text, re.M)
        if not m or "$" in m.group(1):
            raise BuildError("%s: no plain `%s := flags` line" % (_path("Makefile"), var))
        flags += shlex.split(m.group(1))
    return flags


def _config(name):
    v = sysconfig.get_config_var(name)
    return v if isinstance(v, str) else ""


def _check_python():
    if sys.implementation.name != "cpython" or sys.version_info[:2] < MIN_PYTHON:
        raise BuildError("vmtrace is a CPython %d.%d+ extension; %s is %s %s" % (
            MIN_PYTHON + (sys.executable, sys.implementation.name,
                          sys.version.split()[0])))


def _includes_py():
    dirs = []
    for d in (_config("INCLUDEPY"), sysconfig.get_paths().get("include", ""),
              sysconfig.get_paths().get("platinclude", "")):
        if d and d not in dirs:
            dirs.append(d)
    if not any(os.path.isfile(os.path.join(d, "Python.h")) for d in dirs):
        raise BuildError("no Python.h in %s for %s (Debian: apt-get install python3-dev)"
                         % (" ".join(dirs) or "sysconfig INCLUDEPY", sys.executable))
    return dirs


def _compilers():
    """(compile command, link command) as lists, distutils' way."""
    cc = shlex.split(os.environ.get("CC") or _config("CC"))
    if "LDSHARED" in os.environ:
        ld = shlex.split(os.environ["LDSHARED"])
    else:
        ld = shlex.split(_config("LDSHARED"))
        if "CC" in os.environ and ld:
            ld = cc + ld[1:]
    if not cc or not ld:
        raise BuildError("sysconfig of %s has no CC/LDSHARED" % sys.executable)
    cppflags = shlex.split(os.environ.get("CPPFLAGS", ""))
    incs = [os.path.normpath(_path(d)) for d in INCLUDE_DIRS] + _includes_py()
    cflags = (shlex.split(_config("CFLAGS")) + shlex.split(_config("CCSHARED")) +
              _make_flags() + EXTRA_CFLAGS + ["-I" + d for d in incs] + cppflags +
              shlex.split(os.environ.get("CFLAGS", "")))
    ldflags = shlex.split(os.environ.get("LDFLAGS", ""))
    return cc + cflags, (ld, ldflags)


def _run(cmd):
    _log(" ".join(shlex.quote(w) for w in cmd))
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True)
    if r.stdout:
        sys.stderr.write(r.stdout)
    return r.returncode


def _jobs():
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _build_extension(tmp):
    """Compile and link the extension in tmp; return (file name, bytes)."""
    _check_python()
    srcs = _sources()
    compile_cmd, (ld, ldflags) = _compilers()
    objs = [os.path.join(tmp, s.replace("/", "__")[:-2] + ".o") for s in srcs]
    cmds = [compile_cmd + ["-c", _path(s), "-o", o] for s, o in zip(srcs, objs)]
    with concurrent.futures.ThreadPoolExecutor(_jobs()) as pool:
        failed = [s for s, rc in zip(srcs, pool.map(_run, cmds)) if rc != 0]
    if failed:
        raise BuildError("compiling %s failed (compiler output above)" % ", ".join(failed))
    name = "_vmtrace" + _config("EXT_SUFFIX")
    out = os.path.join(tmp, name)
    if _run(ld + objs + ["-o", out] + ldflags + LIBS) != 0:
        raise BuildError("linking %s failed (linker output above)" % name)
    with open(out, "rb") as f:
        return name, f.read()


def _wheel_tag():
    """cpXY-<abi>-<platform> of the running interpreter (packaging's rules)."""
    _check_python()
    soabi = _config("SOABI").split("-")
    if len(soabi) < 2 or soabi[0] != "cpython":
        raise BuildError("cannot tell the ABI of %s (SOABI %r)"
                         % (sys.executable, _config("SOABI")))
    plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    if plat == "linux_x86_64" and sys.maxsize <= 2 ** 32:
        plat = "linux_i686"
    return "cp%d%d-cp%s-%s" % (sys.version_info[0], sys.version_info[1], soabi[1], plat)


def _metadata():
    return ("Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: %s\n"
            "License: %s\nRequires-Python: %s\n" %
            (NAME, VERSION, SUMMARY, LICENSE, REQUIRES_PYTHON)).encode()


def _wheel_file(tag):
    return ("Wheel-Version: 1.0\nGenerator: vmtrace_build %s\n"
            "Root-Is-Purelib: false\nTag: %s\n" % (VERSION, tag)).encode()


def _epoch_s():
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "")
    return max(ZIP_EPOCH_S, int(epoch)) if epoch.isdigit() else ZIP_EPOCH_S


def _package_files():
    """(archive name, path) of every .py file of the vmtrace package."""
    files = []
    top = _path(PACKAGE_DIR)
    for d, subdirs, names in os.walk(top):
        subdirs[:] = sorted(s for s in subdirs if s != "__pycache__")
        for n in sorted(names):
            if n.endswith(".py"):
                p = os.path.join(d, n)
                files.append((NAME + "/" + os.path.relpath(p, top).replace(os.sep, "/"), p))
    if not files:
        raise BuildError("no .py files in %s" % top)
    return files


def _write_wheel(wheel_directory, entries):
    """Write entries [(name, bytes, mode)] + dist-info + RECORD; return its name."""
    tag = _wheel_tag()
    entries = entries + [(DIST_INFO + "/METADATA", _metadata(), MODE_FILE),
                         (DIST_INFO + "/WHEEL", _wheel_file(tag), MODE_FILE)]
    name = "%s-%s-%s.whl" % (NAME, VERSION, tag)
    record = []
    when = time.gmtime(_epoch_s())[:6]
    path = os.path.join(wheel_directory, name)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for arc, data, mode in entries:
            zi = zipfile.ZipInfo(arc, when)
            zi.external_attr = mode << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(zi, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest())
            record.append("%s,sha256=%s,%d" % (arc, digest.rstrip(b"=").decode(), len(data)))
        record.append(DIST_INFO + "/RECORD,,")
        zi = zipfile.ZipInfo(DIST_INFO + "/RECORD", when)
        zi.external_attr = MODE_FILE << 16
        zi.compress_type = zipfile.ZIP_DEFLATED
        zf.writestr(zi, "".join(r + "\n" for r in record))
    _log("wrote " + path)
    return name


def _read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def _editable_init():
    """The package __init__ of an editable install: the checkout's .py files
    first on __path__, the extension built at install time next to it."""
    src = _path(PACKAGE_DIR)
    return ("# vmtrace installed editable (pip install -e) from %s:\n"
            "# its Python files are read from there; the extension is this\n"
            "# directory's (rebuild it with pip install -e after C changes).\n"
            "__path__.insert(0, %r)\n"
            "__file__ = %r\n"
            "with open(__file__, encoding='utf-8') as _vmtrace_init:\n"
            "    exec(compile(_vmtrace_init.read(), __file__, 'exec'))\n"
            "del _vmtrace_init\n" % (ROOT, src, os.path.join(src, "__init__.py"))).encode()


# ---- the PEP 517 / PEP 660 hooks ---------------------------------------------

def get_requires_for_build_wheel(config_settings=None):
    """Nothing to install first: the stdlib and a C compiler do it."""
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    """Write <name>.dist-info (METADATA, WHEEL) in metadata_directory; return its name."""
    d = os.path.join(metadata_directory, DIST_INFO)
    os.makedirs(d, exist_ok=True)
    for fname, data in (("METADATA", _metadata()), ("WHEEL", _wheel_file(_wheel_tag()))):
        with open(os.path.join(d, fname), "wb") as f:
            f.write(data)
    return DIST_INFO


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    """Build the extension and write the wheel into wheel_directory; return its name."""
    entries = [(arc, _read_bytes(p), MODE_FILE) for arc, p in _package_files()]
    with tempfile.TemporaryDirectory(prefix="vmtrace-build-") as tmp:
        so_name, so = _build_extension(tmp)
    return _write_wheel(wheel_directory, entries + [(NAME + "/" + so_name, so, MODE_EXEC)])


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """A wheel with the built extension and an __init__ that loads the
    package's Python files from this checkout (PEP 660); return its name."""
    with tempfile.TemporaryDirectory(prefix="vmtrace-build-") as tmp:
        so_name, so = _build_extension(tmp)
    return _write_wheel(wheel_directory, [(NAME + "/__init__.py", _editable_init(), MODE_FILE),
                                          (NAME + "/" + so_name, so, MODE_EXEC)])


_QUOTE_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def _header_closure(srcs):
    """Every project header the sources include ("..." form), relative to ROOT."""
    seen, todo = set(), list(srcs)
    while todo:
        rel = todo.pop()
        for inc in _QUOTE_INCLUDE.findall(_read_text(rel)):
            for d in [os.path.dirname(rel)] + INCLUDE_DIRS:
                cand = os.path.normpath(os.path.join(d, inc))
                if os.path.isfile(_path(cand)):
                    if cand not in seen:
                        seen.add(cand)
                        todo.append(cand)
                    break
    return sorted(seen)


def build_sdist(sdist_directory, config_settings=None):
    """Write <name>-<version>.tar.gz: what build_wheel reads; return its name."""
    srcs = _sources()
    files = ["pyproject.toml", "Makefile", SOURCE_LIST, BACKEND_DIR + "/vmtrace_build.py"]
    files += srcs + _header_closure(srcs)
    files += [os.path.relpath(p, ROOT) for _, p in _package_files()]
    base = "%s-%s" % (NAME, VERSION)
    name = base + ".tar.gz"
    mtime = _epoch_s()

    def add(tf, arc, data):
        ti = tarfile.TarInfo(base + "/" + arc)
        ti.size, ti.mode, ti.mtime = len(data), 0o644, mtime
        tf.addfile(ti, io.BytesIO(data))

    with tarfile.open(os.path.join(sdist_directory, name), "w:gz",
                      format=tarfile.PAX_FORMAT) as tf:
        add(tf, "PKG-INFO", _metadata())
        for rel in sorted(set(files)):
            add(tf, rel, _read_bytes(_path(rel)))
    _log("wrote " + os.path.join(sdist_directory, name))
    return name
