# tests/lib.sh: helpers for shell tests (sourced). See docs/CONVENTIONS.md.
#
# A test file speaks TAP: `plan N` first (the number of checks it runs,
# computed from its own lists, never from what happened), then one line per
# check: "ok N - WHAT", "not ok N - WHAT: WHY" or "ok N - WHAT # SKIP WHY".
# The harness (tests/harness) fails a file whose count differs from its
# plan, and a skip on the lab kernel that tests/expected-skips does not list.
# Call `finish` at the end: its exit status is non-zero if a check failed.
TOP=${MMLOCK_TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
TESTBIN=$TOP/tests/bin
PY=/usr/bin/python3
_failed=0 _n=0 _plan=

# plan N: the number of checks this file runs.
plan() {
	[ -z "$_plan" ] || { echo "Bail out! $0: plan given twice"; exit 2; }
	_plan=$1
	echo "1..$1"
}

# _tap RESULT TEXT [DIRECTIVE]: one numbered line; '#' in TEXT is escaped
# so that it is never read as a directive, newlines become spaces.
_tap() {
	local text=${2//$'\n'/ }
	[ -n "$_plan" ] || { echo "Bail out! $0: a check before plan"; exit 2; }
	_n=$((_n + 1))
	echo "$1 $_n - ${text//#/\\#}${3:+ # $3}"
}
ok() { _tap ok "$*"; }
fail() { _tap "not ok" "$*"; _failed=1; }
# skip WHAT WHY: a check that does not apply here, and why. Counted as a
# skip, never as a pass; on the lab kernel it fails unless expected.
skip() { _tap ok "$1" "SKIP ${2:-no reason given}"; }

# check WHAT COMMAND...: ok if COMMAND succeeds.
check() {
	local what=$1; shift
	if "$@"; then ok "$what"; else fail "$what: '$*' failed"; fi
}

# check_range WHAT VALUE LOW HIGH: ok if LOW <= VALUE <= HIGH (integers).
check_range() {
	if [ "$2" -ge "$3" ] 2>/dev/null && [ "$2" -le "$4" ]; then
		ok "$1 ($2 in [$3, $4])"
	else
		fail "$1: ${2:-nothing} not in [$3, $4]"
	fi
}

# check_eq WHAT GOT WANT: ok if the strings are equal; prints both if not.
check_eq() {
	if [ "$2" = "$3" ]; then ok "$1 ($2)"; else fail "$1: got '$2', want '$3'"; fi
}

# subtest NAME CMD...: CMD is a test program that prints its own TAP (a
# plan first, then its checks). One check here: ok if CMD exited 0 and ran
# exactly its plan with no failure. Its lines are shown indented (TAP
# subtest style); its stderr goes to $SUBTEST_ERR (default /dev/null).
subtest() {
	local name=$1 out rc planned n bad
	shift
	out=$("$@" 2>>"${SUBTEST_ERR:-/dev/null}")
	rc=$?
	[ -z "$out" ] || sed 's/^/    /' <<<"$out"
	planned=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' <<<"$out" | head -n 1)
	n=$(grep -cE '^(not )?ok\b' <<<"$out")
	bad=$(grep -m1 -E '^not ok' <<<"$out")
	if [ "$rc" = 0 ] && [ -n "$planned" ] && [ "$n" = "$planned" ] && [ -z "$bad" ]; then
		ok "$name ($n checks)"
	else
		fail "$name: ${bad:+$bad; }exit $rc, ran $n of ${planned:-no plan of} checks"
	fi
}

# abort WHY: a prerequisite is missing; one failing check, then stop (the
# harness also reports the checks the plan promised and never ran).
abort() { fail "$*"; finish; }
# fail_n N WHAT: N failing checks (the checks a failed step could not run)
fail_n() {
	local i
	for ((i = 0; i < $1; i++)); do fail "$2"; done
}

# Directory for diagnostics; shared with the host when run by tests/run.
# A Debian kernel's run of a file (MMLOCK_KERNEL=debian-*) keeps its own,
# under KERNEL/, instead of overwriting the lab kernel's run of it.
test_out() {
	local d=${MMLOCK_TEST_OUT:-/tmp/mmlock-test}
	stock_kernel && d=$d/$MMLOCK_KERNEL
	d=$d/$1
	mkdir -p "$d" && echo "$d"
}

# wait_for FILE REGEX SECONDS [PID]: until FILE has a line matching REGEX
# (extended); fails early if PID is given and gone without it.
wait_for() {
	local i
	for ((i = 0; i < $3 * 10; i++)); do
		grep -qE "$2" "$1" 2>/dev/null && return 0
		[ -n "${4:-}" ] && ! kill -0 "$4" 2>/dev/null && { grep -qE "$2" "$1" 2>/dev/null; return; }
		sleep 0.1
	done
	return 1
}

# --- tools: start, wait until attached, stop within a bound ---------------
# tool_start NAME OUT ERR CMD...: start CMD in the background (stdout to OUT,
# stderr to ERR; ERR may be OUT) and wait until it says it is attached:
# "Hit Ctrl-C" or a line starting "Tracing" (the libbpf tools; bpftrace
# scripts print "Hit Ctrl-C" in BEGIN, which runs once every probe is
# attached). NAME is the handle for tool_stop; its pid is TOOL_PIDS[NAME].
# Returns 1 (and notes why in ERR) if CMD exited or did not attach within
# TOOL_ATTACH_S (240 s: attaching trampolines under TCG takes 10-30 s,
# more on a loaded host).
TOOL_ATTACH_S=240 TOOL_STOP_S=300 TOOL_RC=
declare -A TOOL_PIDS=()
tool_start() {
	local name=$1 o=$2 e=$3
	shift 3
	if [ "$o" = "$e" ]; then
		"$@" >"$o" 2>&1 &
	else
		"$@" >"$o" 2>"$e" &
	fi
	TOOL_PIDS[$name]=$!
	wait_for "$e" 'Hit Ctrl-C|^Tracing' "$TOOL_ATTACH_S" "${TOOL_PIDS[$name]}" && return 0
	if kill -0 "${TOOL_PIDS[$name]}" 2>/dev/null; then
		echo "tool_start: $name did not attach within $TOOL_ATTACH_S s (pid ${TOOL_PIDS[$name]})" >>"$e"
	else	# not reaped here: tool_stop gives its exit status
		echo "tool_start: $name exited before it attached (pid ${TOOL_PIDS[$name]}): $(grep -v '^libbpf: ' "$e" | tail -n 1)" >>"$e"
	fi
	return 1
}

# tool_stop NAME [SIGNAL]: stop the tool tool_start started as NAME, as
# Ctrl-C would (SIGINT, the default; "none" waits for it to exit by itself,
# e.g. -p or -d), and reap it. Sets TOOL_RC to its exit status; returns 1
# if it had not exited within TOOL_STOP_S and was killed (TOOL_RC 137): a
# detach waits for RCU grace periods, over 60 s seen under TCG on a busy
# host. A NAME starting with "bpftrace" gets its SIGINT repeated
# (scripts/bpftrace-stop.sh says why).
tool_stop() {
	local name=$1 sig=${2:-INT} pid=${TOOL_PIDS[$1]:-} i
	TOOL_RC=
	[ -n "$pid" ] || { echo "tool_stop: no tool named $name" >&2; return 1; }
	unset "TOOL_PIDS[$name]"
	if [ "$sig" = INT ] && [[ $name == bpftrace* ]]; then
		. "$TOP/scripts/bpftrace-stop.sh"
		if bpftrace_stop "$pid"; then TOOL_RC=0; return 0; fi
		echo "tool_stop: $name did not exit within 300 s of $BPFTRACE_SIGINTS SIGINTs; killed" >&2
		TOOL_RC=137
		return 1
	fi
	[ "$sig" = none ] || kill "-$sig" "$pid" 2>/dev/null
	for ((i = 0; i < TOOL_STOP_S * 10; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		echo "tool_stop: $name did not exit within $TOOL_STOP_S s; killed" >&2
		kill -KILL "$pid"
		wait "$pid" 2>/dev/null
		TOOL_RC=137
		return 1
	fi
	wait "$pid"
	TOOL_RC=$?
	return 0
}

# --- sysctls: set for this file, restored when it exits --------------------
# sysctl_set KEY VALUE: write /proc/sys/KEY (dots or slashes); the first
# write of a key saves its value, and the EXIT trap restores them all.
declare -A _sysctl_saved=()
sysctl_set() {
	local f=/proc/sys/${1//.//}
	[ -n "${_sysctl_saved[$f]+x}" ] || _sysctl_saved[$f]=$(cat "$f") || return 1
	echo "$2" >"$f"
}
sysctl_restore() {
	local f
	for f in "${!_sysctl_saved[@]}"; do echo "${_sysctl_saved[$f]}" >"$f"; done
	_sysctl_saved=()
}
# at_exit COMMAND: run COMMAND (eval'd) when the file exits, after stopping
# the tools still running and before restoring the sysctls. Files never set
# their own EXIT trap.
_at_exit=()
at_exit() { _at_exit+=("$1"); }
_lib_exit() {
	local n c
	for n in "${!TOOL_PIDS[@]}"; do tool_stop "$n"; done
	for c in "${_at_exit[@]}"; do eval "$c"; done
	sysctl_restore
}
trap _lib_exit EXIT

# --- vm.munmap_lock_mode (patch 0001) -------------------------------------
MODE_F=/proc/sys/vm/munmap_lock_mode
BYTES_F=/proc/sys/vm/munmap_section_bytes
have_modes() { [ -w "$MODE_F" ] && [ -w "$BYTES_F" ]; }
# set_mode MODE [SECTION_BYTES]
set_mode() {
	sysctl_set vm.munmap_lock_mode "$1" || return 1
	[ -z "${2:-}" ] || sysctl_set vm.munmap_section_bytes "$2"
}

in_guest() { [ "${MMLOCK_GUEST:-0}" = 1 ]; }
# stock_kernel: the guest runs one of Debian's own kernels (a file's
# "# kernels:" line; scripts/vm-run sets MMLOCK_KERNEL), not the lab kernel
stock_kernel() { [[ ${MMLOCK_KERNEL:-lab} == debian-* ]]; }
# mode_check MODE [SECTION_BYTES]: one check that munmap runs in MODE:
# set_mode on the lab kernel; on a stock kernel, which has no such sysctl
# (munmap downgrades), that the sysctl is absent.
mode_check() {
	if stock_kernel; then
		check "$MMLOCK_KERNEL: no vm.munmap_lock_mode (stock munmap downgrades)" \
			[ ! -e /proc/sys/vm/munmap_lock_mode ]
	else
		check "set vm.munmap_lock_mode=$1" set_mode "$@"
	fi
}

finish() {
	[ -z "$_plan" ] || [ "$_n" = "$_plan" ] ||
		echo "# $0: planned $_plan checks, ran $_n"
	exit "$_failed"
}
