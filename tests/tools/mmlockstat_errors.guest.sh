#!/usr/bin/env bash
# kernels: debian-6.1 debian-6.12
# mmlockstat_errors.guest.sh: bad input and environment get one clear line
# on stderr and the documented exit status (1 runtime, 2 usage); SIGTERM
# prints the final summary; --full sees read holds; -c keeps one command's
# holds and leaves out another's; --prometheus serves /metrics. (-i/-d
# counts and the exporter's mode split depend on the tool's timing: they
# are in mmlockstat_timing.icount.sh.)
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/mmls_lib.sh"

TOOL=$TOP/bpf/mmlockstat
out=$(test_out mmlockstat_errors)

# expect NAME RC REGEX CMD...: exit status RC and stderr matching REGEX
expect() {
	local name=$1 rc=$2 re=$3 got
	shift 3
	"$@" >"$out/$name.out" 2>"$out/$name.err"
	got=$?
	if [ "$got" = "$rc" ] && grep -Eq -e "$re" "$out/$name.err"; then
		ok "$name: exit $rc, '$(head -n1 "$out/$name.err")'"
	else
		fail "$name: want exit $rc and /$re/, got exit $got: $(head -n2 "$out/$name.err" | tr '\n' ' ')"
	fi
}

N_EXPECT=12 N_LOAD=1 N_HELP=2 N_TERM=3 N_VERB=2 N_TP=2 N_FULL=4 N_COMM=2 N_PID=2 N_PROM=4
plan $((N_EXPECT + N_LOAD + N_HELP + N_TERM + N_VERB + N_TP + N_FULL + N_COMM + N_PID + N_PROM))
[ -x "$TOOL" ] || abort "bpf/mmlockstat is built (make tools)"
[ -x "$TESTBIN/mmls_hold" ] && [ -x "$TESTBIN/munmapsnoop_map" ] && [ -f "$TESTBIN/bpf_enomem" ] ||
	abort "tests/bin/mmls_hold, munmapsnoop_map and bpf_enomem are built (make -C tests/tools)"

expect "pid does not exist" 1 "pid 999999 does not exist" "$TOOL" -p 999999 -d 1
expect "malformed pid" 2 "invalid PID 'abc'" "$TOOL" -p abc
expect "malformed interval" 2 "invalid interval '0'" "$TOOL" -i 0
expect "malformed duration" 2 "invalid duration 'x'" "$TOOL" -d x
expect "comm too long" 2 "invalid COMM" "$TOOL" -c 0123456789abcdefXYZ
expect "unknown option" 2 "unrecognized option|invalid option" "$TOOL" --bogus
expect "extra argument" 2 "unexpected argument 'foo'" "$TOOL" foo
expect "bad --prometheus" 1 "bad port" "$TOOL" --prometheus 127.0.0.1:99999 -d 1
expect "missing -E function named" 1 "-E no_such_fn_xyz: no such kernel function" \
	"$TOOL" -E no_such_fn_xyz -d 1
# util-linux (setpriv, unshare) is in the guest image: these always run
expect "not root" 1 "needs root" \
	setpriv --reuid=65534 --regid=65534 --clear-groups "$TOOL" -d 1
expect "kernel without BTF" 1 "kernel has no BTF: rebuild with CONFIG_DEBUG_INFO_BTF=y" \
	unshare -m sh -c "mount -t tmpfs none /sys/kernel/btf && exec $TOOL -d 1"

# A load that fails says why in libbpf's words, without -v (libbpf's
# messages are kept while the tool loads, since a failed fentry attempt is
# not fatal when kprobes load). tests/bin/bpf_enomem makes every map
# creation fail with ENOMEM, as a too small memory.max of the cgroup does.
expect "maps refused (ENOMEM)" 1 "cannot load BPF programs: Cannot allocate memory; libbpf said:" \
	env LD_PRELOAD="$TESTBIN/bpf_enomem" "$TOOL" -d 1
e="$out/maps refused (ENOMEM).err"
check "maps refused: libbpf's reason follows ('$(grep -m1 "failed to create" "$e")') and the fix: '$(grep -m1 memory.max "$e")'" \
	sh -c "grep -q \"^  libbpf: map '[a-z_]*': failed to create: Cannot allocate memory\" '$e' &&
	grep -q '^mmlockstat: BPF maps are charged to the memory cgroup: raise its memory.max' '$e'"

