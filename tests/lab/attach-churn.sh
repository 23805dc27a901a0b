#!/usr/bin/env bash
# attach-churn.sh [CYCLES]: attach and detach mmlockstat CYCLES times
# (default 20) while tests/bin/mmap_churn maps, unmaps and faults on every
# vCPU -- each cycle live-patches up_write, down_write, ... twice. Run it in
# the guest; a cycle that takes longer than 60 s is reported as a hang, and
# a guest whose vCPUs are all wedged ends at vm-run's --timeout (exit 124).
#
#   scripts/vm-run --timeout 600 -- tests/lab/attach-churn.sh          # default TCG
#   scripts/vm-run --mttcg --timeout 600 -- tests/lab/attach-churn.sh  # MTTCG
#
# Why it exists: under multi-threaded TCG (QEMU 7.2) a vCPU can keep
# executing a stale translation of kernel text that another vCPU has just
# patched; the int3 left there by text_poke_bp() then fires forever (the
# kernel sees the byte is gone and retries the instruction). See
# scripts/vm-run --help, --mttcg. Not part of `make test` (not *.guest.sh).
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cycles=${1:-20}
[[ $cycles =~ ^[1-9][0-9]*$ ]] || { echo "attach-churn: CYCLES '$cycles' is not a positive number" >&2; exit 2; }
[ "${MMLOCK_GUEST:-0}" = 1 ] || { echo "attach-churn: run it in the guest (scripts/vm-run -- $0)" >&2; exit 2; }
for b in "$top/bpf/mmlockstat" "$top/tests/bin/mmap_churn"; do
	[ -x "$b" ] || { echo "attach-churn: $b is not built (make tools; make -C tests/kernel)" >&2; exit 2; }
done

"$top/tests/bin/mmap_churn" -t 100000 >/dev/null &
churn=$!
trap 'kill $churn 2>/dev/null' EXIT
hung=0
for i in $(seq "$cycles"); do
	t0=$(date +%s%N)
	timeout -s INT -k 5 60 "$top/bpf/mmlockstat" -d 1 >/dev/null 2>/tmp/attach-churn.err
	rc=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
	echo "cycle $i: ${ms} ms, mmlockstat exit $rc"
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		hung=1
		echo "cycle $i: no exit within 60 s: hang (see the console log)"
		break
	fi
done
[ "$hung" = 0 ] && echo "all $cycles cycles completed"
exit "$hung"
