#!/usr/bin/env bash
# The mutants stay runnable: every tests/mutants/*.patch has a complete
# header (Mutant:, Kind: tree|kernel, Catch:), each Catch entry names at
# least one test file, and the mutant applies without fuzz, as
# tests/mutants/run applies it: a tree mutant to this checkout, a kernel
# mutant to the cached lab kernel source (the series applied; `make test`
# builds the kernel first). A change that moves a mutant's context fails here, in
# `make test`, instead of turning the mutant into an ERROR in the next
# `make test-mutants`.
. "$(dirname "$0")/../lib.sh"
mutants=("$TOP"/tests/mutants/*.patch)
plan ${#mutants[@]}
d=$(test_out lab-mutants)
field() { sed -n "s/^$1: *//p" "$2" | head -n 1; }
ksrc=${MMLOCK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mmlockscope}/kernel-latest/linux
for m in "${mutants[@]}"; do
	name=$(basename "$m" .patch)
	what=$(field Mutant "$m") kind=$(field Kind "$m") catch=$(field Catch "$m")
	why=
	[ -n "$what" ] || why+=" no Mutant: line;"
	[ "$kind" = tree ] || [ "$kind" = kernel ] || why+=" Kind: '$kind', want tree or kernel;"
	[ -n "$catch" ] || why+=" no Catch: line;"
	for c in $catch; do
		hit=0
		for f in "$TOP"/tests/*/*.sh; do [[ ${f#"$TOP"/} == *"$c"* ]] && hit=1; done
		[ "$hit" = 1 ] || why+=" Catch '$c' names no test file;"
	done
	where=$TOP
	[ "$kind" = kernel ] && where=$ksrc
	if [ ! -d "$where" ]; then
		why+=" no $where to apply it to (make kernel);"
	elif ! sed -n '/^\(diff \|--- a\/\)/,$p' "$m" |
		patch -d "$where" -p1 --dry-run --fuzz=0 --batch >"$d/$name.out" 2>&1; then
		why+=" does not apply without fuzz to $where: $(grep -m1 -E 'FAILED|can.t find' "$d/$name.out")"
	fi
	if [ -z "$why" ]; then
		ok "$name ($kind): header complete, Catch: $catch, applies without fuzz to $([ "$kind" = tree ] && echo the checkout || echo the lab kernel source)"
	else
		fail "$name:$why"
	fi
done
finish
