#!/usr/bin/env bash
# munmapsnoop: bad input and environment give one clear message and a
# non-zero exit; -h shows examples; filters (-p, -c, --min-us), -d and
# Ctrl-C (summary with histograms and the lost-event counts) work.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/munmapsnoop_lib.sh"
snoop_setup munmapsnoop-cli

# expect_err WHAT PATTERN CMD...: CMD exits non-zero and stderr matches PATTERN.
expect_err() {
	local what=$1 pat=$2 rc
	shift 2
	timeout 120 "$@" >"$d/out" 2>"$d/err"
	rc=$?
	if [ "$rc" != 0 ] && grep -qiE "$pat" "$d/err"; then
		ok "$what (exit $rc: $(head -n 1 "$d/err"))"
	else
		fail "$what: exit $rc, stderr: $(head -n 2 "$d/err" | tr '\n' ' ')"
	fi
}

"$SNOOP" -h >"$d/help" 2>&1
rc=$?
check "-h exits 0 and shows EXAMPLES (exit $rc)" [ "$rc" = 0 ]
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
if command -v setpriv >/dev/null; then
	expect_err "not root" "must run as root" setpriv --reuid=65534 --regid=65534 --clear-groups "$SNOOP" -d 1
else
	skip "not root" "no setpriv"
fi
expect_err "no kernel BTF" "no BTF.*CONFIG_DEBUG_INFO_BTF" \
	unshare -m sh -c 'mount -t tmpfs none /sys/kernel/btf && exec "$0" -d 1' "$SNOOP"

# -p follows the process and exits with it; -c selects by name; --min-us.
traced_call byname -c munmapsnoop_map -- -s 16
n=$(jfield "$d/byname.json" munmap "$MAP_LEN" len)
check "-p PID: exits by itself when the process exits (exit $SNOOP_RC) and traced its munmap" \
	[ "$SNOOP_RC" = 0 -a -n "$n" ]
SNOOP_NOPID=1 traced_call othername -c not-this-one -- -s 16
check "-c COMM: another command's munmap is not traced" [ ! -s "$d/othername.json" ]
check "Ctrl-C: exit 0 (got $SNOOP_RC) and the summary with lost-event counts" \
	[ "$SNOOP_RC" = 0 ] && grep -q '^lost: 0 events' "$d/othername.err"
SNOOP_NOPID=1 traced_call name -c munmapsnoop_map -- -s 16
n=$(jfield "$d/name.json" munmap "$MAP_LEN" len)
check "-c COMM: this command's munmap is traced" [ -n "$n" ]
check "summary: call count and a total histogram on stderr" \
	grep -q '^munmapsnoop: [1-9][0-9]* calls' "$d/name.err"
check "summary: a log2 histogram in usecs" grep -q 'usecs.*distribution' "$d/name.err"
traced_call minus --min-us 100000000 -- -s 16
check "--min-us 100 s: the 16 MiB munmap is filtered out (lines: $(wc -l <"$d/minus.json"))" \
	[ ! -s "$d/minus.json" ]
traced_call minus0 --min-us 1 -- -s 16
n=$(jfield "$d/minus0.json" munmap "$MAP_LEN" total_ns)
check "--min-us 1: the 16 MiB munmap (${n:-none} ns) is kept" [ -n "$n" ]

# -d: stops by itself.
t0=$(date +%s)
timeout 120 "$SNOOP" -d 2 >"$d/dur.out" 2>"$d/dur.err"
rc=$? t=$(($(date +%s) - t0))
check "-d 2: exits 0 by itself (exit $rc after ${t}s, including attach)" [ "$rc" = 0 ]
finish