"$TOOL" -h >"$out/help.txt" 2>&1
check "-h shows EXAMPLES" grep -q '^EXAMPLES:' "$out/help.txt"
check "-h documents --full and --prometheus" \
	sh -c "grep -q -- '--full' '$out/help.txt' && grep -q -- '--prometheus' '$out/help.txt'"

# SIGTERM prints the final summary (one JSON object), exit 0
if tool_start term "$out/term.json" "$out/term.err" "$TOOL" -j; then
	ls / >/dev/null
	tool_stop term TERM
	check_eq "SIGTERM: exit status" "$TOOL_RC" 0
	check_eq "SIGTERM: final summary printed, JSON objects" "$(grep -c '^{' "$out/term.json")" 1
	pycheck "SIGTERM: the summary matches schema 1" schema "$out/term.json"
else
	fail_n $N_TERM "SIGTERM: mmlockstat started: $(tail -n 1 "$out/term.err")"
fi

# -v names each probe it attached (the write side by fentry, the end of
# brk's downgraded read phase by a kretprobe: on all three kernels);
# without -v (the SIGTERM run above) none is named.
"$TOOL" -v -j -d 1 >"$out/verbose.json" 2>"$out/verbose.err"
check "-v: names its probes (exit $?): $(grep -c '^mmlockstat: probe ' "$out/verbose.err") lines, fentry/down_write and kretprobe/__x64_sys_brk among them" \
	sh -c "grep -qx 'mmlockstat: probe fentry/down_write' '$out/verbose.err' &&
	grep -qx 'mmlockstat: probe kretprobe/__x64_sys_brk' '$out/verbose.err'"
check "without -v: the SIGTERM run ran ($(grep -c '^{' "$out/term.json") JSON object) and named no probe" \
	sh -c "grep -q '^{' '$out/term.json' && ! grep -q '^mmlockstat: probe ' '$out/term.err'"

# The lock:contention_begin/end tracepoints are found in the kernel's BTF
# (their btf_trace_* typedefs, what tp_btf attaches through), not by luck in
# kallsyms: with the tracepoints' __traceiter_* symbols hidden from
# /proc/kallsyms (a filtered copy bound over it, in a mount namespace) the
# tool still loads its wait probes: it does not warn that waits stay empty.
ks=$(mktemp /tmp/kallsyms.XXXXXX)
unshare -m sh -c "grep -v ' __traceiter_contention_' /proc/kallsyms >$ks &&
	mount --bind $ks /proc/kallsyms &&
	! grep -q ' __traceiter_contention_begin' /proc/kallsyms &&
	exec $TOOL -j -d 1" >"$out/tp.json" 2>"$out/tp.err"
rc=$?
rm -f "$ks"
check "contention tracepoints: the tool ran with them hidden from kallsyms (exit $rc, $(grep -c '^{' "$out/tp.json") JSON object)" \
	test "$rc" = 0 -a "$(grep -c '^{' "$out/tp.json")" = 1
check "contention tracepoints: found in BTF, no 'read_wait and write_wait stay empty' warning: stderr '$(head -n 2 "$out/tp.err" | tr '\n' ' ')'" \
	test "$(grep -c 'no lock:contention_begin' "$out/tp.err")" = 0

# --full: every read hold, tracepoints read by field name. The tool runs
# until the workload is done (SIGINT then), not for a fixed -d.
# The tracepoint layout, from the kernel's own format file: a memcg id
# with patch 0002, else the memcg path.
fmt=/sys/kernel/tracing/events/mmap_lock/mmap_lock_acquire_returned/format
want=path kind=fentry/fexit
grep -q 'memcg_id' "$fmt" && want=id kind=tp_btf
if tool_start full "$out/full.json" "$out/full.err" "$TOOL" --full -j; then
	"$TESTBIN/mmls_hold" munmap:8 >/dev/null
	tool_stop full
	check "--full: read holds seen (page faults): $($CHECK get "$out/full.json" 'o["histograms"]["read_hold"]["count"]')" \
		test "$($CHECK get "$out/full.json" 'o["histograms"]["read_hold"]["count"] > 0')" = True
	check_eq "--full: tracepoint layout detected (the format file says $want)" \
		"$($CHECK get "$out/full.json" 'o.get("tracepoint_memcg")')" "$want"
	pycheck "--full: output matches schema 1" schema "$out/full.json"
	check "--full: stderr names the read probes ($kind) and their measured cost: $(grep -- '--full:' "$out/full.err")" \
		grep -q "^mmlockstat: --full: read holds via $kind .*: measured +[0-9.]* % CPU per page fault" "$out/full.err"
else
	fail_n $N_FULL "--full: mmlockstat started: $(tail -n 1 "$out/full.err")"
