#!/usr/bin/env bash
# tracepoint.guest.sh: the cheap mmap_lock tracepoints (kernel patch 0002).
#
# - The events carry "u64 memcg_id" and no "memcg_path" string; mm and
#   write (and success) are still there.
# - Enabled through tracefs, they report a program's lock operations with
#   one mm, and memcg_id is the id of the program's memory cgroup, which on
#   cgroup2 is the inode number of the cgroup's directory.
# - With test_mmap_lock (patch 0003), a "downgrade" request shows the
#   sequence the tools rely on: acquire_returned(write=true), then
#   acquire_returned(write=false) from mmap_write_downgrade(), then
#   released(write=false), and no released(write=true) in between.
# - memcg_id is usable in an event filter: the unfiltered trace of the
#   same program has events of other memcgs (its shell starts in the root
#   cgroup), the filtered one none.
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"

T=/sys/kernel/tracing
EV=$T/events/mmap_lock
CG=/sys/fs/cgroup
CW=$TESTBIN/calib_wait
out=$(test_out tracepoint)
EVENTS=(mmap_lock_start_locking mmap_lock_acquire_returned mmap_lock_released)
# 4 format checks per event + success; modprobe; the events of the
# program (count, 3 kinds, memcg_id); the downgrade (rc, sequence); the
# filter (other memcgs unfiltered, accepted, events, only its memcg).
plan $((4 * ${#EVENTS[@]} + 1 + 1 + 5 + 2 + 4))

[ -d "$EV" ] || abort "mmap_lock events in tracefs: $EV missing (tracefs mounted? CONFIG_TRACING?)"

# --- format ------------------------------------------------------------------
for e in "${EVENTS[@]}"; do
	f=$EV/$e/format
	check "$e has field u64 memcg_id" grep -qE 'field:u64 memcg_id;' "$f"
	check "$e has no memcg_path" bash -c "! grep -q memcg_path '$f'"
	check "$e keeps field mm" grep -q 'field:struct mm_struct \* mm;' "$f"
	check "$e keeps field write" grep -q 'field:bool write;' "$f"
done
check "mmap_lock_acquire_returned keeps success" grep -q 'field:bool success;' "$EV/mmap_lock_acquire_returned/format"

# --- events in a memory cgroup ---------------------------------------------------
# The calibration module is part of the lab kernel: its absence fails.
modprobe test_mmap_lock 2>"$out/modprobe.err" ||
	abort "modprobe test_mmap_lock: $(head -n 1 "$out/modprobe.err")"
ok "modprobe test_mmap_lock"
grep -qw memory "$CG/cgroup.controllers" 2>/dev/null ||
	abort "memory controller on cgroup2 at $CG: $(cat "$CG/cgroup.controllers" 2>&1)"
echo +memory >"$CG/cgroup.subtree_control"
cg=$CG/mmlock-tp.$$
mkdir "$cg"
cgid=$(stat -c %i "$cg")

cleanup() {
	echo 0 >"$EV/enable"
	echo 0 >"$EV/filter" 2>/dev/null
	echo >"$T/trace"
	rmdir "$cg" 2>/dev/null
}
at_exit cleanup

# trace_run FILE: trace a calibration downgrade started inside $cg (its
# shell starts in the root cgroup and moves itself); FILE gets its events.
trace_run() {
	echo >"$T/trace"
	echo 1 >"$EV/enable"
	bash -c 'echo $$ >"$1/cgroup.procs"; echo $$ >"$2.pid"; exec "$3" -x "downgrade 2000 2000"' \
		_ "$cg" "$1" "$CW" >"$1.out"
	echo 0 >"$EV/enable"
	pid=$(cat "$1.pid")
	# "comm-PID [cpu] flags ts: event: mm=... memcg_id=N write=... [success=...]"
	grep -E -- "-$pid +\[[0-9]+\].*mmap_lock_" "$T/trace" >"$1"
	cp "$T/trace" "$1.all"
}

trace_run "$out/events"
# The program's own mm is the one its last events name, and its events are
# the last run of lines naming it (exec alternates the old and the new mm,
# so earlier runs exist). Not every line naming it: the pid's first mm, the
# fork's copy, in the root cgroup, is freed at the first exec, and its
# address can come back for the program's mm at the second: in a probe
# loop of 60 runs, 16 named the program's mm first with the root's id;
# the last run of lines had the cgroup's id (then the root's) in all 60.
mm=$(tail -n 1 "$out/events" | grep -oE 'mm=[0-9a-fx]+')
awk -v m="$mm " 'index($0, m) { if (!in_run) run = ""; in_run = 1; run = run $0 "\n"; next }
	{ in_run = 0 } END { printf "%s", run }' "$out/events" >"$out/events.mm"
n=$(wc -l <"$out/events.mm")
check_range "events with the program's $mm" "$n" 3 100000000
for e in start_locking acquire_returned released; do
	check "it produced mmap_lock_$e" grep -q "mmap_lock_$e:" "$out/events.mm"
done
# At exit, exit_mm() clears mm->owner before exit_mmap() takes the lock,
# and an owner-less mm is reported with the root memcg's id (upstream does
# the same): expect the cgroup's id, then possibly the root's.
rootcg=$(stat -c %i "$CG")
ids=$(grep -oE 'memcg_id=[0-9]+' "$out/events.mm" | uniq | tr '\n' ' ')
case $ids in
"memcg_id=$cgid " | "memcg_id=$cgid memcg_id=$rootcg ")
	ok "memcg_id of its events is its cgroup's id $cgid (root's $rootcg after exit_mm)" ;;
*) fail "memcg_id of its events is its cgroup's id $cgid (root's $rootcg after exit_mm): got $ids" ;;
esac
others=$(grep -E 'mmap_lock_' "$out/events.all" | grep -vE -- "-$pid +\[" |
	grep -oE 'memcg_id=[0-9]+' | sort | uniq -c | tr -s ' \n' ' ')
echo "# memcg ids of other tasks' events (count id): $others" >&2

check "the downgrade request succeeded" grep -qx 'rc=0' "$out/events.out"
# From the hold's write acquisition on: write acquired, downgraded
# (acquire_returned write=false), released as a read.
# A write acquisition followed by a read acquisition of the same
# task without a write release in between is a downgrade.
nseq=$(awk '
	/mmap_lock_acquire_returned:.*write=true success=true/ { s = "W"; next }
	/mmap_lock_released:.*write=true/ { s = ""; next }
	s == "W" && /mmap_lock_acquire_returned:.*write=false success=true/ { s = "WD"; next }
	s == "WD" && /mmap_lock_released:.*write=false/ { n++; s = "" }
	END { print n + 0 }
' "$out/events.mm")
check_range "downgrades seen: acquire(w) -> acquire(r) -> release(r)" "$nseq" 1 1000

# --- memcg_id as a filter ----------------------------------------------------------
# Positive control for "only memcg_id=N" below: the same run unfiltered
# has events of other memcgs (at least the shell's, before it moves).
nother0=$(grep 'mmap_lock_' "$out/events.all" | grep -vc "memcg_id=$cgid ")
check_range "unfiltered trace has events of other memcgs" "$nother0" 1 100000000
if echo "memcg_id == $cgid" >"$EV/filter" 2>"$out/filter.err"; then
	ok "memcg_id == $cgid accepted as an event filter"
	trace_run "$out/filtered"
	nall=$(grep -c 'mmap_lock_' "$out/filtered.all")
	nother=$(grep 'mmap_lock_' "$out/filtered.all" | grep -vc "memcg_id=$cgid ")
	check_range "filtered trace has events" "$nall" 1 100000000
	check "filtered trace has only memcg_id=$cgid ($nother others)" test "$nother" = 0
else
	fail "memcg_id == $cgid accepted as an event filter: $(cat "$out/filter.err")"
	fail "filtered trace has events: no filter"
	fail "filtered trace has only memcg_id=$cgid: no filter"
fi

finish
