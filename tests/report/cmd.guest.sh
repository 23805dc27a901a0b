#!/usr/bin/env bash
# make report CMD= (scripts/experiment --cmd), in the guest: the user's
# command runs in a cgroup of its own and the tools see only it. A command
# that frees a large buffer is traced alone; one that fails, one that
# hangs past TIMEOUT, one that leaves a process behind and one that makes
# no munmap/brk/mremap call each fail their run with a message that says
# so (status.json), and nothing of theirs is left running. A child that
# ends on its own a little after the command (stress-ng's stressors were
# still exiting) is not "left behind". The reports are
# rendered and checked on the host (cmd.post.sh): matplotlib under TCG
# took a minute a report.
. "$(dirname "$0")/../lib.sh"
CG=/sys/fs/cgroup/mmlockscope-cmd
N_OK=5 N_BAD=4 BAD=3
plan $((N_OK + BAD * N_BAD))
od=$(test_out report-cmd)
mode=downgrade	# Debian's kernels: their native behaviour, also "downgrade"

# run NAME TIMEOUT TOOLS CMD: one experiment of one rep in mode $mode;
# sets RC (its exit status).
run() {
	local name=$1 to=$2 tools=$3 cmd=$4
	rm -rf "${od:?}/$name"
	mkdir -p "$od/$name"
	REPS=1 MODES=$mode TOOLS=$tools "$TOP/scripts/experiment" --cmd "$cmd" \
		--timeout "$to" "$od/$name/raw" >"$od/$name/experiment.log" 2>&1
	RC=$?
}
# status NAME: the mode's errors from status.json, one per line
status() { "$PY" -c 'import json, sys; print("\n".join(json.load(open(sys.argv[1]))["errors"]))' "$od/$1/raw/$mode/status.json" 2>&1; }
# gone: the command's cgroup and every process of the cases are gone
# ('sleep 777[7]': not this sh -c's own command line)
gone() { sh -c "[ ! -e '$CG' ] && ! pgrep -f 'sleep 777[7]' >/dev/null"; }

# 1. A Python program that frees a 64 MiB buffer it touched.
py='python3 -c "b = bytearray(64 << 20); b[::4096] = b\"x\" * (len(b) // 4096); del b"'
run python 600 "mmlockstat munmapsnoop" "$py"
check_eq "python: experiment exits 0 ($(status python | head -n 1))" "$RC" 0
got=$("$PY" -c 'import json, sys
cs = [json.loads(l) for l in open(sys.argv[1])]
big = [c for c in cs if c["op"] == "munmap" and c["len"] >= 64 << 20]
print(len(cs), sorted({c["comm"] for c in cs}), len(big))' "$od/python/raw/$mode/munmapsnoop.jsonl" 2>&1)
check "python: munmapsnoop saw the 64 MiB munmap, and only python3's calls, not the shell's start-up (calls, comms, big: $got)" \
	grep -qE "^[0-9]+ \['python3'\] 1$" <<<"$got"
check "python: the cgroup is gone afterwards" gone

# A child that outlives the command by 2 s, then ends by itself.
run late 600 munmapsnoop "(sleep 2; python3 -c 'import sys') & exit 0"
check_eq "late: experiment exits 0 ($(status late | head -n 1))" "$RC" 0
check "late: nothing reported left running ($(cat "$od/late/raw/$mode/runs.jsonl" 2>&1 | head -c 300))" \
	grep -q '"left_running": \[\]' "$od/late/raw/$mode/runs.jsonl"

# 2.-5. Runs that fail, each with its message (munmapsnoop alone: it is
# what sees "no call").
# case_bad NAME TIMEOUT CMD STATUS-REGEX: BAD checks
case_bad() {
	local name=$1 to=$2 cmd=$3 st=$4
	run "$name" "$to" munmapsnoop "$cmd"
	check_eq "$name: experiment exits 1 (it ran: $(grep -c 'rep 1/1' "$od/$name/experiment.log") rep lines)" "$RC" 1
	check "$name: status.json says /$st/ (got: $(status "$name" | tr '\n' ';' | cut -c1-300))" \
		grep -qE "$st" <<<"$(status "$name")"
	check "$name: nothing left running (cgroup gone, no 'sleep 7777')" gone
}
case_bad fails 600 "sh -c 'echo oops >&2; exit 3'" \
	'^rep 0: the command exited with status 3: oops$'
case_bad hangs 5 "sleep 7777 & sleep 7777" \
	'^rep 0: the command ran past TIMEOUT=5 s: killed with its cgroup \([0-9]+ [a-z]+(, [0-9]+ [a-z]+)*\)$'
case_bad leaves 600 "sleep 7777 & exec python3 -c 'import sys'" \
	'^rep 0: the command left 1 process\(es\) running: [0-9]+ sleep \(killed\)$'
case_bad nomunmap 600 ":" \
	'^the command made no munmap/brk/mremap call that shrank a mapping'
finish
