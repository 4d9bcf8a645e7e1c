#!/bin/bash
# One clock owner (docs/architecture.md, "Follow one timestamp"): merge/
# turns no TSC value into nanoseconds itself and keeps no offset logic;
# every stamp goes through align's clock map (align_clock_ns, align/clock.c).
# A grep over merge/'s sources (merge/report included) for the arithmetic
# and helpers of a conversion: 128-bit products, 1e9 factors, lib/tsc.h's
# converters, fixed-point multipliers; and the sorter must call the map.
set -eu
cd "$VT_SRC"
pat='__int128|vt_tsc_ns|vt_tsc_to_ns|vt_tsc_ns_init|mult_hi|mult_lo|\b1e9\b|\b1000000000(ull|ULL)?\b|\*[[:space:]]*VT_NS_PER_SEC|align_host_to_ns|align_guest_to_ns|align_guest_to_host'
hits=$(grep -rnE "$pat" merge --include='*.c' --include='*.h' | grep -v 'MERGE_LANE_TID_STRIDE' || true)
if [ -n "$hits" ]; then
	echo "$hits"
	echo "FAIL: merge/ converts time itself (above); use align's clock map (align/align.h)"
	exit 1
fi
echo "merge/: no TSC->ns arithmetic of its own ($(ls merge/*.c merge/*/*.c | wc -l) files)"
grep -nE 'align_clock_ns(_batch)?\(' merge/sort.c || { echo "FAIL: merge/sort.c does not convert through align's clock map"; exit 1; }
# the map is the only converter merge links: merge/clock.c is gone
[ ! -e merge/clock.c ] || { echo "FAIL: merge/clock.c exists again"; exit 1; }
# and it does not go through weak symbols to reach align
if grep -rn '__attribute__((weak))' merge --include='*.c' | grep -i align; then
	echo "FAIL: merge reaches align through weak symbols"
	exit 1
fi
# what merge needs of align is its clock maps (align/clock.h); the model
# and its loaders (align/align.h) only where merge builds the models
# (pipeline.c) and reads the markers they matched (reader_markers.c)
full=$(grep -rlE '#include "align/align.h"' merge --include='*.c' --include='*.h' | sort | tr '\n' ' ')
[ "$full" = "merge/pipeline.c merge/reader_markers.c " ] ||
	{ echo "FAIL: merge files including align/align.h: $full(want pipeline.c, reader_markers.c)"; exit 1; }
grep -q '#include "align/clock.h"' merge/merge.h || { echo "FAIL: merge/merge.h does not take align/clock.h"; exit 1; }
# align's model is pure: no gathering layer (I/O) in model.c or clock.c,
# and clock.c only reads the model (model.c does not call into clock.c)
if grep -nE '#include "align/gather.h"' align/model.c align/clock.c; then
	echo "FAIL: the model includes the gathering layer"; exit 1
fi
if grep -nE '\balign_(clock|cursor|vcursors)_[a-z_]*\(' align/model.c; then
	echo "FAIL: align/model.c calls into align/clock.c (one direction: clock -> model)"; exit 1
fi
echo "ok: one clock owner; merge sees align through align/clock.h (the model: pipeline.c, reader_markers.c)"
