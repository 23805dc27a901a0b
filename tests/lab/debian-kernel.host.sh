#!/usr/bin/env bash
# Debian's own kernels in the lab (scripts/debian-kernel, vm-run --kernel
# debian-6.1|debian-6.12): fetched and unpacked into the cache (nothing
# installed: the host's /boot and /lib/modules stay as they were), booted
# through their initramfs, BTF present, and the calibration module built
# against their headers loads and holds the lock as asked.
# Fetches the packages the first time (~80 s each), then reuses them.
. "$(dirname "$0")/../lib.sh"
series=(6.1 6.12)
plan $((3 + 7 * ${#series[@]}))
d=$(test_out lab-debian-kernel)
vm=$TOP/scripts/vm-run

boot_before=$(ls -1 /boot 2>/dev/null | sort | md5sum)
mods_before=$(ls -1 /lib/modules 2>/dev/null | sort | md5sum)
for s in "${series[@]}"; do
	kd=$("$TOP/scripts/debian-kernel" "$s" 2>"$d/fetch-$s.err")
	rel=$(cat "$kd/kernel.release" 2>/dev/null)
	pkg=$(head -n 1 "$kd/package.txt" 2>/dev/null)
	check "debian-$s: unpacked into the cache, package recorded ($pkg)" \
		[ -n "$rel" ] && [[ $pkg == linux-image-$rel\ * ]]
	"$vm" --kernel "debian-$s" --timeout 300 --out "$d/$s" -- sh -c '
		uname -r
		test -s /sys/kernel/btf/vmlinux && echo btf
		modprobe test_mmap_lock && echo "write 5000" >/sys/kernel/debug/test_mmap_lock/hold &&
			cat /sys/kernel/debug/test_mmap_lock/last' >"$d/$s.out" 2>"$d/$s.err"
	rc=$?
	check_eq "debian-$s: vm-run --kernel debian-$s boots it and exits 0" "$rc" 0
	check_eq "debian-$s: uname -r in the guest" "$(sed -n 1p "$d/$s.out")" "$rel"
	check "debian-$s: the kernel has BTF" grep -qx btf "$d/$s.out"
	w=$(sed -n 's/^write_ns=\([0-9]*\) .*/\1/p' "$d/$s.out")
	# Under TCG on a shared host the hold is >= the request by
	# construction and seldom more than a few ms over it; the bound
	# only says the module ran its hold (a wrong module reads 0).
	check_range "debian-$s: the calibration module built against its headers holds 5 ms (write_ns)" \
		"${w:-0}" 5000000 500000000
	check "debian-$s: the modules come from the unpacked tree, not the host's (tml is in extra/)" \
		[ -f "$kd/root/lib/modules/$rel/extra/test_mmap_lock.ko" ]
	# Its System.map is a placeholder: the first boot keeps the guest's
	# text symbols, which name a hung guest's vCPUs (vm-run --timeout).
	check "debian-$s: the guest's text symbols are kept beside it ($(grep -c . "$kd/kallsyms" 2>/dev/null) in $kd/kallsyms, _stext among them)" \
		grep -q ' _stext$' "$kd/kallsyms"
done
# A guest that hangs says why: at the timeout vm-run types SysRq-w on the
# guest's keyboard and its note names each blocked task with its stack.
# Here readers of /proc/PID/maps wait, one after the other, behind the
# calibration module's back-to-back 10 s write holds of PID's mmap_lock
# (a reader gets the lock only in the microseconds between two holds):
# the guest touches $d/hang/ready as the first one starts, and vm-run
# kills it 20 s later.
rm -rf "$d/hang.notes" "$d/hang"
mkdir -p "$d/hang"
MMLOCK_VM_NOTES=$d/hang.notes "$vm" --kernel debian-6.12 --timeout 600 --out "$d/hang" \
	--progress "$d/hang/ready" --progress-timeout 20 -- sh -c '
	modprobe test_mmap_lock || exit 1
	sh -c "while :; do echo write 10000000 >/sys/kernel/debug/test_mmap_lock/hold; done" &
	sleep 1
	touch "$0"
	while :; do cat /proc/$!/maps >/dev/null; done' "$d/hang/ready" >"$d/hang.out" 2>&1
rc=$?
blocked=$(grep -m1 '^vm-run: blocked tasks (SysRq-w): ' "$d/hang.notes" 2>/dev/null)
check "debian-6.12: a guest killed at its timeout (exit $rc) names its blocked tasks: the reader in down_read_killable, the holder in tml_hold_write (${blocked:0:200})" \
	bash -c '[ "$0" = 124 ] && [[ $1 == *"task:cat "*down_read_killable* ]] && [[ $1 == *tml_hold_write* ]]' "$rc" "$blocked"
check_eq "the host's /boot is untouched" "$(ls -1 /boot 2>/dev/null | sort | md5sum)" "$boot_before"
check_eq "the host's /lib/modules is untouched" "$(ls -1 /lib/modules 2>/dev/null | sort | md5sum)" "$mods_before"
finish
