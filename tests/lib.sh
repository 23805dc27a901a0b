# tests/lib.sh: helpers for shell tests (sourced). See docs/CONVENTIONS.md.
# Each check prints "ok - WHAT" or "not ok - WHAT: WHY"; the file's exit
# status is non-zero if any check failed (call `finish` at the end).
TOP=${MMLOCK_TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
TESTBIN=$TOP/tests/bin
_failed=0

ok() { echo "ok - $*"; }
fail() { echo "not ok - $*"; _failed=1; }
skip() { echo "ok - $1 # SKIP ${2:-}"; }

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
		fail "$1: $2 not in [$3, $4]"
	fi
}

# Directory for diagnostics; shared with the host when run by tests/run.
test_out() {
	local d=${MMLOCK_TEST_OUT:-/tmp/mmlock-test}/$1
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

# exit_within PID SECONDS LOG WHO: wait up to SECONDS for PID to exit; if
# it has not, say so in LOG ("WHO did not exit within SECONDS s; killed")
# and SIGKILL it. Bounded, so that a tool stuck in its detach fails its
# case, not the run. The caller still `wait`s for the status.
exit_within() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -0 "$1" 2>/dev/null || return 0
	echo "$4 did not exit within $2 s; killed" >>"$3"
	kill -KILL "$1"
}

in_guest() { [ "${MMLOCK_GUEST:-0}" = 1 ]; }

finish() { exit "$_failed"; }
