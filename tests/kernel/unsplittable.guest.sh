#!/usr/bin/env bash
# munmap() over a VMA that refuses to be split (kernel patch 0001, issue
# 13): a special mapping ([vdso], or [vvar] where the vDSO is one page),
# moved so that it straddles a 2 MiB section boundary B, with anonymous
# memory on both sides (tests/bin/unsplittable, its own TAP: a munmap
# across it succeeds and leaves nothing; one that ends or starts inside it
# fails with EINVAL and unmaps nothing). Run in every mode: in section mode
# with 2 MiB sections B falls inside the special mapping, and the result
# must be the one exclusive mode gives. The section run also shows how the
# call across was cut (tracepoint mmap:munmap_section): [B-4M, B-2M), then
# [B-2M, end of the special mapping), then the rest up to B+2M.
. "$(dirname "$0")/../lib.sh"
prog=$TESTBIN/unsplittable
d=$(test_out unsplittable)
EV=/sys/kernel/tracing/events/mmap/munmap_section
# NAME|MODE|SECTION_BYTES
RUNS=("section-2M|section|$((2 << 20))" "downgrade|downgrade|" "exclusive|exclusive|")
plan $((${#RUNS[@]} + 1))

have_modes || abort "vm.munmap_lock_mode exists (is patch 0001 applied?)"
[ -x "$prog" ] || abort "$prog is built (make -C tests/kernel)"
[ -d "$EV" ] || abort "tracepoint mmap:munmap_section exists"

for r in "${RUNS[@]}"; do
	IFS='|' read -r name mode bytes <<<"$r"
	# shellcheck disable=SC2086 # no bytes: mode only
	if ! set_mode "$mode" $bytes; then
		fail "[$name] unsplittable: cannot set mode $mode $bytes"
		continue
	fi
	if [ "$mode" = section ]; then
		echo >/sys/kernel/tracing/trace
		echo 1 >"$EV/enable"
	fi
	SUBTEST_ERR=$d/$name.err subtest "[$name] unsplittable" "$prog"
	if [ "$mode" = section ]; then
		echo 0 >"$EV/enable"
		cp /sys/kernel/tracing/trace "$d/trace"
	fi
done

# The chunks of the call across (its child's pid), from the section run's
# trace.
read -r b len pid < <(sed -n 's/^across B=\(0x[0-9a-f]*\) len=\(0x[0-9a-f]*\) pid=\([0-9]*\)$/\1 \2 \3/p' \
	"$d/section-2M.err" 2>/dev/null)
if [ -n "$b" ]; then
	M=$((1 << 20)) P=$(getconf PAGESIZE)
	lo=$((b - 4 * M)) hi=$((b + 2 * M)) sp_end=$((b - P + len))
	want=$(printf '%x-%x ' "$lo" $((b - 2 * M)) $((b - 2 * M)) "$sp_end" "$sp_end" "$hi")
	got=$(sed -n "s/.*-$pid *\\[.*munmap_section: .* start=0x\\([0-9a-f]*\\) end=0x\\([0-9a-f]*\\) .*/\\1 \\2/p" "$d/trace" |
		while read -r s e; do
			((0x$s >= lo && 0x$e <= hi)) && printf '%s-%s ' "$s" "$e"
		done)
	check_eq "section mode cut the call across into [B-4M, B-2M), [B-2M, end of the special mapping), the rest" \
		"${got% }" "${want% }"
else
	fail "section mode cut the call across: no 'across B=' line in $d/section-2M.err"
fi
finish
