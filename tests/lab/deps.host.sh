#!/usr/bin/env bash
# scripts/deps from nothing: stub dpkg-query, apt-get and id on PATH stand
# for a machine where none, some or all packages are installed, as root or
# not, with apt failing or working. Nothing is installed for real: the stub
# apt-get only records what it was asked and marks the packages installed
# in the stub's database.
. "$(dirname "$0")/../lib.sh"
plan 20
deps=$TOP/scripts/deps
d=$(test_out lab-deps)
stub=$d/bin
rm -rf "$d" && mkdir -p "$stub"

# The stubs read $DB (installed packages, one a line), log to $d/calls.
cat >"$stub/dpkg-query" <<'EOF'
#!/bin/bash
# dpkg-query -W -f=FORMAT PKG...: like dpkg's: "no packages found" and exit 1
# for a package it never heard of, "not-installed" for one it knows.
shift 2
rc=0
for p in "$@"; do
	if grep -qx "$p" "$DB"; then echo "$p install ok installed"
	elif grep -qx "$p" "$DB.known" 2>/dev/null; then echo "$p unknown ok not-installed"
	else echo "dpkg-query: no packages found matching $p" >&2; rc=1
	fi
done
exit $rc
EOF
cat >"$stub/apt-get" <<'EOF'
#!/bin/bash
echo "apt-get $*" >>"$CALLS"
case $1 in
update) [ "${APT_FAIL:-}" = update ] && { echo "E: Failed to fetch lists" >&2; exit 100; }; exit 0 ;;
esac
[ "${APT_FAIL:-}" = install ] && { echo "E: Unable to locate package ${@: -1}" >&2; exit 100; }
[ "${APT_FAIL:-}" = silent ] && exit 0
for p in "$@"; do case $p in -*|install) ;; *) echo "$p" >>"$DB" ;; esac; done
EOF
cat >"$stub/id" <<'EOF'
#!/bin/bash
[ "$1" = -u ] && { echo "${FAKE_UID:-0}"; exit 0; }
exec /usr/bin/id "$@"
EOF
chmod +x "$stub"/*
report=$("$deps" --list report)
test_pkgs=$("$deps" --list test)

# run NAME [VAR=VALUE...]: scripts/deps report with the stubs; sets rc,
# leaves $d/NAME.err and the apt-get calls in $d/NAME.calls.
run() {
	local name=$1
	shift
	: >"$d/$name.calls"
	env PATH="$stub:$PATH" DB="$d/db" CALLS="$d/$name.calls" TMPDIR="$d" "$@" \
		"$deps" "${GROUP:-report}" >"$d/$name.out" 2>"$d/$name.err"
	rc=$?
}

# --- the positive control: the stubs are what scripts/deps asks ------------
: >"$d/db"
run none
check_eq "nothing installed: exit 0" "$rc" 0
check "nothing installed: apt-get update ran" grep -qx 'apt-get update -qq' "$d/none.calls"
asked=$(grep 'apt-get install' "$d/none.calls" | tr ' ' '\n' | grep -v '^-\|^apt-get$\|^install$' | sort)
check_eq "nothing installed: every report package was installed" "$asked" "$(sort <<<"$report")"
check "nothing installed: says what it installs" grep -q "installing $(wc -l <<<"$report") package(s)" "$d/none.err"
check "nothing installed: all are installed afterwards" [ -z "$(PATH=$stub:$PATH DB=$d/db "$deps" --missing report)" ]

# --- half installed: only the rest is installed ---------------------------
head -n 7 <<<"$report" >"$d/db"
tail -n +8 <<<"$report" | head -n 3 >"$d/db.known"	# known to dpkg, removed
run half
asked=$(grep 'apt-get install' "$d/half.calls" | tr ' ' '\n' | grep -v '^-\|^apt-get$\|^install$' | sort)
check_eq "half installed: exit 0" "$rc" 0
check_eq "half installed: only the missing packages were installed" "$asked" "$(tail -n +8 <<<"$report" | sort)"
rm -f "$d/db.known"

# --- all installed: quiet, no apt ------------------------------------------
printf '%s\n' "$test_pkgs" >"$d/db"
run all
check_eq "all installed: exit 0" "$rc" 0
check "all installed: apt-get is not called" [ ! -s "$d/all.calls" ]
check "all installed: prints nothing" [ ! -s "$d/all.err" ] && [ ! -s "$d/all.out" ]

# --- the test group asks for more than the report --------------------------
printf '%s\n' "$report" >"$d/db"
GROUP=test run test_group
asked=$(grep 'apt-get install' "$d/test_group.calls" | tr ' ' '\n' | grep -v '^-\|^apt-get$\|^install$' | sort)
check_eq "report installed, make test: installs the test-only packages" "$asked" \
	"$(comm -13 <(sort <<<"$report") <(sort <<<"$test_pkgs"))"
has=no; grep -qx chromium <<<"$report" && has=yes
check_eq "the report does not need chromium (test-only)" "$has" no

# --- not root --------------------------------------------------------------
: >"$d/db"
run notroot FAKE_UID=1000
check_eq "not root: exit 1" "$rc" 1
check "not root: names the missing packages and the sudo command" \
	grep -q 'installing them needs root.*sudo apt-get install linux-source-6.1' "$d/notroot.err"
check "not root: apt-get is not called" [ ! -s "$d/notroot.calls" ]

# --- apt failures ------------------------------------------------------------
: >"$d/db"
run upd APT_FAIL=update
check_eq "apt-get update fails: exit 1" "$rc" 1
check "apt-get update fails: says so, with its output and the fix" \
	grep -q 'apt-get update failed.*sources.list' "$d/upd.err"
run inst APT_FAIL=install
check_eq "apt-get install fails: exit 1" "$rc" 1
check "apt-get install fails: shows apt's error and names what is not installed" \
	sh -c "grep -q 'Unable to locate package' '$d/inst.err' && grep -q 'not installed: linux-source-6.1 ' '$d/inst.err'"
run silent APT_FAIL=silent
check "apt-get claims success but installs nothing: exit 1, named" \
	sh -c "[ $rc = 1 ] && grep -q 'still not installed: linux-source-6.1' '$d/silent.err'"
finish
