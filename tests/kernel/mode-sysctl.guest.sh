#!/usr/bin/env bash
# vm.munmap_lock_mode / vm.munmap_section_bytes (kernel patch 0001):
# defaults, every valid value round-trips, invalid writes fail with EINVAL
# and keep the old value, debugfs reports the settings and the counters.
. "$(dirname "$0")/../lib.sh"
STATS_F=/sys/kernel/debug/munmap_lock
MODES=(exclusive downgrade section)
BAD_MODES=(bogus Exclusive "" "section junk" downgradeX 1 "exclusive exclusive")
pud=$((1 << 30))	# PUD_SIZE on x86_64
pmd=$((2 << 20))	# PMD_SIZE on x86_64
GOOD_BYTES=("$pmd" $((64 << 20)) $((6 << 20)))
BAD_BYTES=(0 4096 $((pmd + 4096)) $((3 << 20)) -1 -2097152 abc)
COUNTERS=(munmap_section munmap_section_drop munmap_section_drop_resched munmap_section_atomic)
# 2 defaults, 2 per mode, newline-less write, sysctl -w, the rejected
# modes, the accepted sizes + debugfs, the rejected sizes, the counters,
# the restore.
plan $((2 + 2 * ${#MODES[@]} + 2 + ${#BAD_MODES[@]} + ${#GOOD_BYTES[@]} + 1 + \
	${#BAD_BYTES[@]} + ${#COUNTERS[@]} + 1))

have_modes || abort "vm.munmap_lock_mode and vm.munmap_section_bytes exist (is patch 0001 applied?)"

# tests/run-files puts back the boot-time values before each file, so what
# is here now is the kernel's default.
boot_mode=$(cat "$MODE_F") boot_bytes=$(cat "$BYTES_F")
check_eq "vm.munmap_lock_mode defaults to downgrade" "$boot_mode" downgrade
check_eq "vm.munmap_section_bytes defaults to PUD_SIZE" "$boot_bytes" "$pud"

# write_rejected FILE VALUE: the write fails with EINVAL, value unchanged
write_rejected() {
	local f=$1 v=$2 before err
	before=$(cat "$f")
	err=$( { printf '%s\n' "$v" >"$f"; } 2>&1)
	[ $? -ne 0 ] && [[ $err == *"Invalid argument"* ]] && [ "$(cat "$f")" = "$before" ]
}

for m in "${MODES[@]}"; do
	sysctl_set vm.munmap_lock_mode "$m"
	check_eq "mode '$m' can be set and reads back" "$(cat "$MODE_F")" "$m"
	check "debugfs munmap_lock reports mode $m" grep -qx "mode $m" "$STATS_F"
done
printf 'section' >"$MODE_F"
check_eq "mode without a trailing newline is accepted" "$(cat "$MODE_F")" section
sysctl -q -w vm.munmap_lock_mode=exclusive >/dev/null 2>&1
check_eq "sysctl -w vm.munmap_lock_mode=exclusive works" "$(sysctl -n vm.munmap_lock_mode)" exclusive

# The writes above show that a good value is taken; these must not be.
for v in "${BAD_MODES[@]}"; do
	check "mode '$v' is rejected with EINVAL, old value kept" write_rejected "$MODE_F" "$v"
done

for v in "${GOOD_BYTES[@]}"; do
	sysctl_set vm.munmap_section_bytes "$v"
	check_eq "section_bytes = $v accepted" "$(cat "$BYTES_F")" "$v"
done
check "debugfs munmap_lock reports section_bytes ${GOOD_BYTES[-1]}" \
	grep -qx "section_bytes ${GOOD_BYTES[-1]}" "$STATS_F"
for v in "${BAD_BYTES[@]}"; do
	check "section_bytes '$v' is rejected with EINVAL, old value kept" write_rejected "$BYTES_F" "$v"
done
for k in "${COUNTERS[@]}"; do
	check "debugfs munmap_lock has counter $k" grep -qE "^$k [0-9]+$" "$STATS_F"
done
sysctl_restore
check_eq "settings restored to the boot defaults" "$(cat "$MODE_F") $(cat "$BYTES_F")" "$boot_mode $boot_bytes"
finish
