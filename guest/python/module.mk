# guest/python: the CPython extension vmtrace._vmtrace + the vmtrace package
# (issue 4), and the `vmtrace top` / `vmtrace attach` commands.
#
# `make` builds it for $(PY) (Debian's /usr/bin/python3) into $(PYOUT)
# (build/python: PYTHONPATH=build/python).  Another interpreter:
#   make python-ext PY=/var/cache/vmtrace/cpython-3.13/bin/python3.13 PYOUT=build/python313
PY      ?= /usr/bin/python3
PYOUT   ?= $(OUT)/python
PY_INC  := $(shell $(PY) -c 'import sysconfig; print(sysconfig.get_paths()["include"])' 2>/dev/null)
PY_SUFFIX := $(shell $(PY) -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))' 2>/dev/null)
VTPY_SRCS := guest/python/ext.c guest/python/store.c
VTPY_PKG  := $(wildcard $(SRC)/guest/python/vmtrace/*.py)
VTPY_SO   := $(PYOUT)/vmtrace/_vmtrace$(PY_SUFFIX)

TARGETS += $(VTPY_SO) $(VTPY_PKG:$(SRC)/guest/python/%=$(PYOUT)/%)
VMTRACE_SRCS += guest/python/top.c guest/python/attach.c
DEPS += python3-dev python3-setuptools python3-yappi gdb uftrace systemtap-sdt-dev \
	dpkg-dev libssl-dev zlib1g-dev libffi-dev libbz2-dev liblzma-dev libsqlite3-dev \
	libreadline-dev libgdbm-dev uuid-dev libncurses-dev libexpat1-dev tk-dev

.PHONY: python-ext
python-ext: $(VTPY_SO) $(VTPY_PKG:$(SRC)/guest/python/%=$(PYOUT)/%)

# lib/ comes from libvtcore.a (built -fPIC): only what the extension uses
$(VTPY_SO): $(VTPY_SRCS:%=$(SRC)/%) $(OUT)/lib/libvtcore.a $(wildcard $(SRC)/guest/python/*.h $(SRC)/lib/*.h)
	@mkdir -p $(dir $@)
	@test -n "$(PY_INC)" || { echo "no Python headers for $(PY)" >&2; exit 1; }
	$(CC) $(CPPFLAGS_ALL) -I$(PY_INC) $(CFLAGS_ALL) -fvisibility=hidden -shared \
		-o $@ $(VTPY_SRCS:%=$(SRC)/%) $(OUT)/lib/libvtcore.a $(LDFLAGS_ALL) -lpthread

$(PYOUT)/vmtrace/%.py: $(SRC)/guest/python/vmtrace/%.py
	@mkdir -p $(dir $@)
	cp $< $@
