# tests/bpftrace/bt_lib.sh: helpers for the bpftrace script tests (sourced by
# tests/bpftrace/*.guest.sh, in the guest). Each test starts a script from
# bpf/bpftrace/, runs tests/bin/bt_munmap next to it, stops the script with
# SIGINT and checks what it printed.
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
. "$TOP/scripts/bpftrace-stop.sh"
BT_DIR=$TOP/bpf/bpftrace
BT_W=$TESTBIN/bt_munmap
MODE_SYSCTL=/proc/sys/vm/munmap_lock_mode
SECTION_SYSCTL=/proc/sys/vm/munmap_section_bytes
BT_PID=

# offsetof(struct mm_struct, mmap_lock) from the running kernel's BTF.
bt_mmoff() {
	pahole -C mm_struct /sys/kernel/btf/vmlinux 2>/dev/null |
		awk '/struct rw_semaphore[ \t]+mmap_lock;/ { sub(/.*\/\*[ \t]*/, ""); print $1; exit }'
}

# bt_target OUT BT_MUNMAP-ARGS...: start bt_munmap (with -g GOFILE: it
# waits for GOFILE before each iteration) in the background, output in OUT,
# until it is ready for iteration 0. Sets BT_WL (the job, for wait/kill)
# and BT_TPID (the pid it reports, for PID filters). Returns 1 after a
# failing check if it never gets ready.
bt_target() {
	local o=$1
	shift
	"$BT_W" "$@" >"$o" 2>&1 &
	BT_WL=$!
	if ! wait_for "$o" 'ready pid=.* iter=0' 30 "$BT_WL"; then
		fail "bt_munmap -g did not get ready: $(tr '\n' ' ' <"$o")"
		return 1
	fi
	BT_TPID=$(sed -n 's/^ready pid=\([0-9]*\).*/\1/p' "$o" | head -n1)
}

# bt_start SCRIPT OUT PID MMOFF: start bpf/bpftrace/SCRIPT.bt, wait until it
# has attached (its BEGIN line). Under TCG this takes 10-30 s.
bt_start() {
	bpftrace -B line "$BT_DIR/$1.bt" "$3" "$4" >"$2" 2>&1 &
	BT_PID=$!
	wait_for "$2" 'Hit Ctrl-C' 240 "$BT_PID"
}

# bt_stop: stop the script started by bt_start (scripts/bpftrace-stop.sh:
# SIGINT, repeated; killed after 300 s). Returns 1 (and says so on stderr)
# if bpftrace had to be killed: it then printed no maps.
bt_stop() {
	[ -n "$BT_PID" ] || return 0
	local rc=0
	if ! kill -0 "$BT_PID" 2>/dev/null; then	# gone (and maybe reaped)
		wait "$BT_PID" 2>/dev/null
		BT_PID=
		return 0
	fi
	if ! bpftrace_stop "$BT_PID"; then
		echo "bpftrace (pid $BT_PID) did not exit within 300 s of $BPFTRACE_SIGINTS SIGINTs, killed" >&2
		rc=1
	elif [ "$BPFTRACE_SIGINTS" -gt 1 ]; then
		echo "bpftrace (pid $BT_PID) exited after $BPFTRACE_SIGINTS SIGINTs" >&2
	fi
	BT_PID=
	return $rc
}

# bt_stopped NAME: after bt_stop, one check that the script exited on SIGINT
# and printed its maps (so that a hang is one clear failure).
bt_stopped() {
	local rc=$?
	check "$1 exited on SIGINT within 300 s and printed its maps" [ "$rc" = 0 ]
	return $rc
}
trap 'bt_stop' EXIT

have_modes() { [ -w "$MODE_SYSCTL" ]; }

# set_mode MODE: vm.munmap_lock_mode (section also gets 16 MiB sections when
# vm.munmap_section_bytes exists, so a 256 MiB munmap has many).
set_mode() {
	have_modes || return 0
	echo "$1" >"$MODE_SYSCTL" || return 1
	if [ "$1" = section ] && [ -w "$SECTION_SYSCTL" ]; then
		echo $((16 << 20)) >"$SECTION_SYSCTL" || return 1
	fi
}

# kv LINE KEY: the value of KEY=VALUE in LINE (unit suffixes stripped).
kv() { sed -n "s/.*[ ]$2=\([0-9.]*\).*/\1/p" <<<"$1" | head -n1; }
kvs() { sed -n "s/.*[ ]$2=\([^ ]*\).*/\1/p" <<<"$1" | head -n1; }

# fcheck WHAT AWK-EXPRESSION: ok if the (floating point) expression is true
# (an expression with a missing number is a syntax error: not ok).
fcheck() {
	if awk "BEGIN { exit !($2) }" </dev/null; then ok "$1"; else fail "$1: ($2) is false"; fi
}

# hist_count FILE MAP: sum of the counts of a bpftrace hist() printed as @MAP
# ("@MAP: " with a trailing space, then "[lo, hi)   N |@@@|" lines).
hist_count() {
	awk -v m="@$2:" '$1 == m { on = 1; next } on && /^\[/ { sub(/^\[[^\])]*[\])][ \t]*/, ""); n += $1; next } on { on = 0 } END { print n + 0 }' "$1"
}

# map_val FILE MAP KEY: value of @MAP[KEY] printed as "@MAP[KEY]: V".
map_val() { sed -n "s/^@$2\[$3\]: \([0-9]*\).*/\1/p" "$1" | head -n1; }

# map_sum FILE MAP: sum of the values of every @MAP[...]: V line.
map_sum() { awk -v m="@$2[" 'index($0, m) == 1 { n += $NF } END { print n + 0 }' "$1"; }

# stat_count FILE MAP KEY: the count of "@MAP[KEY]: count N, average ...".
stat_count() { sed -n "s/^@$2\[$3\]: count \([0-9]*\),.*/\1/p" "$1" | head -n1; }
