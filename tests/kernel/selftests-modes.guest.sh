#!/usr/bin/env bash
# The kernel's own vm selftests (tools/testing/selftests/vm of the same
# linux-source-6.1, built by tests/kernel/Makefile into tests/bin/selftests-vm)
# in each vm.munmap_lock_mode, section mode with 2 MiB sections so that
# every multi-MiB munmap is split. Chosen for munmap/mremap/mlock/MAP_FIXED/
# userfaultfd coverage and seconds of run time under TCG:
#   map_fixed_noreplace  MAP_FIXED_NOREPLACE over/around existing mappings
#   mremap_test          mremap moves/shrinks with alignment variants
#   mremap_dontunmap     MREMAP_DONTUNMAP
#   mlock2-tests         mlock/mlock2/munlock/MCL_ONFAULT, then munmap
#   on-fault-limit       MCL_ONFAULT vs RLIMIT_MEMLOCK (as nobody)
#   map_populate         MAP_POPULATE + fork
#   madv_populate        MADV_POPULATE_(READ|WRITE)
#   userfaultfd anon/shmem 4 MiB, 4 bounces: uffd incl. the non-cooperative
#                        UNMAP/REMOVE/FORK event tests (16 MiB/8 bounces
#                        took 90-230 s each under TCG; 4/4 keeps it short)
# (mrelease_test is built but not run: process_mrelease returned ENOSYS.)
# One check per (mode, selftest): it exits 0 and, if it prints TAP, no
# case of it says "not ok" or SKIP (mremap_test exits 0 after a failed
# case; tests/kernel/Makefile fixes the one case of it that was wrong,
# "mremap expand merge"). A kselftest skip (exit 4) fails: on the lab
# kernel every one of them applies. The harness checks the kernel log.
. "$(dirname "$0")/../lib.sh"
d=$(test_out kernel-selftests)
st=$TESTBIN/selftests-vm
MODES=(exclusive downgrade section)
tests=(
	"map_fixed_noreplace"
	"mremap_test"
	"mremap_dontunmap"
	"mlock2-tests"
	"NOBODY /tmp/on-fault-limit"
	"map_populate"
	"madv_populate"
	"userfaultfd anon 4 4"
	"userfaultfd shmem 4 4"
)
plan $((${#MODES[@]} * ${#tests[@]}))

have_modes || abort "vm.munmap_lock_mode exists (is patch 0001 applied?)"
[ -x "$st/mremap_test" ] || abort "vm selftests are built ($st; make -C tests/kernel)"
# on-fault-limit must run unprivileged; copy it where nobody can read it.
cp "$st/on-fault-limit" /tmp/on-fault-limit && chmod 755 /tmp/on-fault-limit

for m in "${MODES[@]}"; do
	set_mode "$m" $((2 << 20)) || { for t in "${tests[@]}"; do fail "mode $m: selftest ${t#NOBODY }: cannot set the mode"; done; continue; }
	for t in "${tests[@]}"; do
		read -ra argv <<<"$t"
		log=$d/$m-$(echo "$t" | tr ' /' '__').log
		[ "${argv[0]}" = NOBODY ] && argv=(setpriv --reuid=65534 --regid=65534 --clear-groups "${argv[@]:1}")
		[ "${argv[0]}" = setpriv ] || argv[0]=$st/${argv[0]}
		t0=$(date +%s.%N)
		(ulimit -l 8192; timeout 300 "${argv[@]}") >"$log" 2>&1
		rc=$?
		dt=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
		name="mode $m: selftest ${t#NOBODY } (${dt}s)"
		# Some print their own TAP and exit 0 whatever their cases said.
		bad=$(grep -m1 -E '^not ok|^ok .*# *SKIP' "$log")
		case $rc in
		0) if [ -z "$bad" ]; then ok "$name"; else fail "$name: exit 0, but its log has '$bad'"; fi ;;
		4) fail "$name: kselftest skip (exit 4), which must not happen on the lab kernel: $(tail -1 "$log")" ;;
		*) fail "$name: exit $rc: $(grep -iE 'fail|error|not ok' "$log" | head -1)" ;;
		esac
	done
done
finish
