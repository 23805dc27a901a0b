# tests/kernel/modes-lib.sh: helpers for the vm.munmap_lock_mode tests
# (sourced after tests/lib.sh).
MODE_F=/proc/sys/vm/munmap_lock_mode
BYTES_F=/proc/sys/vm/munmap_section_bytes
STATS_F=/sys/kernel/debug/munmap_lock
MODES="exclusive downgrade section"

have_modes() { [ -w "$MODE_F" ] && [ -w "$BYTES_F" ]; }

# Save the current settings and restore them when the test exits.
save_modes() {
	_saved_mode=$(cat "$MODE_F") _saved_bytes=$(cat "$BYTES_F")
	trap 'restore_modes' EXIT
}
restore_modes() {
	echo "$_saved_mode" >"$MODE_F" 2>/dev/null
	echo "$_saved_bytes" >"$BYTES_F" 2>/dev/null
}

# set_mode MODE [SECTION_BYTES]
set_mode() {
	echo "$1" >"$MODE_F" || return 1
	[ -z "${2:-}" ] || echo "$2" >"$BYTES_F"
}

# Kernel log watermark and check: dmesg_mark; ...; dmesg_check WHAT
dmesg_mark() { _dmesg_lines=$(dmesg | wc -l); }
dmesg_new() { dmesg | tail -n +$((_dmesg_lines + 1)); }
# Soft lockups and RCU stalls are what TCG on a busy host looks like
# (scripts/vm-run reports them as notes): they and the stack dumps that come
# with them are printed, not failed; every real splat has its own headline.
dmesg_check() {
	local new bad stall
	new=$(dmesg_new)
	stall=$(grep -E 'BUG: soft lockup|rcu_.*self-detected stall|rcu: INFO: .* detected stalls' <<<"$new" | head -1)
	[ -n "$stall" ] && echo "# $1: note: guest logged '$stall' (host too busy?)" >&2
	bad=$(grep -v -E 'BUG: soft lockup' <<<"$new" |
		grep -E 'BUG|WARNING|Oops|lockdep|possible recursive|circular locking|general protection|kernel BUG|list_del corruption|Call Trace' |
		{ if [ -n "$stall" ]; then grep -v 'Call Trace'; else cat; fi; } | head -5)
	if [ -z "$bad" ]; then
		ok "$1: no BUG/WARNING/oops/lockdep report in dmesg"
	else
		fail "$1: kernel log: $(echo "$bad" | head -1)"
		echo "$bad" >&2
	fi
	dmesg_mark
}
