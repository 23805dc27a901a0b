#!/usr/bin/env bash
# The guest environment: the built kernel, BTF, a BPF program that loads and
# counts, modules, the shares and the pseudo filesystems.
. "$(dirname "$0")/../lib.sh"
d=$(test_out lab-guest)
kdir=$("$TOP/scripts/build-kernel" --print-dir 2>/dev/null)
rel=$(uname -r)

case $rel in
*-mmlockscope) ok "guest kernel carries the -mmlockscope marker ($rel)" ;;
*) fail "guest kernel carries the -mmlockscope marker: uname -r is $rel" ;;
esac
[ -n "$kdir" ] && check "guest kernel is this checkout's build" [ "$rel" = "$(cat "$kdir/kernel.release")" ]
check "/sys/kernel/btf/vmlinux exists" [ -s /sys/kernel/btf/vmlinux ]
check "tracefs is mounted" [ -e /sys/kernel/tracing/events/mmap_lock ]
check "debugfs is mounted" mountpoint -q /sys/kernel/debug
check "bpffs is mounted" mountpoint -q /sys/fs/bpf
check "modules of the built kernel are reachable" [ -f "/mnt/modroot/lib/modules/$rel/modules.dep" ]
check "/tmp is writable" sh -c 'f=$(mktemp /tmp/wr.XXXXXX) && echo x > "$f" && rm "$f"'

# A BPF program: bpftrace counts sys_enter_getpid events while we make 50.
# bpftrace runs BEGIN once every probe is attached ("Attaching N probes"
# comes before), so the calls start after its "ready" line.
cat > /tmp/getpid.c <<'C'
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/prctl.h>
int main(void) { prctl(PR_SET_NAME, "getpid-50"); for (int i = 0; i < 50; i++) syscall(SYS_getpid); return 0; }
C
cc -o /tmp/getpid50 /tmp/getpid.c 2>>"$d/cc.err" || fail "cc getpid.c: $(head -n 1 "$d/cc.err")"
timeout 120 bpftrace -e 'BEGIN { printf("ready\n"); }
tracepoint:syscalls:sys_enter_getpid /comm == "getpid-50"/ {
	@n++; if (@n == 50) { exit(); } }' >"$d/bpftrace.out" 2>&1 &
bt=$!
wait_for "$d/bpftrace.out" '^ready' 120 "$bt" || fail "bpftrace attached: $(tail -n 2 "$d/bpftrace.out" | tr '\n' ' ')"
[ -x /tmp/getpid50 ] && /tmp/getpid50
wait $bt
n=$(sed -n 's/^@n: \([0-9]*\)/\1/p' "$d/bpftrace.out")
check "a BPF program loads, attaches and counts 50 getpid calls (got ${n:-none})" [ "${n:-0}" -ge 50 ]
finish
