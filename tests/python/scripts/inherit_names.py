# Inherited C methods (file objects' __exit__ is _io._IOBase's) and a
# name longer than the tracer's buffer, made of 2-byte characters (cut
# inside one): tests/python/t-names.sh.
import os, tempfile
d = tempfile.mkdtemp()
p = os.path.join(d, "f")
os.close(os.open(p, os.O_CREAT | os.O_WRONLY))
# a reader first: the name a subclass would give every later file's __exit__
with open(p, "rb") as f:
    f.read()
with open(p, "w") as f:
    f.write("x")
# "a" + 600 x U+00E9: the qualified name passes 1023 bytes at an odd offset
exec("def a" + "\u00e9" * 600 + "():\n    return 1\n")
globals()["a" + "\u00e9" * 600]()
