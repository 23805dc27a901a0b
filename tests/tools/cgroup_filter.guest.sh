#!/usr/bin/env bash
# kernels: debian-6.1 debian-6.12
# --cgroup PATH (mmlockstat and munmapsnoop): a bad path is refused with
# the fix before anything loads; with a cgroup v2 directory both tools
# keep the calls and holds of tasks in it or in a cgroup below it, and
# leave out another process's made in the same session (what `make report
# CMD=` filters by: the command's process tree is the cgroup).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/munmapsnoop_lib.sh"
MMLS=$TOP/bpf/mmlockstat
ERRS=4
plan $((ERRS + 7))
snoop_setup cgroup-filter
[ -x "$MMLS" ] || abort "bpf/mmlockstat is built (make tools)"

# expect_err WHAT PATTERN CMD...: CMD exits 1 and stderr matches PATTERN.
expect_err() {
	local what=$1 pat=$2 rc
	shift 2
	timeout 120 "$@" >"$d/out" 2>"$d/err"
	rc=$?
	if [ "$rc" = 1 ] && grep -qE "$pat" "$d/err"; then
		ok "$what (exit $rc: $(head -n 1 "$d/err"))"
	else
		fail "$what: want exit 1 and /$pat/, got exit $rc, stderr: $(head -n 2 "$d/err" | tr '\n' ' ')"
	fi
}
for t in "$MMLS" "$SNOOP"; do
	n=${t##*/}
	expect_err "$n --cgroup of a missing directory" \
		"^$n: cgroup '/nonexistent/cg': No such file or directory: give a cgroup v2 directory" \
		"$t" --cgroup /nonexistent/cg -d 1
	expect_err "$n --cgroup of a directory outside cgroup2" \
		"^$n: cgroup '/tmp' is not in a cgroup v2 hierarchy" "$t" --cgroup /tmp -d 1
done

# The filtered cgroup, and the wanted workload one level below it.
cg=/sys/fs/cgroup/mmls-cgtest
rmdir "$cg/sub" "$cg" 2>/dev/null
cleanup() { for p in $(cat "$cg/sub/cgroup.procs" 2>/dev/null); do echo "$p" >/sys/fs/cgroup/cgroup.procs; done; rmdir "$cg/sub" "$cg" 2>/dev/null; }
at_exit cleanup
if ! mkdir -p "$cg/sub"; then
	fail_n 7 "cgroup $cg/sub created (cgroup2 mounted on /sys/fs/cgroup)"
	finish
fi
if map_start other -s 16 && opid=$MAP_PID && map_start wanted -s 16 && wpid=$MAP_PID &&
   echo "$wpid" >"$cg/sub/cgroup.procs" &&
   tool_start snoop "$d/snoop.json" "$d/snoop.err" "$SNOOP" -j --cgroup "$cg" &&
   tool_start mmls "$d/mmls.json" "$d/mmls.err" "$MMLS" -j --cgroup "$cg"; then
	ok "both tools attached with --cgroup $cg; the wanted pid $wpid in $cg/sub, the other ($opid) in $(cat "/proc/$opid/cgroup")"
	map_wait other; orc=$MAP_RC
	map_wait wanted; wrc=$MAP_RC
	tool_stop snoop
	tool_stop mmls
	check_eq "both workloads ran (exit status of the other, the wanted)" "$orc $wrc" "0 0"
	pycheck "munmapsnoop: the 16 MiB munmap of the process in the cgroup below is traced" \
		get "$d/snoop.json" munmap $((16 << 20)) --pid "$wpid" pid len
	pycheck "munmapsnoop: the other process's munmap (same session, outside the cgroup) is not" \
		absent "$d/snoop.json" "$opid" "--cgroup $cg"
	# mmlockstat: one JSON object; its longest holds name their holders
	holders=$("$PY" -c 'import json, sys
o = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
print(o["filter"].get("cgroup"), " ".join(sorted({str(h["pid"]) for h in o["top_holds"]})))' "$d/mmls.json" 2>&1)
	check "mmlockstat: JSON filter names the cgroup ($holders)" test "${holders%% *}" = "$cg"
	check "mmlockstat: the wanted process's holds are among the longest ($holders)" \
		grep -qw "$wpid" <<<"${holders#* }"
	check "mmlockstat: no hold of the other process ($opid) is ($holders)" \
		sh -c "! grep -qw '$opid' <<EOF
${holders#* }
EOF"
else
	map_wait other; map_wait wanted
	for n in snoop mmls; do [ -n "${TOOL_PIDS[$n]:-}" ] && tool_stop "$n"; done
	fail_n 7 "workloads and tools started: $(tail -n 2 "$d/snoop.err" "$d/mmls.err" 2>/dev/null | tr '\n' ' ')"
fi
finish
