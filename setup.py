"""Build and install the vmtrace Python package (guest/python) for the
interpreter running this file: `pip install .` (no network needed:
`pip install --no-build-isolation --no-index .` with Debian's
python3-setuptools).  The extension compiles the lib/ sources it uses."""
from setuptools import Extension, setup

LIB = ["lib/err.c", "lib/meta.c", "lib/uftrace.c", "lib/uftrace-append.c",
       "lib/elfread.c", "lib/tsc.c", "lib/cli.c", "lib/fileio.c"]

setup(
    name="vmtrace",
    version="0.1",
    description="Trace Python calls with the raw TSC into uftrace data directories",
    license="GPL-2.0",
    packages=["vmtrace"],
    package_dir={"vmtrace": "guest/python/vmtrace"},
    ext_modules=[Extension(
        "vmtrace._vmtrace",
        sources=["guest/python/ext.c", "guest/python/store.c"] + LIB,
        include_dirs=["lib", "."],
        define_macros=[("_GNU_SOURCE", None)],
        extra_compile_args=["-std=gnu11", "-fvisibility=hidden"],
    )],
    python_requires=">=3.8",
)
