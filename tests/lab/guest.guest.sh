#!/usr/bin/env bash
# The guest environment: the built kernel, BTF, a BPF program that loads and
# counts, modules, the shares and the pseudo filesystems.
. "$(dirname "$0")/../lib.sh"
plan 9
d=$(test_out lab-guest)
kdir=$("$TOP/scripts/build-kernel" --print-dir 2>/dev/null)
rel=$(uname -r)

case $rel in
*-mmlockscope) ok "guest kernel carries the -mmlockscope marker ($rel)" ;;
*) fail "guest kernel carries the -mmlockscope marker: uname -r is $rel" ;;
esac
check_eq "guest kernel is this checkout's build (${kdir:-no build found in the cache})" \
	"$rel" "$(cat "$kdir/kernel.release" 2>/dev/null)"
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
cc -o /tmp/getpid50 /tmp/getpid.c 2>>"$d/cc.err"
tool_start bpftrace "$d/bpftrace.out" "$d/bpftrace.out" bpftrace -B line -e 'BEGIN { printf("Tracing, Hit Ctrl-C\n"); }
tracepoint:syscalls:sys_enter_getpid /comm == "getpid-50"/ { @n++; }'
[ -x /tmp/getpid50 ] && /tmp/getpid50
tool_stop bpftrace
n=$(sed -n 's/^@n: \([0-9]*\)/\1/p' "$d/bpftrace.out")
check_eq "a BPF program loads, attaches and counts exactly 50 getpid calls${n:+} $(head -c 80 "$d/cc.err")" "${n:-none}" 50
finish
