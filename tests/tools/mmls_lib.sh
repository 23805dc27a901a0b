# tests/tools/mmls_lib.sh: shared by the mmlockstat tests (sourced after
# lib.sh; needs TOOL, HOLD and out set).

# mmls_run NAME "TOOL ARGS" HOLD-ARGS...: mmls_hold waits for go; mmlockstat
# -p its pid; go; SIGINT the tool once the holds are done. Output in
# $out/NAME.{hold,json,err}.
mmls_run() {
	local name=$1 targs=$2 fifo hpid tpid
	shift 2
	fifo=$(mktemp -u /tmp/mmls_go.XXXXXX)	# not on 9p: no fifos there
	mkfifo "$fifo"
	"$HOLD" -g "$@" <"$fifo" >"$out/$name.hold" 2>"$out/$name.hold.err" &
	hpid=$!
	exec 3>"$fifo"
	wait_for "$out/$name.hold" '^ready' 30 "$hpid"
	# shellcheck disable=SC2086
	"$TOOL" -p "$hpid" -j $targs >"$out/$name.json" 2>"$out/$name.err" &
	tpid=$!
	wait_for "$out/$name.err" '^Tracing' 240 "$tpid" ||
		echo "mmls_run: no 'Tracing' line from $TOOL within 240 s" >>"$out/$name.err"
	echo go >&3
	exec 3>&-
	rm -f "$fifo"
	wait "$hpid"
	kill -INT "$tpid" 2>/dev/null
	exit_within "$tpid" 120 "$out/$name.err" "mmls_run: $TOOL (SIGINT sent)"
	wait "$tpid"
}
