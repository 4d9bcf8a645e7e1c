#!/bin/bash
# The vmtrace.meta schema against the code (tests/lib/meta_keys.py): the
# code names every key by its lib/meta_keys.h constant, never by a string
# literal; every key read is written by a producer of the project - a test
# fixture does not count (one hid a reader of 'tsc.source', a key nobody
# writes) - or is documented as given by the user; every key written, and
# every key the header names, is in the key tables of docs/
# (docs/format/meta.md).
set -eu
/usr/bin/python3 "$VT_SRC/tests/lib/meta_keys.py" "$VT_SRC"
