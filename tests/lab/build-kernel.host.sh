#!/usr/bin/env bash
# scripts/build-kernel's bookkeeping, without a compile: the source package
# version is recorded and printed; extra patches (--patches) change the
# build key; a patch that would need fuzz to apply fails the build, naming
# the patch, the file and the hunk; a missing patch file is named; a
# second build of the same directory waits for the first (its lock) and
# then finds it done, instead of unpacking over a tree being compiled.
# The fuzz case runs a copy of build-kernel with an empty series on a
# made-up source tarball (one file): a second, not a build.
. "$(dirname "$0")/../lib.sh"
plan 12
bk=$TOP/scripts/build-kernel
d=$(test_out lab-build-kernel)
rm -rf "$d" && mkdir -p "$d"

# --- what the current build records --------------------------------------
kdir=$("$bk" --print-dir)
ver=$(dpkg-query -W -f='${Package} ${Version}' linux-source-6.1)
check "the build records the source package version ($(cat "$kdir/source.txt" 2>/dev/null))" \
	grep -q "^$ver, Linux 6\.1\.[0-9]*$" "$kdir/source.txt"
"$bk" >/dev/null 2>"$d/uptodate.err"
check "make kernel prints it: '$(head -c 150 "$d/uptodate.err")'" \
	grep -qF "up to date: $kdir ($ver, Linux 6.1." "$d/uptodate.err"

# --- one build per directory ----------------------------------------------
# The test holds the build's lock as a running build would; a second
# build-kernel must say it waits, stay blocked while the lock is held, and
# find the build done once it is released.
exec 7>"$kdir.lock"
flock 7
( exec 7>&-; timeout 120 "$bk" >/dev/null 2>"$d/wait.err"; echo "$?" >"$d/wait.rc" ) &
waiter=$!
for _ in $(seq 300); do
	grep -q "waiting for it" "$d/wait.err" 2>/dev/null && break
	sleep 0.1
done
check "a second build of the same directory waits for the first: '$(head -c 120 "$d/wait.err")'" \
	grep -qF "another build of $kdir is running: waiting for it" "$d/wait.err"
check "... and stays blocked while the first holds the lock" [ ! -e "$d/wait.rc" ]
exec 7>&-
wait "$waiter"
check "... then finds the build done and exits 0: '$(tail -n 1 "$d/wait.err")', exit $(cat "$d/wait.rc" 2>/dev/null)" \
	bash -c "grep -qF 'up to date: $kdir' '$d/wait.err' && [ \"\$(cat '$d/wait.rc')\" = 0 ]"

# --- extra patches ---------------------------------------------------------
# madvise.c's header: untouched by the series, stable across 6.1 releases.
cat >"$d/good.patch" <<'EOF'
--- a/mm/madvise.c
+++ b/mm/madvise.c
@@ -2,6 +2,7 @@
 /*
  *	linux/mm/madvise.c
  *
+ * (mmlockscope test)
  * Copyright (C) 1999  Linus Torvalds
  * Copyright (C) 2002  Christoph Hellwig
  */
EOF
# The same hunk with its first context line as a point release might have
# moved it: patch would apply it with fuzz 1.
sed 's|^ /\*$| /* moved|' "$d/good.patch" >"$d/fuzz.patch"
base=$("$bk" --print-key-dir)
with=$("$bk" --print-key-dir --patches "$d/good.patch")
check "an extra patch changes the build key ($(basename "$base") -> $(basename "$with"))" \
	[ -n "$with" ] && [ "$with" != "$base" ]
with2=$(MMLOCK_PATCHES=$d/good.patch "$bk" --print-key-dir)
check_eq "MMLOCK_PATCHES is the same as --patches" "$with2" "$with"
"$bk" --print-key-dir --patches "$d/no-such.patch" >/dev/null 2>"$d/missing.err"
check "a missing extra patch is named: '$(head -c 120 "$d/missing.err")'" \
	grep -q "patch '$d/no-such.patch' (--patches / MMLOCK_PATCHES) does not exist" "$d/missing.err"

# A made-up checkout (empty series) and source tarball (madvise.c's header).
mkdir -p "$d/fake/scripts" "$d/fake/kernel-patches" "$d/src/linux-source-6.1/mm"
cp "$bk" "$d/fake/scripts/"
: >"$d/fake/kernel-patches/series"
cp "$TOP/kernel-patches/mmlockscope.config" "$d/fake/kernel-patches/"
sed -n 's/^[ -]//p' "$d/good.patch" | tail -n +2 >"$d/src/linux-source-6.1/mm/madvise.c"
sed -i '1i // SPDX-License-Identifier: GPL-2.0' "$d/src/linux-source-6.1/mm/madvise.c"
printf 'kernelversion:\n\t@echo 6.1.999\n' >"$d/src/linux-source-6.1/Makefile"
tar -C "$d/src" -cJf "$d/src.tar.xz" linux-source-6.1
fake() { MMLOCK_SRC=$d/src.tar.xz MMLOCK_CACHE=$d/cache "$d/fake/scripts/build-kernel" "$@"; }
fake --patches "$d/fuzz.patch" >/dev/null 2>"$d/fuzz.err"
rc=$?
check_eq "a patch that needs fuzz stops the build" "$rc" 1
check "... naming the patch, the source and 'without fuzz'" \
	grep -q "patch fuzz.patch does not apply to src.tar.xz (not from a Debian package), Linux 6.1.999 without fuzz" "$d/fuzz.err"
check "... and the file and hunk: '$(grep -m1 'Hunk' "$d/fuzz.err")'" \
	grep -q '^build-kernel: mm/madvise.c: Hunk #1 FAILED at 2' "$d/fuzz.err"
# Positive control: the hunk is only off by its fuzz; with fuzz it applies.
fdir=$(fake --patches "$d/fuzz.patch" --print-key-dir)
check "... while 'patch --fuzz=1' would have applied it (the failure is the fuzz, nothing else)" \
	patch -d "$fdir/linux" -p1 --dry-run --batch --fuzz=1 -s <"$d/fuzz.patch"
rm -rf "$d/cache"
finish
