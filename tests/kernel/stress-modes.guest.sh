#!/usr/bin/env bash
# Stress in each vm.munmap_lock_mode (section mode with 2 MiB sections):
#  - tests/bin/mmap_churn: 7 threads of one process mapping, partially
#    unmapping, MAP_FIXED-ing over holes, mremap shrink/grow, faulting with
#    MADV_DONTNEED and reading /proc/self/{cmdline,maps}, each checking its
#    own data (the same-mm concurrency section mode's lock drops expose);
#  - Debian's stress-ng: --mmap, --munmap, --mremap and --brk stressors with
#    --vm and --fault workers faulting concurrently.
# Pass: no data error, stress-ng exits 0, no BUG/WARNING/oops/lockdep in
# dmesg; in section mode the lock-drop counter moved (the code ran).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/modes-lib.sh"
d=$(test_out kernel-stress)
secs=${MMLOCK_STRESS_SECS:-5}

if ! have_modes; then
	fail "vm.munmap_lock_mode exists (is patch 0001 applied?)"
	finish
fi
save_modes
counter() { awk -v k="$1" '$1 == k { print $2 }' "$STATS_F"; }
dmesg_mark
for m in $MODES; do
	set_mode "$m" $((2 << 20)) || { fail "set mode $m"; continue; }
	s0=$(counter munmap_section) d0=$(counter munmap_section_drop)
	timeout $((secs + 60)) "$TESTBIN/mmap_churn" -t "$secs" -m 32 >"$d/$m-churn.log" 2>&1
	rc=$?
	line=$(grep -E '^(not )?ok' "$d/$m-churn.log")
	if [ $rc -eq 0 ]; then ok "mode $m: ${line#ok - }"; else fail "mode $m: mmap_churn exit $rc: ${line:-$(tail -1 "$d/$m-churn.log")}"; fi
	s1=$(counter munmap_section) d1=$(counter munmap_section_drop)
	if [ "$m" = section ]; then
		check "mode section: churn went through sections ($((s1 - s0))) and dropped the lock ($((d1 - d0)))" \
			test $((s1 - s0)) -gt 0 -a $((d1 - d0)) -gt 0
	fi
	(cd /tmp && timeout $((secs + 120)) stress-ng --mmap 2 --mmap-bytes 64M --munmap 1 \
		--mremap 2 --mremap-bytes 32M --brk 1 --vm 1 --vm-bytes 64M --fault 1 \
		--timeout "${secs}s" --metrics-brief) >"$d/$m-stress-ng.log" 2>&1
	rc=$?
	check "mode $m: stress-ng mmap/munmap/mremap/brk + vm/fault for ${secs}s (exit $rc)" [ $rc -eq 0 ]
	dmesg_check "mode $m: stress"
done
restore_modes
finish
