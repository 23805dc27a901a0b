# tests/bpftrace/bt_lib.sh: helpers for the bpftrace script tests (sourced by
# tests/bpftrace/*.guest.sh, in the guest). Each test starts a script from
# bpf/bpftrace/, runs tests/bin/bt_munmap next to it, stops the script with
# SIGINT and checks what it printed.
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
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

# bt_wait FILE PATTERN SECONDS PID: until PATTERN is in FILE (fails early if
# PID is gone).
bt_wait() {
	local i
	for ((i = 0; i < $3 * 5; i++)); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		kill -0 "$4" 2>/dev/null || { grep -q "$2" "$1" 2>/dev/null; return; }
		sleep 0.2
	done
	return 1
}

# bt_start SCRIPT OUT PID MMOFF: start bpf/bpftrace/SCRIPT.bt, wait until it
# has attached (its BEGIN line). Under TCG this takes 10-30 s.
bt_start() {
	bpftrace -B line "$BT_DIR/$1.bt" "$3" "$4" >"$2" 2>&1 &
	BT_PID=$!
	bt_wait "$2" 'Hit Ctrl-C' 240 "$BT_PID"
}

# bt_stop: SIGINT, as Ctrl-C would; the script prints its maps and exits.
# Detaching fentry trampolines waits for RCU tasks: slow under TCG (once
# more than 60 s with 8 guests on 2 host cores), hence up to 300 s.
# bpftrace 0.17 can miss a SIGINT: its event loop only sees the flag the
# handler sets when the signal interrupts epoll_wait() (EINTR) or a
# further event arrives; one that lands while it is reading events is
# lost once the probes fall silent (seen: mmap_lock_wait.bt idle for 300
# s after the workload). So SIGINT is repeated at 5, 20 and 60 s; an extra
# one during a slow exit only sets the same flag again.
# Nothing is exec'ed between the first SIGINT and bpftrace's exit (no sleep
# or seq loop): bpftrace stops printing per-event lines at SIGINT but its
# probes stay attached until it has printed the maps, so every process
# started meanwhile (its munmaps, its ELF loader's vm_munmap) would be
# counted in the maps without a line of its own. The watchdog sleeps start
# before the SIGINT. Returns 1 (and says so on stderr) if bpftrace had to
# be killed: it then printed no maps.
bt_stop() {
	[ -n "$BT_PID" ] || return 0
	local wds=() w rc=0 n=1
	if ! kill -0 "$BT_PID" 2>/dev/null; then	# gone (and maybe reaped)
		wait "$BT_PID" 2>/dev/null
		BT_PID=
		return 0
	fi
	for w in 5 20 60 300; do
		sleep "$w" &
		wds+=($!)
	done
	kill -INT "$BT_PID" 2>/dev/null
	for w in "${wds[@]}"; do
		wait -n "$BT_PID" "$w" 2>/dev/null
		kill -0 "$BT_PID" 2>/dev/null || break
		[ "$w" = "${wds[3]}" ] && break
		kill -INT "$BT_PID" 2>/dev/null
		n=$((n + 1))
	done
	if kill -0 "$BT_PID" 2>/dev/null; then
		echo "bpftrace (pid $BT_PID) did not exit within 300 s of $n SIGINTs, killed" >&2
		kill -KILL "$BT_PID" 2>/dev/null
		rc=1
	elif [ "$n" -gt 1 ]; then
		echo "bpftrace (pid $BT_PID) exited after $n SIGINTs" >&2
	fi
	kill "${wds[@]}" 2>/dev/null
	wait "$BT_PID" "${wds[@]}" 2>/dev/null
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
