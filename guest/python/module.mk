# guest/python: the CPython extension vmtrace._vmtrace + the vmtrace package
# (issue 4), and the `vmtrace top` / `vmtrace attach` commands.
#
# `make` builds it for $(PY) (Debian's /usr/bin/python3) into $(PYOUT)
# (build/python: PYTHONPATH=build/python).  Another interpreter:
#   make python-ext PY=/var/cache/vmtrace/cpython-3.13/bin/python3.13 PYOUT=build/python313
PY      ?= /usr/bin/python3
PYOUT   ?= $(OUT)/python
# config.mk has Debian's interpreter's values (known only after make deps);
# another PY given on the command line is asked here (it is installed)
ifeq ($(PY),$(CONFIG_PY))
PY_INC  := $(CONFIG_PY_INC)
PY_SUFFIX := $(CONFIG_PY_SUFFIX)
else
PY_INC  := $(shell $(PY) -c 'import sysconfig; print(sysconfig.get_paths()["include"])' 2>/dev/null)
PY_SUFFIX := $(shell $(PY) -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))' 2>/dev/null)
endif
# the extension's C sources: the one list, read here and by the pip build
# backend (guest/python/pybuild); awk drops its comment lines ("\043" is #).
# Its lib/ part is linked from the objects libvtcore.a is made of.
VTPY_LIST := $(SRC)/guest/python/ext-sources.txt
VTPY_SRCS := $(shell awk 'substr($$1, 1, 1) != "\043" { print $$1 }' $(VTPY_LIST))
VTPY_OWN  := $(filter-out lib/%,$(VTPY_SRCS))
VTPY_CORE := $(patsubst %.c,$(OUT)/obj/%.o,$(filter lib/%,$(VTPY_SRCS)))
VTPY_PKG  := $(wildcard $(SRC)/guest/python/vmtrace/*.py)
VTPY_SO   := $(PYOUT)/vmtrace/_vmtrace$(PY_SUFFIX)

TARGETS += $(VTPY_SO) $(VTPY_PKG:$(SRC)/guest/python/%=$(PYOUT)/%)
# (the commands over the tracer's output and processes - vmtrace top,
# attach, finalize - are tools/cmd_*.c: the extension is the in-process
# runtime only)
# the extension: Debian's python3 and its headers
DEPS += python3-dev
# the tests: pip/venv installs, yappi (a peer tracer), gdb, uftrace, USDT
# headers, and what building another CPython from Debian's source needs
TEST_DEPS += python3-pip python3-venv python3-yappi gdb uftrace systemtap-sdt-dev \
	dpkg-dev libssl-dev zlib1g-dev libffi-dev libbz2-dev liblzma-dev libsqlite3-dev \
	libreadline-dev libgdbm-dev uuid-dev libncurses-dev libexpat1-dev tk-dev

.PHONY: python-ext
python-ext: $(VTPY_SO) $(VTPY_PKG:$(SRC)/guest/python/%=$(PYOUT)/%)

# lib/ objects are built -fPIC (CFLAGS_ALL) by the top Makefile's rule
$(VTPY_SO): $(VTPY_OWN:%=$(SRC)/%) $(VTPY_CORE) $(VTPY_LIST) \
		$(wildcard $(SRC)/guest/python/*.h $(SRC)/lib/*.h)
	@mkdir -p $(dir $@)
	@test -n "$(PY_INC)" || { echo "no Python headers for $(PY)" >&2; exit 1; }
	$(CC) $(CPPFLAGS_ALL) -I$(PY_INC) $(CFLAGS_ALL) -fvisibility=hidden -shared \
		-o $@ $(VTPY_OWN:%=$(SRC)/%) $(VTPY_CORE) $(LDFLAGS_ALL) -lpthread

$(PYOUT)/vmtrace/%.py: $(SRC)/guest/python/vmtrace/%.py
	@mkdir -p $(dir $@)
	cp $< $@
