# mmlockscope: make mmap_lock contention visible.  `make help` lists targets.
SHELL := /bin/bash
TOP := $(CURDIR)

# Experiment parameters (see README.md); passed to the scripts as environment.
SIZE_MB ?= 1024
REPS ?= 3
MODES ?= exclusive downgrade section
KCONFIG ?=
SCRIPT ?= munmap_phases
# The guest kernel: lab (the patched 6.1 built here), debian-6.1 or
# debian-6.12 (Debian's own, unpacked from its packages); scripts/vm-run
# reads MMLOCK_KERNEL.
KERNEL ?= lab
# The kernels `make report` puts side by side: the lab kernel's modes and
# Debian's 6.12 (per-VMA locks); KERNEL=x alone means just that one;
# PATCHES=FILE... the lab kernel without and with them ("patched").
KERNELS ?= $(if $(filter command line environment,$(origin KERNEL)),$(KERNEL),$(if $(PATCHES),lab patched,lab debian-6.12))
export SIZE_MB REPS MODES KERNELS
export MMLOCK_KERNEL := $(KERNEL)

KVARIANT := $(if $(KCONFIG),--variant $(KCONFIG))
ifeq ($(filter lab debian-6.1 debian-6.12,$(KERNEL)),)
$(error KERNEL=$(KERNEL): use lab, debian-6.1 or debian-6.12)
endif
ifneq ($(filter-out lab patched debian-6.1 debian-6.12,$(KERNELS)),)
$(error KERNELS: unknown kernel(s) $(filter-out lab patched debian-6.1 debian-6.12,$(KERNELS)): use lab, debian-6.1, debian-6.12 (patched: with PATCHES=))
endif
REPORT_DEBIAN := $(filter debian-%,$(KERNELS))

.PHONY: help deps kernel lab-kernel tools workloads shell test test-debug test-mutants report trace bench live \
	check-patches clean distclean

help:
	@echo "mmlockscope targets:"
	@echo "  make report      set up everything, run the before/after experiment on each kernel, write report/"
	@echo "                   (KERNELS=\"$(KERNELS)\" SIZE_MB=$(SIZE_MB) REPS=$(REPS) MODES=\"$(MODES)\" OUT=$(or $(OUT),report))"
	@echo "                   CMD='...': your own command as the workload (TIMEOUT=600 s a run);"
	@echo "                   PATCHES='a.patch ...': the lab kernel without and with your patches; see scripts/report -h"
	@echo "  make test        set up everything and run the test suite (tests/run)"
	@echo "  make test-debug  the kernel tests (tests/kernel/) on the debug kernel (lockdep, DEBUG_VM), output in test-out-debug/"
	@echo "  make test-mutants  apply each fault in tests/mutants/ and show which check catches it"
	@echo "  make deps        install missing Debian packages for the report (DEPS=test: for the tests too)"
	@echo "  make kernel      build the patched 6.1 kernel into the cache (KCONFIG=debug: debug variant);"
	@echo "                   KERNEL=debian-6.1|debian-6.12: fetch and unpack Debian's own instead"
	@echo "                   (KERNEL= also picks the guest kernel of shell, trace, report)"
	@echo "  make tools       build the libbpf tools in bpf/"
	@echo "  make workloads   build the workloads in workloads/bin/"
	@echo "  make shell       interactive root shell in the guest"
	@echo "  make trace       run a bpftrace script in the guest next to a workload (SCRIPT=$(SCRIPT))"
	@echo "  make bench       tracing overhead benchmark (scripts/bench-overhead)"
	@echo "  make live        guest with mmlockstat --prometheus forwarded to the host"
	@echo "  make check-patches  checkpatch.pl --strict on kernel-patches/, and the series' files built for arm64 and powerpc64le"
	@echo "  make clean       remove build outputs in the checkout (the kernel cache stays)"

# Each target installs what it needs (scripts/deps GROUP); `make deps` the
# report's set, `make deps DEPS=test` everything the test suite uses.
deps:
	@scripts/deps $(or $(DEPS),report)

deps-%:
	@scripts/deps $*

# The lab kernel: the tools' vmlinux.h comes from it, whatever KERNEL is.
lab-kernel: deps
	@scripts/build-kernel $(KVARIANT) >/dev/null

ifeq ($(KERNEL),lab)
kernel: lab-kernel
else
kernel: deps-debian
	@scripts/debian-kernel $(KERNEL:debian-%=%) >/dev/null
endif

tools: lab-kernel
	@$(MAKE) -s -C bpf

workloads: deps
	@$(MAKE) -s -C workloads

shell: kernel tools workloads
	@scripts/vm-run --shell

test: deps-test tools workloads
	@tests/run

# The kernel tests on the debug variant (lockdep, DEBUG_VM, maple tree
# checks): a splat in the guest fails the file that ran (tests/harness).
# Not the icount files: their bounds are calibrated for the lab kernel's
# speed, and the debug kernel is several times slower.
test-debug: deps-test tools workloads
	@scripts/build-kernel --variant debug >/dev/null
	@MMLOCK_TEST_LAB_KERNEL=$$(scripts/build-kernel --variant debug --print-dir) \
		MMLOCK_TEST_KERNELS= MMLOCK_TEST_OUT=$(CURDIR)/test-out-debug \
		tests/run --guest-only --no-icount -k tests/kernel/

test-mutants: deps-test tools workloads
	@tests/mutants/run

# A Debian kernel that cannot be fetched is not fatal here: the report
# shows it as failed and still runs the others.
report: tools workloads $(if $(REPORT_DEBIAN),deps-debian)
	@for k in $(REPORT_DEBIAN); do \
		scripts/debian-kernel $${k#debian-} >/dev/null || \
			echo "make report: Debian's $${k#debian-} kernel could not be fetched: the report shows $$k as failed" >&2; \
	done
	@OUT=$(or $(OUT),report) scripts/report

trace: deps-trace kernel tools workloads
	@scripts/trace $(SCRIPT)

bench: deps-bench tools workloads
	@$(if $(OUT),OUT=$(OUT)) scripts/bench-overhead

live: deps-live tools workloads
	@scripts/live

check-patches: kernel
	@scripts/check-patches
	@scripts/cross-build

clean:
	-@$(MAKE) -s -C bpf clean 2>/dev/null
	-@$(MAKE) -s -C workloads clean 2>/dev/null
	rm -rf tests/bin test-out

# Anything else is a typo: say so in one line.
%:
	@echo "make: unknown target '$@' (try 'make help')" >&2; exit 2
