#!/usr/bin/env bash
# mmlockstat_timing.icount.sh: what mmlockstat does on its own clock. Runs
# under `scripts/vm-run --icount --cpus 1` (guest time counts instructions:
# a stalled host cannot make the tool's main loop miss its times).
# - -i 1 -d 3: exactly three interval objects (prints at 1 s and 2 s, the
#   last one at the 3 s deadline), each of about one second;
# - --prometheus splits the histograms by vm.munmap_lock_mode, polled every
#   200 ms: with 0.5 s on either side of each switch, every munmap lands
#   under the mode it ran in.
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/mmls_lib.sh"
# Bounds in guest seconds: under icount an idle vCPU (waiting for 9p, for an
# RCU grace period) jumps guest time to the next timer, so attaching and
# detaching, seconds of host time, read up to 154 s and 236 s here.
TOOL_ATTACH_S=3000 TOOL_STOP_S=3000

TOOL=$TOP/bpf/mmlockstat
out=$(test_out mmlockstat_timing)
rm -f "$out/spread.txt"
# interval_s of each object, in ms (the checker rounds to 0.1 ms): n=45,
# 1001.1-1001.2. Measured under `scripts/vm-run --icount --cpus 1 -- bash
# /tmp/meas-tools/timing.sh` (`mmlockstat -j -i 1 -d 21` once, then
# `-i 1 -d 3` 7 times, as below) plus one run of this file by `tests/run -k
# tests/tools/`; kernel 6.1 + 0001-0003, 2026-12-04. An interval 2 ms off
# fails.
IV_LO=1000 IV_HI=1003
MODES=(exclusive section downgrade)
N_IV=3 N_PROM=$((${#MODES[@]} + 3))
plan $((N_IV + N_PROM))
[ -x "$TOOL" ] || abort "bpf/mmlockstat is built (make tools)"
[ -x "$TESTBIN/mmls_hold" ] || abort "tests/bin/mmls_hold is built (make -C tests/tools)"

# -d with -i: interval objects, ends by itself. Under icount a vCPU that
# waits for the host (9p) jumps guest time to the next timer, seconds to
# minutes ahead: a print to a file on 9p, or a page fault in the tool's
# text, can make the loop miss whole intervals (seen: interval_s 1.007 and
# 4.763 with stdout on 9p; one interval of 420.7 s with stderr on 9p). So
# both go to tmpfs, and the tool and its libraries are read into the page
# cache first (their page faults are then minor).
# shellcheck disable=SC2046
cat "$TOOL" $(ldd "$TOOL" | awk '$2 == "=>" { print $3 }') >/dev/null
"$TOOL" -j -i 1 -d 3 >/tmp/mmls-interval.json 2>/tmp/mmls-interval.err
rc=$?
cp /tmp/mmls-interval.json "$out/interval.json"
cp /tmp/mmls-interval.err "$out/interval.err"
check_eq "-i 1 -d 3: exit status" "$rc" 0
if msg=$($CHECK intervals "$out/interval.json" 3 --lo $IV_LO --hi $IV_HI --record "$out/spread.txt" IV 2>&1); then
	ok "-i 1 -d 3: one object per interval, each of about 1 s: $msg"
else
	fail "-i 1 -d 3: one object per interval, each of about 1 s: $msg"
fi
if msg=$($CHECK schema "$out/interval.json" 2>&1); then
	ok "-i 1 -d 3: schema 1: $msg"
else
	fail "-i 1 -d 3: schema 1: $msg"
fi

# --prometheus splits by vm.munmap_lock_mode: an 8 MiB munmap per mode (the
# tool traces every process: each window also holds the test's own
# processes' mmaps and ld.so's munmaps), 0.5 s on either side of a switch.
# The sysctls are saved (a `cat`, whose ld.so munmaps downgrade) before the
# tool starts, so that nothing downgrades just before a switch.
set_mode downgrade || echo "set_mode downgrade failed" >>"$out/prom.err"
if tool_start prom "$out/prom.out" "$out/prom.err" "$TOOL" --prometheus :19465; then
	sleep 0.5
	for m in "${MODES[@]}"; do
		set_mode "$m" || echo "set_mode $m failed" >>"$out/prom.err"
		sleep 0.5	# > the exporter's 200 ms mode poll
		"$TESTBIN/mmls_hold" munmap:8 >/dev/null
		sleep 0.5
	done
	code=$($CHECK fetch http://127.0.0.1:19465/metrics "$out/metrics-modes.txt")
	tool_stop prom
	for m in "${MODES[@]}"; do
		n=$(sed -n "s/^mmap_lock_write_hold_seconds_count{mode=\"$m\"} //p" "$out/metrics-modes.txt")
		check_range "--prometheus: mode=\"$m\" has write holds (/metrics: $code)" "${n:-0}" 1 1000000
	done
	# the positive control first: downgraded read phases are counted, under
	# the mode that downgrades
	n=$(sed -n 's/^mmap_lock_downgrade_read_phase_seconds_count{mode="downgrade"} //p' "$out/metrics-modes.txt")
	check_range "--prometheus: downgraded read phases are under mode=\"downgrade\"" "${n:-0}" 1 1000000
	n=$(sed -n 's/^mmap_lock_downgrade_read_phase_seconds_count{mode="exclusive"} //p' "$out/metrics-modes.txt")
	check_eq "--prometheus: no downgraded read phase under mode=\"exclusive\"" "${n:-none}" 0
	check "--prometheus: every histogram sample carries a mode label" \
		sh -c "grep -qE '^mmap_lock_[a-z_]+_seconds_(bucket|sum|count)' '$out/metrics-modes.txt' && ! grep -E '^mmap_lock_[a-z_]+_seconds_(bucket|sum|count)' '$out/metrics-modes.txt' | grep -qv 'mode=\"'"
else
	for ((i = 0; i < N_PROM; i++)); do fail "--prometheus: mmlockstat started: $(tail -n 1 "$out/prom.err")"; done
fi
finish
