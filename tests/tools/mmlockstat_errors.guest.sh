#!/usr/bin/env bash
# mmlockstat_errors.guest.sh: bad input and environment get one clear line
# on stderr and the documented exit status (1 runtime, 2 usage); SIGTERM
# and -d print the final summary; --prometheus serves /metrics.
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"

TOOL=$TOP/bpf/mmlockstat
CHECK="/usr/bin/python3 $TOP/tests/tools/mmlockstat_check.py"
out=$(test_out mmlockstat_errors)
[ -x "$TOOL" ] || { fail "bpf/mmlockstat is built (make tools)"; finish; }

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
if command -v setpriv >/dev/null; then
	expect "not root" 1 "needs root" \
		setpriv --reuid=65534 --regid=65534 --clear-groups "$TOOL" -d 1
else
	skip "not root" "no setpriv"
fi
if command -v unshare >/dev/null; then
	expect "kernel without BTF" 1 "kernel has no BTF: rebuild with CONFIG_DEBUG_INFO_BTF=y" \
		unshare -m sh -c "mount -t tmpfs none /sys/kernel/btf && exec $TOOL -d 1"
else
	skip "kernel without BTF" "no unshare"
fi
"$TOOL" -h >"$out/help.txt" 2>&1
check "-h shows EXAMPLES" grep -q '^EXAMPLES:' "$out/help.txt"
check "-h documents --full and --prometheus" \
	sh -c "grep -q -- '--full' '$out/help.txt' && grep -q -- '--prometheus' '$out/help.txt'"

# SIGTERM prints the final summary (one JSON object), exit 0
"$TOOL" -j >"$out/term.json" 2>"$out/term.err" &
pid=$!
wait_for "$out/term.err" '^Tracing' 240 "$pid"
ls / >/dev/null
kill -TERM "$pid"
wait "$pid"
rc=$?
check "SIGTERM: exit 0 (got $rc)" test "$rc" = 0
check "SIGTERM: final summary printed" test "$(grep -c '^{' "$out/term.json")" = 1
$CHECK schema "$out/term.json"

# -d with -i: interval objects, ends by itself
"$TOOL" -j -i 1 -d 3 >"$out/interval.json" 2>"$out/interval.err"
rc=$?
n=$(grep -c '^{' "$out/interval.json")
check "-i 1 -d 3: exit 0 (got $rc)" test "$rc" = 0
check_range "-i 1 -d 3: one object per interval" "$n" 3 4
$CHECK schema "$out/interval.json"

# --full: every read hold, tracepoints read by field name.  The tool runs
# until the workload is done (SIGINT then), not for a fixed -d: a stalled
# vCPU must not end the window before the workload ran.
"$TOOL" --full -j >"$out/full.json" 2>"$out/full.err" &
pid=$!
wait_for "$out/full.err" '^Tracing' 240 "$pid" || fail "--full: mmlockstat started: $(tail -n 1 "$out/full.err")"
"$TESTBIN/mmls_hold" munmap:8 >/dev/null
kill -INT "$pid"
wait "$pid"
check "--full: read holds seen (page faults)" \
	test "$($CHECK get "$out/full.json" 'o["histograms"]["read_hold"]["count"] > 0')" = True
check "--full: tracepoint flavour detected: $($CHECK get "$out/full.json" 'o.get("tracepoint_memcg")')" \
	test "$($CHECK get "$out/full.json" 'o.get("tracepoint_memcg") in ("id", "path")')" = True
$CHECK schema "$out/full.json"

# -c COMM: only that command's holds
"$TOOL" -c mmls_hold -j >"$out/comm.json" 2>"$out/comm.err" &
pid=$!
wait_for "$out/comm.err" '^Tracing' 240 "$pid" || fail "-c: mmlockstat started: $(tail -n 1 "$out/comm.err")"
"$TESTBIN/mmls_hold" munmap:8 >/dev/null
kill -INT "$pid"
wait "$pid"
check "-c mmls_hold: its munmap seen as a downgraded hold" \
	test "$($CHECK get "$out/comm.json" 'o["histograms"]["downgrade_read_phase"]["count"] >= 1')" = True
check "-c mmls_hold: every top hold is mmls_hold's" \
	test "$($CHECK get "$out/comm.json" 'all(t["comm"] == "mmls_hold" for t in o["top_holds"]) and len(o["top_holds"]) > 0')" = True

