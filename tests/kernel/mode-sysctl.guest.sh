#!/usr/bin/env bash
# vm.munmap_lock_mode / vm.munmap_section_bytes (kernel patch 0001):
# defaults, every valid value round-trips, invalid writes fail with EINVAL
# and keep the old value, debugfs reports the settings.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/modes-lib.sh"

if ! have_modes; then
	fail "vm.munmap_lock_mode and vm.munmap_section_bytes exist (is patch 0001 applied?)"
	finish
fi
save_modes

pud=$((1 << 30))	# PUD_SIZE on x86_64
pmd=$((2 << 20))	# PMD_SIZE on x86_64
# Defaults (checked only if nobody changed them before us in this boot).
[ "$_saved_mode" = downgrade ] && ok "vm.munmap_lock_mode defaults to downgrade" ||
	echo "# vm.munmap_lock_mode is '$_saved_mode' (not the boot default?)" >&2
check "vm.munmap_section_bytes defaults to PUD_SIZE ($(cat $BYTES_F))" [ "$_saved_bytes" = "$pud" ]

# write_rejected FILE VALUE: the write fails with EINVAL, value unchanged
write_rejected() {
	local f=$1 v=$2 before err
	before=$(cat "$f")
	err=$( { printf '%s\n' "$v" >"$f"; } 2>&1)
	[ $? -ne 0 ] && [[ $err == *"Invalid argument"* ]] && [ "$(cat "$f")" = "$before" ]
}

for m in $MODES; do
	echo "$m" >"$MODE_F"
	check "mode '$m' can be set and reads back" [ "$(cat "$MODE_F")" = "$m" ]
	check "debugfs munmap_lock reports mode $m" grep -qx "mode $m" "$STATS_F"
done
printf 'section' >"$MODE_F"
check "mode without a trailing newline is accepted" [ "$(cat "$MODE_F")" = section ]
sysctl -q -w vm.munmap_lock_mode=exclusive >/dev/null 2>&1
check "sysctl -w vm.munmap_lock_mode=exclusive works" [ "$(sysctl -n vm.munmap_lock_mode)" = exclusive ]

for v in bogus Exclusive "" "section junk" downgradeX 1 "exclusive exclusive"; do
	check "mode '$v' is rejected with EINVAL, old value kept" write_rejected "$MODE_F" "$v"
done

echo $pmd >"$BYTES_F"
check "section_bytes = PMD_SIZE ($pmd) accepted" [ "$(cat "$BYTES_F")" = $pmd ]
echo $((64 << 20)) >"$BYTES_F"
check "section_bytes = 64 MiB accepted" [ "$(cat "$BYTES_F")" = $((64 << 20)) ]
check "debugfs munmap_lock reports section_bytes" grep -qx "section_bytes $((64 << 20))" "$STATS_F"
echo $((6 << 20)) >"$BYTES_F"
check "section_bytes = 3 * PMD_SIZE accepted" [ "$(cat "$BYTES_F")" = $((6 << 20)) ]
for v in 0 4096 $((pmd + 4096)) $((3 << 20)) -1 -2097152 abc; do
	check "section_bytes '$v' is rejected with EINVAL, old value kept" write_rejected "$BYTES_F" "$v"
done
for k in munmap_section munmap_section_drop munmap_section_drop_resched munmap_section_atomic; do
	check "debugfs munmap_lock has counter $k" grep -qE "^$k [0-9]+$" "$STATS_F"
done
restore_modes
check "settings restored" [ "$(cat "$MODE_F")" = "$_saved_mode" ]
finish
