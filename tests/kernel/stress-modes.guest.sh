#!/usr/bin/env bash
# Stress in each vm.munmap_lock_mode (section mode with 2 MiB sections):
#  - tests/bin/mmap_churn: 7 threads of one process mapping, partially
#    unmapping, MAP_FIXED-ing over holes, mremap shrink/grow, faulting with
#    MADV_DONTNEED and reading /proc/self/{cmdline,maps}, each checking its
#    own data (the same-mm concurrency section mode's lock drops expose);
#    one check (its own TAP line);
#  - Debian's stress-ng: --mmap, --munmap, --mremap and --brk stressors with
#    --vm and --fault workers faulting concurrently; exits 0.
# In section mode one more check: the churn went through sections and
# dropped the lock (the code under test ran). The harness checks the
# kernel log of the whole file.
. "$(dirname "$0")/../lib.sh"
d=$(test_out kernel-stress)
secs=${MMLOCK_STRESS_SECS:-5}
STATS_F=/sys/kernel/debug/munmap_lock
MODES=(exclusive downgrade section)
STRESS=(churn stress-ng)
plan $((${#MODES[@]} * ${#STRESS[@]} + 1))

have_modes || abort "vm.munmap_lock_mode exists (is patch 0001 applied?)"
counter() { awk -v k="$1" '$1 == k { print $2 }' "$STATS_F"; }
for m in "${MODES[@]}"; do
	if ! set_mode "$m" $((2 << 20)); then
		for s in "${STRESS[@]}"; do fail "mode $m: $s: cannot set the mode"; done
		[ "$m" = section ] && fail "mode section: churn went through sections: cannot set the mode"
		continue
	fi
	s0=$(counter munmap_section) d0=$(counter munmap_section_drop)
	SUBTEST_ERR=$d/$m-churn.err subtest "mode $m: mmap_churn -t $secs -m 32" \
		timeout $((secs + 60)) "$TESTBIN/mmap_churn" -t "$secs" -m 32
	s1=$(counter munmap_section) d1=$(counter munmap_section_drop)
	if [ "$m" = section ]; then
		check "mode section: churn went through sections ($((s1 - s0))) and dropped the lock ($((d1 - d0)))" \
			test $((s1 - s0)) -gt 0 -a $((d1 - d0)) -gt 0
	fi
	(cd /tmp && timeout $((secs + 120)) stress-ng --mmap 2 --mmap-bytes 64M --munmap 1 \
		--mremap 2 --mremap-bytes 32M --brk 1 --vm 1 --vm-bytes 64M --fault 1 \
		--timeout "${secs}s" --metrics-brief) >"$d/$m-stress-ng.log" 2>&1
	check_eq "mode $m: stress-ng mmap/munmap/mremap/brk + vm/fault for ${secs}s, exit status" "$?" 0
done
finish
