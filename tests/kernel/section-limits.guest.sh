#!/usr/bin/env bash
# Two hazards of section mode at the limits (kernel patch 0001, issue 13),
# in every mode (tests/bin/section_limits, its own TAP):
# - mlocked ranges: after a chunked munmap VmLck drops by exactly what was
#   unmapped, and the pieces left stay locked with their pages;
# - vm.max_map_count: at the limit, section mode's first chunk cannot split
#   at both ends and the call fails with ENOMEM with nothing lost (the
#   documented result), where one munmap succeeds.
. "$(dirname "$0")/../lib.sh"
prog=$TESTBIN/section_limits
# NAME|MODE|SECTION_BYTES
RUNS=("section-2M|section|$((2 << 20))" "downgrade|downgrade|" "exclusive|exclusive|")
plan ${#RUNS[@]}

have_modes || abort "vm.munmap_lock_mode exists (is patch 0001 applied?)"
[ -x "$prog" ] || abort "$prog is built (make -C tests/kernel)"
for r in "${RUNS[@]}"; do
	IFS='|' read -r name mode bytes <<<"$r"
	# shellcheck disable=SC2086 # no bytes: mode only
	if ! set_mode "$mode" $bytes; then
		fail "[$name] section_limits: cannot set mode $mode $bytes"
		continue
	fi
	subtest "[$name] section_limits" "$prog"
done
finish
