#!/usr/bin/env bash
# kernels: debian-6.1 debian-6.12
# munmapsnoop: bad input and environment give one clear message and a
# non-zero exit (a failed load: libbpf's reason, without -v); -h shows
# examples; the filters -p and -c keep the wanted process's calls and leave
# out another's made while the tool ran; -p exits
# with its process, -d by itself, Ctrl-C with the summary (histograms and
# the lost-event counts). --min-us is timed, so it is checked under icount
# (munmapsnoop_minus.icount.sh).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/munmapsnoop_lib.sh"

# expect_err WHAT PATTERN CMD...: CMD exits non-zero and stderr matches PATTERN.
expect_err() {
	local what=$1 pat=$2 rc
	shift 2
	timeout 120 "$@" >"$d/out" 2>"$d/err"
	rc=$?
	if [ "$rc" != 0 ] && grep -qiE "$pat" "$d/err"; then
		ok "$what (exit $rc: $(head -n 1 "$d/err"))"
	else
		fail "$what: want a non-zero exit and /$pat/, got exit $rc, stderr: $(head -n 2 "$d/err" | tr '\n' ' ')"
	fi
}
ERRS=10	# expect_err checks below
N_P=4 N_C=6
plan $((2 + ERRS + 1 + N_P + N_C + 2 + 1))
snoop_setup munmapsnoop-cli

"$SNOOP" -h >"$d/help" 2>&1
rc=$?
check_eq "-h exits 0" "$rc" 0
check "-h text has an EXAMPLES block" grep -q '^EXAMPLES:' "$d/help"

expect_err "malformed -p" "invalid PID" "$SNOOP" -p abc
expect_err "malformed --min-us" "invalid --min-us" "$SNOOP" --min-us -5
expect_err "malformed -d" "invalid duration" "$SNOOP" -d 0
expect_err "too long -c" "invalid COMM" "$SNOOP" -c this-name-is-far-too-long
expect_err "unknown option" "unrecognized|invalid option" "$SNOOP" --bogus
expect_err "stray argument" "unexpected argument" "$SNOOP" stray
pid=4000000
while kill -0 "$pid" 2>/dev/null; do pid=$((pid + 1)); done
expect_err "-p of a process that does not exist" "no process with PID $pid" "$SNOOP" -p "$pid"
# util-linux (setpriv, unshare) is in the guest image: these always run
expect_err "not root" "must run as root" setpriv --reuid=65534 --regid=65534 --clear-groups "$SNOOP" -d 1
expect_err "no kernel BTF" "no BTF.*CONFIG_DEBUG_INFO_BTF" \
	unshare -m sh -c 'mount -t tmpfs none /sys/kernel/btf && exec "$0" -d 1' "$SNOOP"
# A load that fails says why in libbpf's words, without -v, and the fix:
# tests/bin/bpf_enomem makes every map creation fail with ENOMEM, as a too
# small memory.max of the cgroup does.
expect_err "maps refused (ENOMEM)" "cannot load BPF programs: Cannot allocate memory; libbpf said:" \
	env LD_PRELOAD="$TESTBIN/bpf_enomem" "$SNOOP" -d 1
check "maps refused: libbpf's reason follows ('$(grep -m1 "failed to create" "$d/err")') and the fix: '$(grep -m1 memory.max "$d/err")'" \
	sh -c "grep -q \"^  libbpf: map '[a-z_.]*': failed to create: Cannot allocate memory\" '$d/err' &&
	grep -q '^munmapsnoop: BPF maps are charged to the memory cgroup: raise its memory.max' '$d/err'"

# -p PID: the wanted process's munmap is traced, another process's munmap
# made while the tool ran is not, and the tool exits by itself once its
# process is gone. The other process goes first, so that the tool was
# attached for its whole call.
if map_start pother -s 16 && opid=$MAP_PID && map_start pwanted -s 16 &&
   wpid=$MAP_PID &&
   tool_start bypid "$d/bypid.json" "$d/bypid.err" "$SNOOP" -j -p "$wpid"; then
	map_wait pother; orc=$MAP_RC
	map_wait pwanted; wrc=$MAP_RC
	tool_stop bypid none
	check_eq "-p PID: both workloads ran (exit status of the other, the wanted)" "$orc $wrc" "0 0"
	pycheck "-p PID: the wanted process's 16 MiB munmap is traced" \
		get "$d/bypid.json" munmap $((16 << 20)) --pid "$wpid" pid len
	pycheck "-p PID: the other process's munmap (in the same session) is not" \
		absent "$d/bypid.json" "$opid" "-p $wpid"
	check_eq "-p PID: exits 0 by itself when the process exits" "$TOOL_RC" 0
else
	map_wait pother; map_wait pwanted
	fail_n $N_P "-p PID: the workloads and the tool started: $(tail -n 2 "$d/bypid.err" 2>/dev/null | tr '\n' ' ')"
fi

# -c COMM: the same with a name filter; the other process runs the same
# binary under another name. Stopped with SIGINT: exit 0 and the summary.
if map_start cother -s 16 -n other-name && opid=$MAP_PID &&
   map_start cwanted -s 16 && wpid=$MAP_PID &&
   tool_start byname "$d/byname.json" "$d/byname.err" "$SNOOP" -j -c munmapsnoop_map; then
	map_wait cother; orc=$MAP_RC
	map_wait cwanted; wrc=$MAP_RC
	tool_stop byname
	pycheck "-c COMM: this command's 16 MiB munmap is traced (other's exit $orc, wanted's $wrc)" \
		get "$d/byname.json" munmap $((16 << 20)) --pid "$wpid" pid comm
	pycheck "-c COMM: another command's munmap (in the same session) is not" \
		absent "$d/byname.json" "$opid" "-c munmapsnoop_map"
	check_eq "Ctrl-C: exit status" "$TOOL_RC" 0
	# exactly one call: the wanted munmap (the workload makes no other
	# after its gate, and the other has another name)
	check "summary: one call, a munmap: $(grep -m1 '^munmapsnoop: [0-9]* calls' "$d/byname.err")" \
		grep -q '^munmapsnoop: 1 calls (munmap 1, brk 0, mremap 0)' "$d/byname.err"
	check "summary: the lost-event counts, all 0" \
		grep -q '^lost: 0 events (ring buffer full), 0 calls untraced (map full), 0 waiters uncounted' "$d/byname.err"
	check "summary: a log2 histogram in usecs" grep -q 'usecs.*distribution' "$d/byname.err"
else
	map_wait cother; map_wait cwanted
	fail_n $N_C "-c COMM: the workloads and the tool started: $(tail -n 2 "$d/byname.err" 2>/dev/null | tr '\n' ' ')"
fi

# -d: stops by itself, not before its time (counted from before "Tracing")
if tool_start dur "$d/dur.out" "$d/dur.err" "$SNOOP" -d 2; then
	t0=$(date +%s%N)
	tool_stop dur none
	t=$((($(date +%s%N) - t0) / 1000000))
	check_eq "-d 2: exits 0 by itself" "$TOOL_RC" 0
	check_range "-d 2: ran on after attaching, ms (>= 2000 - 100 for the attach poll)" "$t" 1900 1000000
else
	fail_n 2 "-d 2: started: $(tail -n 2 "$d/dur.err" | tr '\n' ' ')"
fi

pycheck "every JSON line parses and has the schema-1 keys and types" schema "$d/bypid.json" "$d/byname.json"
finish
