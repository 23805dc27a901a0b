#!/usr/bin/env bash
# vm.munmap_lock_mode=section (kernel patch 0001), 2 vCPUs: a populated
# 1 GiB mapping (4 KiB pages) is unmapped while a second thread of the same
# process faults pages elsewhere and a third reads /proc/self/cmdline in a
# loop. Checked by tests/bin/munmap_section (its own TAP, one check here
# per run): the range is gone (SIGSEGV, mincore ENOMEM, /proc/self/maps),
# the neighbours and the faulting thread's data are intact, and the
# debugfs counters moved as the mode says (sections and lock drops in
# section mode, nothing in the others). Also: userfaultfd keeps section
# mode atomic. The section-mode runs come first: they are the positive
# control of the "no section counter moved" checks of the other modes.
# How long the reader stays blocked, and the exact number of lock drops,
# are in section-munmap.icount.sh (one vCPU, guest time in instructions).
. "$(dirname "$0")/../lib.sh"
prog=$TESTBIN/munmap_section
size=${MMLOCK_SECTION_MIB:-1024}
# NAME|MODE|SECTION_BYTES|ARGS
RUNS=(
	# many chunks, lock drops expected
	"section-64M|section|$((64 << 20))|-s $size -S $((64 << 20)) -e section"
	# default PUD_SIZE sections, 1.25 GiB across a 1 GiB boundary: two
	# chunks, the second downgraded (a range no longer than one section
	# is never split)
	"section-pud|section|$((1 << 30))|-s $((size + size / 4)) -a -S $((1 << 30)) -e section"
	# a userfaultfd context wanting UNMAP events: atomic
	"section-uffd|section|$((64 << 20))|-s 256 -S $((64 << 20)) -u -e atomic"
	# the other modes: correct too, and no section counter moves
	"downgrade|downgrade||-s $size -e none"
	"exclusive|exclusive||-s $size -e none"
)
plan ${#RUNS[@]}

have_modes || abort "vm.munmap_lock_mode exists (is patch 0001 applied?)"
[ -x "$prog" ] || abort "$prog is built (make -C tests/kernel)"

for r in "${RUNS[@]}"; do
	IFS='|' read -r name mode bytes args <<<"$r"
	# shellcheck disable=SC2086 # no bytes: mode only
	if ! set_mode "$mode" $bytes; then
		fail "[$name] munmap_section $args: cannot set mode $mode $bytes"
		continue
	fi
	# shellcheck disable=SC2086 # args is a list of options
	subtest "[$name] munmap_section $args" "$prog" $args
done
finish