fi

# -c COMM: only that command's holds. Another command (munmapsnoop_map
# renamed other-name) munmaps 8 MiB in the same session first: its
# downgraded hold would be among the top holds without the filter.
if tool_start comm "$out/comm.json" "$out/comm.err" "$TOOL" -c mmls_hold -j -n 64; then
	"$TESTBIN/munmapsnoop_map" -n other-name -s 8 >"$out/comm.other" 2>&1
	orc=$?
	"$TESTBIN/mmls_hold" munmap:8 >"$out/comm.hold" 2>&1
	hrc=$?
	tool_stop comm
	check_eq "-c mmls_hold: its 8 MiB munmap seen as a downgraded hold (exit $hrc; tool exit $TOOL_RC)" \
		"$($CHECK get "$out/comm.json" '[(t["comm"], t["op"], t["kind"]) for t in o["top_holds"] if t["comm"] == "mmls_hold" and t["op"] == "munmap"][:1]')" \
		"[('mmls_hold', 'munmap', 'downgrade')]"
	check_eq "-c mmls_hold: another command's munmap (same session, exit $orc) is not seen: top holds' commands" \
		"$($CHECK get "$out/comm.json" 'sorted(set(t["comm"] for t in o["top_holds"]))')" "['mmls_hold']"
else
	fail_n $N_COMM "-c: mmlockstat started: $(tail -n 1 "$out/comm.err")"
fi

# -p PID: only that process's holds. mmls_hold waits (-g) while the tool
# attaches with -p its pid; another process (munmapsnoop_map renamed
# other-name) munmaps 8 MiB in the same session first, then mmls_hold does.
if gated_start pid "$TESTBIN/mmls_hold" -g munmap:8 &&
   hpid=$GATED_PID &&
   tool_start pid "$out/pid.json" "$out/pid.err" "$TOOL" -p "$hpid" -j -n 64; then
	"$TESTBIN/munmapsnoop_map" -n other-name -s 8 >"$out/pid.other" 2>&1
	orc=$?
	gated_go
	wait "$hpid"
	hrc=$?
	tool_stop pid
	check_eq "-p $hpid: its 8 MiB munmap seen as a downgraded hold (exit $hrc; tool exit $TOOL_RC)" \
		"$($CHECK get "$out/pid.json" '[(t["pid"], t["op"], t["kind"]) for t in o["top_holds"] if t["op"] == "munmap"][:1]')" \
		"[($hpid, 'munmap', 'downgrade')]"
	check_eq "-p $hpid: another process's munmap (same session, exit $orc) is not seen: top holds' pids" \
		"$($CHECK get "$out/pid.json" 'sorted(set(t["pid"] for t in o["top_holds"]))')" "[$hpid]"
else
	[ -n "$GATED_PID" ] && gated_abort
	fail_n $N_PID "-p: mmls_hold ready and mmlockstat started: $(tail -n 1 "$out/pid.err" 2>/dev/null)$(head -n 1 "$out/pid.hold.err" 2>/dev/null)"
fi

# --prometheus: /metrics on 127.0.0.1 by default
mode=$(cat /proc/sys/vm/munmap_lock_mode 2>/dev/null || echo native)
if tool_start prom "$out/prom.out" "$out/prom.err" "$TOOL" --prometheus :19464; then
	"$TESTBIN/mmls_hold" munmap:8 >/dev/null
	code=$($CHECK fetch http://127.0.0.1:19464/metrics "$out/metrics.txt")
	code404=$($CHECK fetch http://127.0.0.1:19464/ "$out/root.txt")
	tool_stop prom
	check_eq "--prometheus: / is 404 (/metrics: $code)" "$code404" 404
	check "--prometheus: write_hold histogram exposed, labelled mode=\"$mode\"" \
		grep -q "^mmap_lock_write_hold_seconds_bucket{mode=\"$mode\",le=\"+Inf\"} [1-9]" "$out/metrics.txt"
	check "--prometheus: all six contract histograms" sh -c \
		"for h in write_hold read_hold downgrade_write_phase downgrade_read_phase read_wait write_wait; do grep -q \"^mmap_lock_\${h}_seconds_count{mode=\" '$out/metrics.txt' || exit 1; done"
	check "--prometheus: drops counter, by cause" grep -q '^mmap_lock_drops_total{cause="map_full"} ' "$out/metrics.txt"
else
	fail_n $N_PROM "--prometheus: mmlockstat started: $(tail -n 1 "$out/prom.err")"
fi
finish
