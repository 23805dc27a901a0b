# tests/tools/mmls_lib.sh: shared by the mmlockstat tests (sourced after
# lib.sh; needs TOOL, HOLD and out set).
CHECK="$PY $TOP/tests/tools/mmlockstat_check.py"

# mmls_icount_setup NAME: what an icount file of these tests sets first:
# TOOL, HOLD, out=$(test_out NAME), and tool bounds in guest seconds (under
# icount an idle vCPU jumps guest time to the next timer, so attaching and
# detaching read hundreds of seconds).
mmls_icount_setup() {
	# shellcheck disable=SC2034	# read by tool_start and tool_stop
	TOOL_ATTACH_S=3000 TOOL_STOP_S=3000
	TOOL=$TOP/bpf/mmlockstat
	HOLD=$TESTBIN/mmls_hold
	out=$(test_out "$1")
}

# gated_start NAME CMD...: start CMD, a workload that prints "ready PID" and
# waits for a line on stdin (mmls_hold -g, mmls_exec), with a fifo on its
# stdin held open here as fd 3; its stdout in $out/NAME.hold, stderr in
# $out/NAME.hold.err. Waits until it is ready; sets GATED_PID. Returns 1
# (the workload reaped) if it was not ready within TOOL_ATTACH_S.
gated_start() {
	local name=$1 fifo
	shift
	GATED_PID=
	fifo=$(mktemp -u /tmp/mmls_go.XXXXXX)	# not on 9p: no fifos there
	mkfifo "$fifo" || return 1
	"$@" <"$fifo" >"$out/$name.hold" 2>"$out/$name.hold.err" &
	GATED_PID=$!
	exec 3>"$fifo"
	rm -f "$fifo"
	wait_for "$out/$name.hold" '^ready' "$TOOL_ATTACH_S" "$GATED_PID" && return 0
	gated_abort
	return 1
}
# gated_go: let the workload gated_start started go.
gated_go() { echo go >&3; exec 3>&-; }
# gated_abort: stop it instead, and reap it.
gated_abort() { exec 3>&-; kill "$GATED_PID" 2>/dev/null; wait "$GATED_PID"; }

# Interrupts, for mmlockstat_check.py --irqs: an ftrace instance of its
# own, raw output (nanosecond timestamps, the mono clock of
# bpf_ktime_get_ns and the module's ktime_get_ns; each line names the
# interrupted task), every irq and irq_vectors entry/exit event, on every
# task: the checks pick the tasks. Nothing may hook the scheduler: event
# tracing records each task's comm at every context switch and wake-up
# (record-cmd, a top-level option the instance inherits: off while it
# runs), and set_event_pid hooks both too; either moved the reader's
# wake-up by 2-3 us (woke - unlock, the W_WOKE check).
IRQ_TI=/sys/kernel/tracing/instances/mmls_irqs IRQ_CMD=/sys/kernel/tracing/options/record-cmd
# irqs_start FILE: "#event GROUP/NAME ID" lines into FILE (the raw output
# names an event by its id only); returns 1 (why in FILE.err) if the
# instance could not be set up. 8 MiB a CPU: a session on Debian's
# kernels recorded 15000 events (idle's included) in about 500 KiB.
irqs_start() {
	local f=$1 e
	: >"$f"
	[ ! -d "$IRQ_TI" ] || rmdir "$IRQ_TI"	# left by an aborted run
	# tracing off until every event is on: an entry traced before its
	# exit was on would never end
	echo 0 >"$IRQ_CMD" 2>"$f.err" && mkdir "$IRQ_TI" 2>>"$f.err" &&
		echo 0 >"$IRQ_TI/tracing_on" && echo mono >"$IRQ_TI/trace_clock" &&
		echo 1 >"$IRQ_TI/options/raw" && echo 8192 >"$IRQ_TI/buffer_size_kb" ||
		return 1
	for e in "$IRQ_TI"/events/irq/*_entry "$IRQ_TI"/events/irq/*_exit \
		 "$IRQ_TI"/events/irq_vectors/*_entry "$IRQ_TI"/events/irq_vectors/*_exit; do
		[ -d "$e" ] || continue
		echo 1 >"$e/enable" 2>>"$f.err" || return 1
		echo "#event ${e#"$IRQ_TI"/events/} $(cat "$e/id")" >>"$f"
	done
	echo 1 >"$IRQ_TI/tracing_on"
}
# irqs_stop FILE: "#lost N" (events the ring buffer overwrote or dropped)
# and the trace, appended to FILE; the instance removed.
irqs_stop() {
	local f=$1
	[ -d "$IRQ_TI" ] || return 0
	echo 0 >"$IRQ_TI/tracing_on"
	echo "#lost $(cat "$IRQ_TI"/per_cpu/cpu*/stats |
		awk '/^(overrun|dropped events):/ { n += $NF } END { print n + 0 }')" >>"$f"
	cat "$IRQ_TI/trace" >>"$f"
	echo 0 >"$IRQ_TI/events/enable"
	rmdir "$IRQ_TI"
	echo 1 >"$IRQ_CMD"
}

