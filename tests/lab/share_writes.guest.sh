#!/usr/bin/env bash
# Writes to a 9p share are not lost while another process reads the file.
# Every tool test waits for a line in a file on the share ("Tracing ...")
# while the tool appends to it. guest-image/init picks the cache mode; on
# Debian's 6.12 with cache=mmap this file lost lines in 7 runs of 8.
# kernels: debian-6.1 debian-6.12
. "$(dirname "$0")/../lib.sh"
plan 4
d=$(test_out share-writes)
rounds=8 lines=200

mnt=$(df --output=target "$d" | tail -n 1)
fstype=$(awk -v m="$mnt" '$2 == m { print $3 }' /proc/mounts)
check_eq "the test's output directory is on a 9p share ($mnt)" "$fstype" 9p
opts=$(awk -v m="$mnt" '$2 == m { print $4 }' /proc/mounts)
case ,$opts, in
*,rw,*) ok "the share is mounted read-write ($opts)" ;;
*) fail "the share is mounted read-write: options are $opts" ;;
esac

# Each round: one process appends LINES numbered lines through one fd,
# while a loop greps and stats the file until the writer exits.
polled=0 bad=0 why=
for ((k = 0; k < rounds; k++)); do
	f=$d/append.$k
	(for ((j = 0; j < lines; j++)); do echo "line $j" >&2; done) 2>"$f" &
	p=$! n=0
	while kill -0 "$p" 2>/dev/null; do
		grep -q line "$f" 2>/dev/null
		stat -c %s "$f" >/dev/null
		n=$((n + 1))
	done
	[ "$n" -gt 0 ] && polled=$((polled + 1))
	wait "$p"
	got=$(grep -c '^line [0-9]*$' "$f")
	[ "$got" = "$lines" ] && continue
	bad=$((bad + 1))
	why+=" round $k: $got of $lines lines, $(stat -c %s "$f") bytes, $(tr -d '\n[:print:]' <"$f" | wc -c) unprintable;"
done
check_eq "rounds in which the reader polled the file while it was written" "$polled" "$rounds"
check_eq "every appended line arrived, in $rounds rounds of $lines lines${why:+:$why}" "$bad" 0
finish
