#!/usr/bin/env bash
# vm.munmap_lock_mode=section (kernel patch 0001): a populated 1 GiB mapping
# (4 KiB pages) is unmapped while a second thread of the same process
# faults pages elsewhere and a third reads /proc/self/cmdline in a loop.
# Checked by tests/bin/munmap_section: the range is gone (SIGSEGV, mincore
# ENOMEM, /proc/self/maps), the neighbours and the faulting thread's data
# are intact, and the debugfs counters moved as the mode says (sections and
# lock drops in section mode, nothing in the others). Also: userfaultfd
# keeps section mode atomic, and a generous bound on the reader's block time
# (exclusive: >= 1/2 of the munmap; section, 17 chunks: < 3/4 of it, loose
# because a starved TCG vCPU stretches single chunks on a loaded host).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/modes-lib.sh"
d=$(test_out kernel-section)
prog=$TESTBIN/munmap_section
size=${MMLOCK_SECTION_MIB:-1024}

if ! have_modes; then
	fail "vm.munmap_lock_mode exists (is patch 0001 applied?)"
	finish
fi
[ -x "$prog" ] || { fail "$prog is built (make -C tests/kernel)"; finish; }
save_modes
dmesg_mark

# run NAME ARGS...: run the program, keep its output, echo its figures line
run() {
	local name=$1; shift
	local rc
	"$prog" "$@" >"$d/$name.out" 2>&1
	rc=$?
	grep -E '^(not )?ok - ' "$d/$name.out" | sed "s/^\(\(not \)\{0,1\}ok\) - /\1 - [$name] /"
	grep '^# ' "$d/$name.out" >&2
	if [ $rc -ne 0 ] && ! grep -q '^not ok' "$d/$name.out"; then
		fail "[$name] munmap_section $* exited $rc: $(tail -1 "$d/$name.out")"
	elif [ $rc -ne 0 ]; then
		_failed=1
	fi
}
fig() { sed -n "s/^# .*\b$2=\([0-9.]*\).*/\1/p" "$d/$1.out"; }

# 1. section mode, 64 MiB sections: many chunks, lock drops expected.
set_mode section $((64 << 20))
run section64 -s "$size" -S $((64 << 20)) -e section
# 2. section mode, default PUD_SIZE sections, range across a 1 GiB boundary:
#    1.25 GiB across a 1 GiB boundary: two chunks, the second downgraded.
#    (A range no longer than one section is never split.)
set_mode section $((1 << 30))
run section-pud -s $((size + size / 4)) -a -S $((1 << 30)) -e section
# 3. section mode with a userfaultfd context wanting UNMAP events: atomic.
set_mode section $((64 << 20))
run section-uffd -s 256 -S $((64 << 20)) -u -e atomic
# 4. the other modes: correct too, and no section counter moves.
set_mode downgrade
run downgrade -s "$size" -e none
set_mode exclusive
run exclusive -s "$size" -e none
restore_modes

# Generous bounds on the /proc/PID/cmdline reader's longest block.
ex_m=$(fig exclusive munmap_ms) ex_r=$(fig exclusive reader_max_ms)
se_m=$(fig section64 munmap_ms) se_r=$(fig section64 reader_max_ms)
if [ -n "$ex_m" ] && [ -n "$ex_r" ]; then
	check "exclusive: reader blocked for most of the munmap (${ex_r} of ${ex_m} ms)" \
		awk -v r="$ex_r" -v m="$ex_m" 'BEGIN { exit !(r >= 0.5 * m) }'
fi
if [ -n "$se_m" ] && [ -n "$se_r" ]; then
	check "section 64 MiB: reader blocked for well under the munmap (${se_r} of ${se_m} ms)" \
		awk -v r="$se_r" -v m="$se_m" 'BEGIN { exit !(r < 0.75 * m) }'
fi
dmesg_check "section-mode munmap tests"
finish