# mmls_run NAME "TOOL ARGS" HOLD-ARGS...: mmls_hold waits for go;
# mmlockstat -p its pid (tool_start: until attached); go; once the holds
# are done, SIGINT the tool (tool_stop). Output in $out/NAME.{hold,json,err}
# (with MMLS_TEXT=1: the text output, without -j, in $out/NAME.out; with
# MMLS_IRQS=1 the interrupts during the holds in $out/NAME.irqs).
# Returns 1 (reason in $out/NAME.err) if the holder or the tool did not
# start, or the tool did not exit 0; MMLS_RC is the tool's exit status.
mmls_run() {
	local name=$1 targs=$2 hpid rc=0 t0 t1 t2 j=-j o=json
	shift 2
	[ -z "${MMLS_TEXT:-}" ] || { j='' o=out; }
	MMLS_RC=
	if ! gated_start "$name" "$HOLD" -g "$@"; then
		echo "mmls_run: mmls_hold not ready: $(head -n 2 "$out/$name.hold.err")" >"$out/$name.err"
		return 1
	fi
	hpid=$GATED_PID
	t0=$SECONDS
	# shellcheck disable=SC2086
	tool_start "$name" "$out/$name.$o" "$out/$name.err" "$TOOL" -p "$hpid" $j $targs || rc=1
	t1=$SECONDS
	[ -z "${MMLS_IRQS:-}" ] || irqs_start "$out/$name.irqs" ||
		echo "mmls_run: no irq trace: $(head -n 1 "$out/$name.irqs.err")" >>"$out/$name.err"
	gated_go
	wait "$hpid" || echo "mmls_run: mmls_hold exit $?: $(head -n 2 "$out/$name.hold.err")" >>"$out/$name.err"
	[ -z "${MMLS_IRQS:-}" ] || irqs_stop "$out/$name.irqs"
	t2=$SECONDS
	tool_stop "$name" || rc=1
	echo "mmls_run: attach $((t1 - t0)) s, stop $((SECONDS - t2)) s (guest clock)" >>"$out/$name.err"
	MMLS_RC=$TOOL_RC
	[ "$TOOL_RC" = 0 ] || rc=1
	return $rc
}

# get CASE EXPR: a value of the last object of $out/CASE.json
get() { $CHECK get "$out/$1.json" "$2"; }

# pycheck WHAT CHECK-ARGS...: one check by mmlockstat_check.py
pycheck() {
	local what=$1 msg
	shift
	if msg=$($CHECK "$@" 2>&1); then ok "$what: $msg"; else fail "$what: $msg"; fi
}

# mmls_case CASE N "TOOL ARGS" HOLD-ARGS...: one mmls_run session; if it
# failed, its N checks fail with the reason and the case is skipped
# (returns 1), so the plan holds either way.
mmls_case() {
	local c=$1 n=$2 i
	shift 2
	mmls_run "$c" "$@" && return 0
	for ((i = 0; i < n; i++)); do
		fail "$c: mmlockstat ran (exit ${MMLS_RC:-none}): $(tail -n 2 "$out/$c.err" | tr '\n' ' ')"
	done
	return 1
}
