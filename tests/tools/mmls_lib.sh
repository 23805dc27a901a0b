# tests/tools/mmls_lib.sh: shared by the mmlockstat tests (sourced after
# lib.sh; needs TOOL, HOLD and out set).
CHECK="$PY $TOP/tests/tools/mmlockstat_check.py"

# mmls_run NAME "TOOL ARGS" HOLD-ARGS...: mmls_hold waits for go;
# mmlockstat -p its pid (tool_start: until attached); go; once the holds
# are done, SIGINT the tool (tool_stop). Output in $out/NAME.{hold,json,err}.
# Returns 1 (reason in $out/NAME.err) if the holder or the tool did not
# start, or the tool did not exit 0; MMLS_RC is the tool's exit status.
mmls_run() {
	local name=$1 targs=$2 fifo hpid rc=0 t0 t1 t2
	shift 2
	MMLS_RC=
	fifo=$(mktemp -u /tmp/mmls_go.XXXXXX)	# not on 9p: no fifos there
	mkfifo "$fifo" || return 1
	"$HOLD" -g "$@" <"$fifo" >"$out/$name.hold" 2>"$out/$name.hold.err" &
	hpid=$!
	exec 3>"$fifo"
	rm -f "$fifo"
	if ! wait_for "$out/$name.hold" '^ready' "$TOOL_ATTACH_S" "$hpid"; then
		echo "mmls_run: mmls_hold not ready: $(head -n 2 "$out/$name.hold.err")" >"$out/$name.err"
		exec 3>&-
		wait "$hpid"
		return 1
	fi
	t0=$SECONDS
	# shellcheck disable=SC2086
	tool_start "$name" "$out/$name.json" "$out/$name.err" "$TOOL" -p "$hpid" -j $targs || rc=1
	t1=$SECONDS
	echo go >&3
	exec 3>&-
	wait "$hpid" || echo "mmls_run: mmls_hold exit $?: $(head -n 2 "$out/$name.hold.err")" >>"$out/$name.err"
	t2=$SECONDS
	tool_stop "$name" || rc=1
	echo "mmls_run: attach $((t1 - t0)) s, stop $((SECONDS - t2)) s (guest clock)" >>"$out/$name.err"
	MMLS_RC=$TOOL_RC
	[ "$TOOL_RC" = 0 ] || rc=1
	return $rc
}
