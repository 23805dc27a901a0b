#!/usr/bin/env bash
# kernels: debian-6.1 debian-6.12
# probes.guest.sh: every program the tools load is attached: mmlockstat in
# each probe set and munmapsnoop, on each kernel; mmlockstat's -v names
# each attachment. In each tool one function (choose_probes) decides which
# programs this kernel gets and one skeleton attach (plus, in mmlockstat,
# the kprobes on more functions than their SEC() names) attaches them.
# Before that, mmlockstat made the choice twice, once for loading and once
# for attaching, and the two drifted apart: --full's exec_done and
# exit_done (which end the read holds exec and exit release after leaving
# the mm) were loaded and never attached.
#
# While the tool runs, its file descriptors say what it holds: a
# bpf-prog fd per loaded program, a bpf_link fd per attachment, each
# link's fdinfo naming its program. A loaded program without a link is a
# probe the tool believes it has and does not.
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/mmls_lib.sh"

out=$(test_out probes)
# name|tool|environment|options (mmlockstat runs with -v -j -s: with -s
# the verifier sees the stack code of every program that takes a stack,
# dead code without it; a first version of that code was refused, "too
# complex", in every set)
SETS=(
	"default|mmlockstat||"
	"full|mmlockstat||--full"
	"full, fentry read probes|mmlockstat|MMLS_READ_PROBES=fentry|--full"
	"kprobes|mmlockstat||--kprobes"
	"kprobes, full|mmlockstat||--kprobes --full"
	"munmapsnoop|munmapsnoop||"
)
N_MMLS=3 N_SNOOP=2
plan $((5 * N_MMLS + N_SNOOP))
[ -x "$TOP/bpf/mmlockstat" ] && [ -x "$TOP/bpf/munmapsnoop" ] ||
	abort "bpf/mmlockstat and bpf/munmapsnoop are built (make tools)"

# bpf_fds PID: "prog ID" per loaded program, "link ID" (the program's id)
# per link
bpf_fds() {
	local pid=$1 f t
	for f in /proc/"$pid"/fd/*; do
		t=$(readlink "$f") || continue
		case $t in
		anon_inode:bpf-prog) echo "prog $(awk '$1 == "prog_id:" { print $2 }' "/proc/$pid/fdinfo/${f##*/}")" ;;
		anon_inode:bpf_link) echo "link $(awk '$1 == "prog_id:" { print $2 }' "/proc/$pid/fdinfo/${f##*/}")" ;;
		esac
	done
}

# The tools' stderr (mmlockstat -v: ~230 KB of libbpf's messages in small
# writes) goes to the guest's own /tmp, and is copied to $out after each
# run: on Debian's 6.12 a share mounted cache=mmap once lost the last
# writes to such a file (the "Tracing" line never appeared, in the guest
# or on the host, while the tool ran its main loop), so tool_start waited
# for good.
err=$(mktemp -d /tmp/probes.XXXXXX)
at_exit "rm -rf '$err'"
i=0
for set in "${SETS[@]}"; do
	IFS='|' read -r name tool envs opts <<<"$set"
	i=$((i + 1))
	n=$N_SNOOP args=()
	[ "$tool" = mmlockstat ] && n=$N_MMLS args=(-v -j -s)
	# shellcheck disable=SC2086	# opts and envs are word lists
	if tool_start "s$i" "$out/s$i.out" "$err/s$i.err" env $envs "$TOP/bpf/$tool" "${args[@]}" $opts; then
		pid=${TOOL_PIDS[s$i]}
		bpf_fds "$pid" >"$out/s$i.fds"
		progs=$(awk '$1 == "prog"' "$out/s$i.fds" | sort -u | wc -l)
		links=$(awk '$1 == "link"' "$out/s$i.fds" | wc -l)
		unattached=$(awk '$1 == "link" { l[$2] = 1 } $1 == "prog" { p[$2] = 1 }
			END { for (id in p) if (!(id in l)) print id }' "$out/s$i.fds")
		names=
		for id in $unattached; do
			names+=" $(bpftool prog show id "$id" 2>/dev/null | sed -n 's/.* name \([^ ]*\) .*/\1/p;q')($id)"
		done
		tool_stop "s$i"
		cp "$err/s$i.err" "$out/s$i.err"
		check_range "$name: the tool ran (exit $TOOL_RC) with its programs loaded: $progs programs, $links links" \
			"$progs" 6 100
		check_eq "$name: every loaded program is attached: programs without a link" \
			"${names:- none}" " none"
		[ "$tool" = mmlockstat ] &&
			check_eq "$name: -v names each link: 'mmlockstat: probe' lines" \
				"$(grep -c '^mmlockstat: probe ' "$out/s$i.err")" "$links"
	else
		[ -n "${TOOL_PIDS[s$i]:-}" ] && tool_stop "s$i" KILL
		cp "$err/s$i.err" "$out/s$i.err"
		fail_n "$n" "$name: $tool started: $(tail -n 1 "$out/s$i.err")"
	fi
done
finish