# --prometheus: /metrics on 127.0.0.1 by default
"$TOOL" --prometheus :19464 -d 60 >"$out/prom.out" 2>"$out/prom.err" &
pid=$!
wait_for "$out/prom.err" '^Tracing' 240 "$pid"
"$TESTBIN/mmls_hold" munmap:8 >/dev/null
/usr/bin/python3 - "$out" <<'PY'
import sys, urllib.request, urllib.error
out = sys.argv[1]
body = urllib.request.urlopen("http://127.0.0.1:19464/metrics", timeout=10).read().decode()
open(out + "/metrics.txt", "w").write(body)
try:
    urllib.request.urlopen("http://127.0.0.1:19464/", timeout=10)
    print("not ok - --prometheus: / is 404: got 200")
except urllib.error.HTTPError as e:
    print(("ok" if e.code == 404 else "not ok") + " - --prometheus: / is 404 (%d)" % e.code)
PY
kill -INT "$pid"
wait "$pid"
mode=$(cat /proc/sys/vm/munmap_lock_mode 2>/dev/null || echo native)
check "--prometheus: write_hold histogram exposed, labelled mode=\"$mode\"" \
	grep -q "^mmap_lock_write_hold_seconds_bucket{mode=\"$mode\",le=\"+Inf\"} [1-9]" "$out/metrics.txt"
check "--prometheus: all six contract histograms" sh -c \
	"for h in write_hold read_hold downgrade_write_phase downgrade_read_phase read_wait write_wait; do grep -q \"^mmap_lock_\${h}_seconds_count{mode=\" '$out/metrics.txt' || exit 1; done"
check "--prometheus: drops counter" grep -q '^mmap_lock_drops_total ' "$out/metrics.txt"

# --prometheus splits by vm.munmap_lock_mode: an 8 MiB munmap per mode (the
# tool traces every process: each window also holds the test's own
# processes' mmaps and ld.so's munmaps), 0.5 s on either side of a switch
# so that the 200 ms mode poll cannot mix two windows
if [ -f /proc/sys/vm/munmap_lock_mode ]; then
	"$TOOL" --prometheus :19465 -d 120 >"$out/prom2.out" 2>"$out/prom2.err" &
	pid=$!
	wait_for "$out/prom2.err" '^Tracing' 240 "$pid"
	sleep 0.5
	for m in exclusive section downgrade; do
		echo "$m" >/proc/sys/vm/munmap_lock_mode
		sleep 0.5	# > the exporter's 200 ms mode poll
		"$TESTBIN/mmls_hold" munmap:8 >/dev/null
		sleep 0.5
	done
	/usr/bin/python3 -c 'import sys, urllib.request; open(sys.argv[1], "w").write(urllib.request.urlopen("http://127.0.0.1:19465/metrics", timeout=10).read().decode())' "$out/metrics-modes.txt"
	kill -INT "$pid"
	wait "$pid"
	# exclusive: write holds, no downgrade; downgrade: downgraded holds
	for m in exclusive section downgrade; do
		n=$(sed -n "s/^mmap_lock_write_hold_seconds_count{mode=\"$m\"} //p" "$out/metrics-modes.txt")
		check_range "--prometheus: mode=\"$m\" has write holds" "${n:-0}" 1 1000000
	done
	n=$(sed -n 's/^mmap_lock_downgrade_read_phase_seconds_count{mode="exclusive"} //p' "$out/metrics-modes.txt")
	check "--prometheus: no downgraded read phase under mode=\"exclusive\" (${n:-none})" test "${n:-0}" = 0
	n=$(sed -n 's/^mmap_lock_downgrade_read_phase_seconds_count{mode="downgrade"} //p' "$out/metrics-modes.txt")
	check_range "--prometheus: downgraded read phases are under mode=\"downgrade\"" "${n:-0}" 1 1000000
	check "--prometheus: every histogram sample carries a mode label" \
		sh -c "! grep -E '^mmap_lock_[a-z_]+_seconds_(bucket|sum|count)' '$out/metrics-modes.txt' | grep -qv 'mode=\"'"
	echo downgrade >/proc/sys/vm/munmap_lock_mode
fi
finish
