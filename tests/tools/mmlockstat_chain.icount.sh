#!/usr/bin/env bash
# kernels: debian-6.1 debian-6.12
# mmlockstat_chain.icount.sh: a reader blocked behind a queued writer is
# blamed on the chain, reader <- queued writer <- holder (issue 14, item 6).
#
# rwsem readers do not pass a waiting writer. mmls_hold's main thread holds
# its mmap_lock through the calibration module: 1 ms for write, then
# downgraded, 30 ms (31 ms) for read. 5 ms in, its writer thread munmap()s
# a page: it queues behind the read phase. 10 ms in, its reader thread
# pread()s /proc/self/cmdline: a reader, yet it waits, behind the writer,
# until the holder's unlock and then the writer's munmap. Without the
# writer (the control) the same pread shares the read phase: no wait.
# The tool runs with -E full_proxy_write: default mode tracks a downgrade
# only where an end probe follows (munmap, brk, mremap; the module's
# debugfs write with -E), else the hold ends at the downgrade and a wait
# behind its read phase has no holder (mmlockstat_accuracy's "stale").
# Both threads sleep to their deadlines SCHED_FIFO (mmls_hold.c), so under
# `scripts/vm-run --icount --cpus 1` their order is fixed; the writer's
# queued_before_ns is the 5 ms between them plus their start latencies.
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/mmls_lib.sh"
mmls_icount_setup mmlockstat_chain
SPREAD=$out/spread.txt
rm -f "$SPREAD"
# queued_before_ns: 5 ms (the deadlines) + the difference of the threads'
# start latencies. Measured 2026-12-06 by 3 runs of this file
# (`tests/run -k mmlockstat_chain`), n=6 per kernel: 4999333-5000064 ns on
# the lab kernel, 4999446-5000199 on Debian's 6.1, 4999368-4999426 on
# 6.12. The window is 5 ms +- 50 us: what breaks it is a wrong writer, not
# a drift.
Q_LO=4950000 Q_HI=5050000

N_CHAIN=5 N_TEXT=1 N_CTRL=3 N_SCHEMA=1
plan $((N_CHAIN + N_TEXT + N_CTRL + N_SCHEMA))
[ -x "$TOOL" ] || abort "bpf/mmlockstat is built (make tools)"
[ -x "$HOLD" ] || abort "tests/bin/mmls_hold is built (make -C tests/tools)"
if [ ! -d /sys/kernel/debug/test_mmap_lock ] &&
   ! modprobe test_mmap_lock 2>"$out/modprobe.err"; then
	abort "modprobe test_mmap_lock: $(head -n1 "$out/modprobe.err")"
fi

DG=(downgrade:1000:30000 downgrade:1000:31000)
E=(-E full_proxy_write)

# --- the chain -------------------------------------------------------------
if mmls_case chain $N_CHAIN "-n 64 ${E[*]}" -r 10000 -w 5000 "${DG[@]}"; then
	check_eq "chain: both of the module's downgraded holds seen (top_holds: downgrade, op other: write(2))" \
		"$(get chain 'len([h for h in o["top_holds"] if h["kind"] == "downgrade" and h["op"] == "other"])')" 2
	check_eq "chain: the writer waited twice (write_wait count)" \
		"$(get chain 'o["histograms"]["write_wait"]["count"]')" 2
	check_eq "chain: the reader waited twice, though only readers held the lock (read_wait count)" \
		"$(get chain 'o["histograms"]["read_wait"]["count"]')" 2
	pycheck "chain: each read wait" chain "$out/chain.json" "$out/chain.hold" \
		--lo $Q_LO --hi $Q_HI --record "$SPREAD" chain/queued_before
	check_eq "chain: the writer's waits are blamed on the holder's downgraded-read phase" \
		"$(get chain '[w["holder"]["phase"] for w in o["top_waits"] if w["type"] == "write"]')" \
		"['downgraded-read', 'downgraded-read']"
fi

# --- the chain in the text output -------------------------------------------
if MMLS_TEXT=1 mmls_run text "-n 8 ${E[*]}" -r 10000 -w 5000 downgrade:1000:30000; then
	hpid=$(sed -n 's/^ready //p' "$out/text.hold")
	check "text: the read wait's row is followed by its queued writer ($(grep -m1 'via queued writer' "$out/text.out" | sed 's/^ *//'))" \
		grep -Eq "^ +via queued writer $hpid/[0-9]+ mmls_hold +\(munmap\), queued [0-9.]+ ?ms before" "$out/text.out"
else
	fail "text: mmlockstat ran (exit ${MMLS_RC:-none}): $(tail -n 2 "$out/text.err" | tr '\n' ' ')"
fi

# --- the control: no writer, no wait ----------------------------------------
if mmls_case ctrl $N_CTRL "-n 64 ${E[*]}" -r 10000 "${DG[@]}"; then
	check_eq "ctrl: both of the module's downgraded holds seen (top_holds: downgrade, op other: write(2))" \
		"$(get ctrl 'len([h for h in o["top_holds"] if h["kind"] == "downgrade" and h["op"] == "other"])')" 2
	check_eq "ctrl: the reader shared the read phase: read_wait count" \
		"$(get ctrl 'o["histograms"]["read_wait"]["count"]')" 0
	check_eq "ctrl: no write wait" \
		"$(get ctrl 'o["histograms"]["write_wait"]["count"]')" 0
fi

pycheck "all JSON outputs match schema 1" schema "$out/chain.json" "$out/ctrl.json"
finish
