#!/usr/bin/env bash
# calib.guest.sh: the test_mmap_lock calibration module (kernel patch 0003),
# the checks that need no clock: it loads, its files have the right modes
# and format, bad requests fail with EINVAL and hold nothing, good ones
# return the byte count, and it unloads. The timing checks (hold lengths,
# who waits for how long, SIGKILL ending a hold) compare the guest's own
# clocks: they are in calib.icount.sh.
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"

CW=$TESTBIN/calib_wait
HOLD=/sys/kernel/debug/test_mmap_lock/hold
LAST=/sys/kernel/debug/test_mmap_lock/last
out=$(test_out calib)
long=$(printf 'write %080d' 1)
BAD=("write 0" "write 99999999" "write 10000001" "bogus 5" "write"
	"write 5 junk" "write 5junk" "read -5" "read 0x10" "downgrade 5"
	"downgrade 5 0" "downgrade 5 6 7" "read 5 6" "   " "$long")
GOOD=("write 1000" $'read 2000\n' "downgrade 1000 1000")
# modprobe, 3 file checks, the good and the bad requests, rmmod during a
# hold (3), rmmod
plan $((1 + 3 + ${#BAD[@]} + ${#GOOD[@]} + 3 + 1))

[ -x "$CW" ] || abort "calib_wait is built: $CW missing (make -C tests/kernel)"
modprobe test_mmap_lock 2>"$out/modprobe.err" ||
	abort "modprobe test_mmap_lock: $(head -n1 "$out/modprobe.err") (CONFIG_TEST_MMAP_LOCK=m and patch 0003 in the series?)"
ok "modprobe test_mmap_lock"

check_eq "hold is write-only" "$(stat -c %a "$HOLD")" 200
check_eq "last is read-only" "$(stat -c %a "$LAST")" 444
check "last has the write_ns=N read_ns=N locked_at_ns=N downgraded_at_ns=N unlocked_at_ns=N format" \
	grep -qE '^write_ns=[0-9]+ read_ns=[0-9]+ locked_at_ns=[0-9]+ downgraded_at_ns=[0-9]+ unlocked_at_ns=[0-9]+$' "$LAST"

# result REQUEST: "rc/errno" of calib_wait -x REQUEST
result() {
	"$CW" -x "$1" >"$out/x.txt" 2>"$out/x.err"
	echo "$(sed -n 's/^rc=//p' "$out/x.txt")/$(sed -n 's/^errno=//p' "$out/x.txt")"
}
# Good requests are taken and held: each leaves a new hold in "last". They
# are the positive control of the bad ones below, which must not take the
# lock either: "last" keeps the instants of the hold before them.
last0=$(cat "$LAST")
for req in "${GOOD[@]}"; do
	r=$(result "$req")
	if [ "$r" = 0/0 ] && [ "$(cat "$LAST")" != "$last0" ]; then
		ok "request ${req@Q} accepted (byte count returned), a new hold in last"
	else
		fail "request ${req@Q} accepted: rc/errno $r, last '$(cat "$LAST")' (was '$last0')"
	fi
	last0=$(cat "$LAST")
done
for req in "${BAD[@]}"; do
	r=$(result "$req")
	if [ "$r" = -1/22 ] && [ "$(cat "$LAST")" = "$last0" ]; then
		ok "request '${req:0:24}' rejected with EINVAL, nothing held"
	else
		fail "request '${req:0:24}' rejected with EINVAL, nothing held: rc/errno $r, last '$(cat "$LAST")' (was '$last0')"
	fi
done

# rmmod while a hold is in progress: the open hold file pins the module
# (its fops' .owner), so rmmod is refused and the hold runs to its end.
# The module's refcount shows the file open before the request is taken;
# the holder still running after rmmod returned shows rmmod ran during
# the hold (10 s, the longest: the debug kernel under TCG takes seconds
# to start rmmod).
REF=/sys/module/test_mmap_lock/refcnt
"$CW" -x "write 10000000" >"$out/rmmod-hold.txt" 2>&1 &
hp=$!
pinned=0
for ((i = 0; i < 300; i++)); do
	[ "$(cat "$REF" 2>/dev/null)" = 1 ] && { pinned=1; break; }
	kill -0 "$hp" 2>/dev/null || break
	sleep 0.1
done
if [ "$pinned" = 1 ]; then
	rmmod test_mmap_lock 2>"$out/rmmod-busy.err"
	rc=$?
	during=no
	kill -0 "$hp" 2>/dev/null && during=yes
	# shellcheck disable=SC2016 # $1 is the inner shell's
	check "rmmod during a hold is refused, the module stays (exit $rc: $(head -c 80 "$out/rmmod-busy.err"); holder still holding: $during)" \
		sh -c '[ "$1" != 0 ] && [ "$2" = yes ] && [ -d /sys/module/test_mmap_lock ]' _ "$rc" "$during"
else
	fail "rmmod during a hold: the hold file never showed open (refcnt '$(cat "$REF" 2>/dev/null)')"
fi
wait "$hp"
check_eq "the hold rmmod was refused during ran to its end (rc/errno of the 10 s write)" \
	"$(sed -n 's/^rc=//p' "$out/rmmod-hold.txt")/$(sed -n 's/^errno=//p' "$out/rmmod-hold.txt")" 0/0
check_eq "the module's refcount is back to 0" "$(cat "$REF" 2>/dev/null)" 0

check "rmmod test_mmap_lock" rmmod test_mmap_lock
finish
