#!/usr/bin/env bash
# kernels: debian-6.1 debian-6.12
# mmlockstat_exec.guest.sh: --full ends the read hold that exec takes on the
# old mm. exec_mmap() takes the old mm's mmap_lock for read and releases it
# after the task switched to the new mm, so the release is of a lock that is
# no longer the task's own. A tool that matches releases against the
# task's current mm leaves that hold open for ever: its CPU slot stays
# claimed (the next holds there spill), and a later writer waiting on a
# new mm at the same address is blamed on a task that no longer exists.
#
# mmls_exec execs itself N times in one process (the pid stays), under
# `mmlockstat --full -p PID`, in both read-probe flavours (tp_btf, the
# default on the lab kernel whose tracepoints carry memcg_id; fentry, what
# Debian's kernels get, forced with MMLS_READ_PROBES=fentry). Each exec and
# the exit is one read hold of a left mm: timed when its release is seen
# (read_holds_left_mm), else ended when the exec or exit completes, untimed
# (read_holds_left_mm_untimed: the task migrated in between). (exec's
# get_arg_page() read holds of the new mm, remote until the switch, are
# not among them: the tp_btf set sees them and ends them normally.) Exact
# checks: the two add up to N + 1, and no read hold is left open at the end.
# On Debian's kernels only the fentry flavour applies (the tp_btf checks
# skip, listed in tests/expected-skips).
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/mmls_lib.sh"

TOOL=$TOP/bpf/mmlockstat
out=$(test_out mmlockstat_exec)
N=200
FLAVOURS=(tp_btf fentry)
N_PER=3
plan $((${#FLAVOURS[@]} * N_PER))
[ -x "$TOOL" ] || abort "bpf/mmlockstat is built (make tools)"
[ -x "$TESTBIN/mmls_exec" ] || abort "tests/bin/mmls_exec is built (make -C tests/tools)"

for fl in "${FLAVOURS[@]}"; do
	if [ "$fl" = tp_btf ] && stock_kernel; then
		for c in "the session used tp_btf read probes" "read holds of an mm the task left" "read holds left open at the end"; do
			skip "$fl: $c" "$MMLOCK_KERNEL: its mmap_lock tracepoints carry the memcg path (tp_btf needs the id: 0002, 6.14)"
		done
		continue
	fi
	env=()
	[ "$fl" = fentry ] && env=(MMLS_READ_PROBES=fentry)
	if gated_start "$fl" "$TESTBIN/mmls_exec" $N &&
	   xpid=$GATED_PID &&
	   tool_start "$fl" "$out/$fl.json" "$out/$fl.err" env "${env[@]}" "$TOOL" --full -j -p "$xpid"; then
		gated_go
		wait "$xpid"
		xrc=$?
		tool_stop "$fl"
		read -r probes holds ex unt open <<<"$($CHECK get "$out/$fl.json" \
			'" ".join(str(x) for x in (o.get("read_probes"), o["histograms"]["read_hold"]["count"], o.get("read_holds_left_mm"), o.get("read_holds_left_mm_untimed"), o.get("read_holds_open")))')"
		check "$fl: the session used $fl read probes and saw the chain's read holds (got ${probes:-none}, ${holds:-0} holds; mmls_exec exit $xrc, $(tail -n 1 "$out/$fl.hold"); tool exit $TOOL_RC)" \
			[ "${probes:-}" = "$fl" -a "${holds:-0}" -ge $N -a "$xrc" = 0 -a "$TOOL_RC" = 0 ]
		[[ ${ex:-} =~ ^[0-9]+$ && ${unt:-} =~ ^[0-9]+$ ]] && sum=$((ex + unt)) || sum="none"
		check_eq "$fl: read holds of an mm the task left ($N execs, 1 exit), timed + ended at exec/exit (${ex:-none} + ${unt:-none})" \
			"$sum" $((N + 1))
		check_eq "$fl: read holds left open at the end" "${open:-none}" 0
	else
		[ -n "$GATED_PID" ] && gated_abort
		fail_n $N_PER "$fl: mmls_exec ready and mmlockstat started: $(tail -n 1 "$out/$fl.err" 2>/dev/null)$(head -n 1 "$out/$fl.hold.err" 2>/dev/null)"
	fi
done
finish
