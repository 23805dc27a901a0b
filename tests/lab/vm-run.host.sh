#!/usr/bin/env bash
# vm-run behaviour seen from the host: exit status, output streams, the
# output share, the timeout, and bad input. Each check boots a guest.
. "$(dirname "$0")/../lib.sh"
plan 25
vm=$TOP/scripts/vm-run
d=$(test_out lab-vm-run)

"$vm" --out "$d/o1" -- false
check "vm-run -- false exits 1" [ $? = 1 ]

"$vm" --out "$d/o2" -- sh -c 'exit 7'
check "exit status 7 propagates" [ $? = 7 ]

"$vm" --out "$d/o3" -- sh -c 'echo to-stdout; echo to-stderr >&2' >"$d/stdout" 2>"$d/stderr"
check "stdout carries the command's stdout only" [ "$(cat "$d/stdout")" = to-stdout ]
check "stderr carries the command's stderr" grep -qx to-stderr "$d/stderr"
check "kernel console went to console.log" grep -q 'Linux version' "$d/o3/console.log"
"$vm" --out "$d/o3c" --console "$d/o3c/kernel.log" -- true
check "--console FILE: the console log goes there" grep -q 'Linux version' "$d/o3c/kernel.log"

tok=$RANDOM$RANDOM
echo "$tok" >"$d/o4-in"
mkdir -p "$d/o4" && mv "$d/o4-in" "$d/o4/in"
kdir=$("$TOP/scripts/build-kernel" --print-dir)
MMLOCK_TEST_KNOB=knob$tok "$vm" --out "$d/o4" -- sh -c "cat $d/o4/in > $d/o4/back
	uname -r > $d/o4/release; cat $kdir/kernel.release > $d/o4/cache-release
	echo \$MMLOCK_TEST_KNOB > $d/o4/knob"
check "output share round-trips a file" [ "$(cat "$d/o4/back" 2>/dev/null)" = "$tok" ]
want=$(cat "$kdir/kernel.release")
check_eq "guest runs the built kernel" "$(cat "$d/o4/release" 2>/dev/null)" "$want"
check_eq "MMLOCK_* variables reach the guest" "$(cat "$d/o4/knob" 2>/dev/null)" "knob$tok"
check_eq "the kernel cache is visible in the guest ($kdir)" "$(cat "$d/o4/cache-release" 2>/dev/null)" "$want"

t0=$(date +%s)
MMLOCK_VM_NOTES=$d/o5.notes "$vm" --out "$d/o5" --timeout 25 -- sleep 600 2>"$d/timeout.err"
rc=$?
el=$(($(date +%s) - t0))
check "a command past --timeout is killed with exit 124" [ $rc = 124 ]
check "the timeout is reported" grep -q 'timeout' "$d/timeout.err"
# Before the kill, where the vCPUs were, from QEMU's monitor: 8 samples
# of 2 vCPUs, each RIP named from the kernel's System.map (an idle guest:
# its idle loop).
where=$(grep -m1 '^vm-run: where the vCPUs were (8 samples): ' "$d/timeout.err")
nsym=$(grep -oE '[A-Za-z_][A-Za-z0-9_.]*\+0x[0-9a-f]+' <<<"$where" | wc -l)
check_eq "the timeout names where the vCPUs were: 16 RIPs named from System.map (${where:0:120})" "$nsym" 16
check "MMLOCK_VM_NOTES=FILE: the verdict and the vCPUs' places are written there" \
	[ "$(grep -c -e '^vm-run: timeout: killed the guest after 25s' -e '^vm-run: where the vCPUs were' "$d/o5.notes" 2>/dev/null)" = 2 ]
check_range "the timeout took about 25 s, plus ~10 s for the state dump (registers, SysRq 7, w, l)" "$el" 25 60
left=$(pgrep -f "qemu-system.*$d/o5/console.log")
check "no QEMU left behind${left:+ (pid $left)}" [ -z "$left" ]

"$vm" --out "$d/o6" -- /no/such/command 2>"$d/nocmd.err"
check "a missing command exits 127" [ $? = 127 ]
check "a missing command is named" grep -q '/no/such/command' "$d/nocmd.err"

# expect_err WHAT RC TEXT COMMAND...: COMMAND exits RC and says TEXT.
expect_err() {
	local what=$1 want=$2 text=$3 err rc
	shift 3
	err=$("$@" 2>&1)
	rc=$?
	if [ "$rc" = "$want" ] && [[ $err == *"$text"* ]]; then
		ok "$what"
	else
		fail "$what: exit $rc (want $want), said: ${err:0:200}"
	fi
}
expect_err "--mem too large: clear message, exit 125" 125 "more than this machine has" \
	"$vm" --mem 100000G -- true
expect_err "--cpus malformed: clear message, exit 125" 125 "not a positive number" \
	"$vm" --cpus zero -- true
expect_err "missing kernel build says to run make kernel" 125 "make kernel" \
	env MMLOCK_CACHE="$d/empty-cache" "$vm" -- true
expect_err "no command: usage message" 125 "no command given" "$vm"
expect_err "--progress-timeout without --progress FILE is refused" 125 "needs --progress FILE" \
	"$vm" --progress-timeout 60 -- true
expect_err "unknown option is named" 125 "unknown option '--bogus'" "$vm" --bogus -- true
expect_err "a bad MMLOCK_TCG_THREAD is named, with the choices" 125 "use single (default) or multi" \
	env MMLOCK_TCG_THREAD=bogus "$vm" -- true
finish
