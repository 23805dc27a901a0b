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
# Pass: every selftest exits 0 (or 4 = kselftest SKIP) in every mode, and
# the kernel log gets no BUG/WARNING/oops/lockdep report.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/modes-lib.sh"
d=$(test_out kernel-selftests)
st=$TESTBIN/selftests-vm

if ! have_modes; then
	fail "vm.munmap_lock_mode exists (is patch 0001 applied?)"
	finish
fi
[ -x "$st/mremap_test" ] || { fail "vm selftests are built ($st; make -C tests/kernel)"; finish; }
save_modes
# on-fault-limit must run unprivileged; copy it where nobody can read it.
cp "$st/on-fault-limit" /tmp/on-fault-limit && chmod 755 /tmp/on-fault-limit

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
dmesg_mark
for m in $MODES; do
	set_mode "$m" $((2 << 20)) || { fail "set mode $m"; continue; }
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
		case $rc in
		0) ok "$name" ;;
		4) skip "$name" "kselftest skip: $(tail -1 "$log")" ;;
		*) fail "$name: exit $rc: $(grep -iE 'fail|error|not ok' "$log" | head -1)" ;;
		esac
	done
	dmesg_check "mode $m: vm selftests"
done
restore_modes
finish
