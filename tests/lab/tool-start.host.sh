#!/usr/bin/env bash
# tool_start and tool_stop (tests/lib.sh), which every tool test starts its
# tool with: a tool that attaches, one that exits before it attaches (a
# BPF load the verifier refused: the reason is named at once, not after
# TOOL_ATTACH_S, and its exit status is not lost), and one that never
# attaches. Made-up tools (sh -c), on the host: nothing is loaded.
. "$(dirname "$0")/../lib.sh"
plan 6
d=$(test_out tool-start)
mkdir -p "$d"

# attaches, then waits for SIGINT (not a shell: a background job starts
# with SIGINT ignored, which a shell cannot trap; a C tool, or python,
# sets its handler anyway)
tool_start up "$d/up.out" "$d/up.err" $PY -c 'import signal, sys, time
signal.signal(signal.SIGINT, lambda *a: sys.exit(0))
print("Tracing... Hit Ctrl-C to end.", file=sys.stderr, flush=True)
time.sleep(60)'
check_eq "a tool that says it is tracing: tool_start returns 0" "$?" 0
tool_stop up
check_eq "... and tool_stop stops it with SIGINT: exit status" "$TOOL_RC" 0

# refused by the verifier: exits 1 at once
TOOL_ATTACH_S=60
t0=$SECONDS
tool_start bad "$d/bad.out" "$d/bad.err" sh -c 'echo "libbpf: prog '"'"'x'"'"': BPF program load failed: Argument list too long" >&2; echo "mmlockstat: cannot load BPF programs: Argument list too long" >&2; exit 1'
rc=$?
took=$((SECONDS - t0))
check "a tool that exits before it attaches: tool_start returns 1 within 10 s, not TOOL_ATTACH_S (rc $rc, $took s)" \
	test "$rc" = 1 -a "$took" -le 10
check_eq "... and says it exited, with the tool's own last line (not libbpf's)" \
	"$(tail -n 1 "$d/bad.err" | sed 's/(pid [0-9]*)/(pid N)/')" \
	"tool_start: bad exited before it attached (pid N): mmlockstat: cannot load BPF programs: Argument list too long"
tool_stop bad
check_eq "... and tool_stop still gives its exit status" "$TOOL_RC" 1

# never attaches
TOOL_ATTACH_S=1
tool_start mute "$d/mute.out" "$d/mute.err" sleep 30
tool_stop mute KILL
check_eq "a tool that never attaches: tool_start says so, with the bound" \
	"$(tail -n 1 "$d/mute.err" | sed 's/(pid [0-9]*)/(pid N)/')" "tool_start: mute did not attach within 1 s (pid N)"
finish
