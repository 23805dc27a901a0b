#!/usr/bin/env bash
# munmapsnoop with faulting threads in the same mm (mmap_lock readers) on a
# second vCPU, in each vm.munmap_lock_mode: downgrade lets them fault during
# the zap, exclusive blocks them for the call and the tool counts and times
# their waits, section drops the lock between chunks for them. Figures go
# to stdout as "# ..." lines (the three-mode table of the report). The
# uncontended calls, whose phases are compared with the workload's clock,
# are in munmapsnoop_phases.icount.sh.
#
# One tool session (`munmapsnoop -j -c munmapsnoop_map`) sees every call,
# one workload process after the other, each found by its pid.
#
# Bounds, and why (timing under TCG, false-failure rate measured: see the
# report in docs/):
#  - downgrade: the faulting threads fault during the call, and no reader
#    waits as long as half the call (they are not blocked by the zap);
#  - exclusive: a faulting thread waits >= 50 % of the call (it faults
#    continuously, so it queues within the first page's worth), at most the
#    call, and at most the longest page touch it timed itself (the touch
#    adds the fault itself and the wake-up to the lock wait);
#  - section: the lock is dropped for the waiters, and the tool's drop count
#    is the kernel's own counter's.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/munmapsnoop_lib.sh"
MIB=${MMLOCK_MUNMAPSNOOP_MIB:-256}
LEN=$((MIB << 20))
STEP=$((32 << 20))	# vm.munmap_section_bytes for the section calls
NEXP=$((LEN / STEP))
DBG=/sys/kernel/debug/munmap_lock

# The calls of the session: NAME MODE WORKLOAD-ARGS
CALLS=("dgf downgrade -s $MIB -f 2" "exf exclusive -s $MIB -f 2" "sec section -s $MIB -f 2")
# checks per call below, in order
N_SEC=5 N_DGF=4 N_EXF=5
plan $((1 + ${#CALLS[@]} + N_SEC + N_DGF + N_EXF + 1))
snoop_setup munmapsnoop-modes

# check_le WHAT A B: A <= B (integers)
check_le() { if [ "$2" -le "$3" ] 2>/dev/null; then ok "$1 ($2 <= $3)"; else fail "$1: ${2:-nothing} > ${3:-nothing}"; fi; }
declare -A PIDS=() ELAPSED=() FMAX=() FDURING=() MAPLEN=()
# field NAME OP LEN KEY...: the call's KEYs (nothing if no such event)
field() {
	local name=$1 op=$2 ln=$3 v
	shift 3
	v=$($SCHECK get "$d/modes.json" "$op" "$ln" --pid "${PIDS[$name]:-0}" "$@" 2>/dev/null) &&
		echo "$v"
}
# present NAME OP LEN: one check that the session has the call's event
present() {
	pycheck "$1: one $2 event of $3 bytes by its pid ${PIDS[$1]:-none}" \
		get "$d/modes.json" "$2" "$3" --pid "${PIDS[$1]:-0}" pid
}
figures() { $SCHECK figures "$d/modes.json" "$2" "$3" "$4" --pid "${PIDS[$1]:-0}"; }

# ---- the session: every call, one after the other ----
if ! tool_start modes "$d/modes.json" "$d/modes.err" "$SNOOP" -j -c munmapsnoop_map; then
	abort "munmapsnoop started: $(tail -n 2 "$d/modes.err" | tr '\n' ' ')"
fi
c0= c1=
for c in "${CALLS[@]}"; do
	read -r name mode args <<<"$c"
	if [ "$mode" = section ]; then
		set_mode section "$STEP"
	else
		set_mode "$mode"
	fi
	setrc=$?
	[ "$name" = sec ] && c0=$(awk '$1 == "munmap_section_drop" {print $2}' "$DBG")
	# shellcheck disable=SC2086
	map_call "$name" $args
	maprc=$?
	[ "$name" = sec ] && c1=$(awk '$1 == "munmap_section_drop" {print $2}' "$DBG")
	PIDS[$name]=$MAP_PID ELAPSED[$name]=$MAP_ELAPSED FMAX[$name]=$MAP_FAULT_MAX
	FDURING[$name]=$MAP_FAULTS_DURING MAPLEN[$name]=$MAP_LEN
	check_eq "$name: vm.munmap_lock_mode=$mode set, workload ($args) ran (status of set_mode, workload)" \
		"$setrc $maprc" "0 0"
done
tool_stop modes
check_eq "the session's munmapsnoop exited 0 on SIGINT" "$TOOL_RC" 0

# ---- section, with faulting threads: lock drops ----
present sec munmap "$LEN"
read -r total mode sect drops acqs <<<"$(field sec munmap "$LEN" total_ns mode sections lock_drops write_acquisitions)"
figures sec section+faulters munmap "$LEN"
check_eq "section+faulters: mode" "${mode:-none}" section
check_le "section+faulters: at least size/section_bytes sections" "$NEXP" "${sect:-0}"
check "section+faulters: lock drops counted (got ${drops:-none}, write acquisitions ${acqs:-none})" \
	[ "${drops:-0}" -ge 1 -a "${acqs:-0}" = $((${drops:-0} + 1)) ]
check_eq "section+faulters: lock drops = the kernel's munmap_section_drop delta (${c0:-none} -> ${c1:-none})" \
	"${drops:-none}" "$((${c1:-0} - ${c0:-0}))"

# ---- downgrade with faulting threads: readers are not blocked by the zap ----
present dgf munmap "$LEN"
read -r total maxw dg mode <<<"$(field dgf munmap "$LEN" total_ns max_wait_ns downgraded mode)"
figures dgf downgrade+faulters munmap "$LEN"
check_eq "downgrade+faulters: downgraded, mode" "${dg:-none} ${mode:-none}" "true downgrade"
# not vacuous: the faulting threads faulted during the call
check_le "downgrade+faulters: the faulting threads faulted during the munmap (faults)" 1 "${FDURING[dgf]:-0}"
check_le "downgrade+faulters: the longest reader wait x 2 <= the call" $((${maxw:-0} * 2)) "${total:-}"

# ---- exclusive with faulting threads: they wait for the whole call ----
present exf munmap "$LEN"
read -r total waiters wait maxw rw <<<"$(field exf munmap "$LEN" total_ns waiters wait_ns max_wait_ns read_waiters)"
figures exf exclusive+faulters munmap "$LEN"
fm=${FMAX[exf]:-0}
echo "# exclusive+faulters: workload fault_max_us=$((fm / 1000))"
check "exclusive+faulters: blocked readers counted (waiters=${waiters:-} read_waiters=${rw:-} wait_ns=${wait:-})" \
	[ "${rw:-0}" -ge 1 -a "${wait:-0}" -gt 0 ]
check_le "exclusive+faulters: half the call <= the longest wait" $((${total:-0} / 2)) "${maxw:-}"
check_le "exclusive+faulters: the longest wait <= the call" "${maxw:-}" "${total:-}"
# The wait lies inside the page touch the waiter timed itself. How much
# longer the touch is (the fault, the wake-up) is TCG scheduling: 0.35 to
# 18.7 ms in 20 runs here, 1 run in 20 over the former bound (20 % of the
# touch); the exact comparison is under icount, munmapsnoop_phases.
check_le "exclusive+faulters: the longest wait <= the workload's longest page touch" "${maxw:-}" "$fm"

# ---- the JSON contract ----
pycheck "every JSON line parses and has the schema-1 keys and types" schema "$d/modes.json"
finish
