# scripts/bpftrace-stop.sh: sourced by scripts/trace and
# tests/bpftrace/bt_lib.sh (both in the guest).
#
# bpftrace_stop PID: stop a bpftrace the caller started in the background,
# as Ctrl-C would, and reap it. Returns 0 if it exited (it then printed its
# maps), 1 if it had to be killed after 300 s. BPFTRACE_SIGINTS says how
# many SIGINTs it took.
#
# Detaching fentry trampolines waits for RCU tasks: slow under TCG (once
# more than 60 s with 8 guests on 2 host cores), hence up to 300 s.
# bpftrace 0.17 can miss a SIGINT: its event loop polls with a 100 ms
# epoll_wait() and only sees the flag the handler sets when the signal
# interrupts that call (EINTR) or a further event arrives; one that lands
# while it is reading events is lost once the probes fall silent (seen:
# mmap_lock_wait.bt idle for 300 s after the workload). So SIGINT is
# repeated at 5, 20 and 60 s; an extra one during a slow exit only sets the
# same flag again.
# Nothing is exec'ed between the first SIGINT and bpftrace's exit (no sleep
# or seq loop): bpftrace stops printing per-event lines at SIGINT but its
# probes stay attached until it has printed the maps, so every process
# started meanwhile (its munmaps, its ELF loader's vm_munmap) would be
# counted in the maps without a line of its own. The watchdog sleeps start
# before the first SIGINT.
BPFTRACE_SIGINTS=0
bpftrace_stop() {
	local pid=$1 wds=() w rc=0
	for w in 5 20 60 300; do
		sleep "$w" &
		wds+=($!)
	done
	kill -INT "$pid" 2>/dev/null
	BPFTRACE_SIGINTS=1
	for w in "${wds[@]}"; do
		wait -n "$pid" "$w" 2>/dev/null
		kill -0 "$pid" 2>/dev/null || break
		[ "$w" = "${wds[3]}" ] && break
		kill -INT "$pid" 2>/dev/null
		BPFTRACE_SIGINTS=$((BPFTRACE_SIGINTS + 1))
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid" 2>/dev/null
		rc=1
	fi
	kill "${wds[@]}" 2>/dev/null
	wait "$pid" "${wds[@]}" 2>/dev/null
	return $rc
}
