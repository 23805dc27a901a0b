# mmlockscope: make mmap_lock contention visible.  `make help` lists targets.
SHELL := /bin/bash
TOP := $(CURDIR)

# Experiment parameters (see README.md); passed to the scripts as environment.
SIZE_MB ?= 1024
REPS ?= 3
MODES ?= exclusive downgrade section
KCONFIG ?=
SCRIPT ?= munmap_phases
export SIZE_MB REPS MODES

KVARIANT := $(if $(KCONFIG),--variant $(KCONFIG))

.PHONY: help deps kernel tools workloads shell test report trace bench live \
	check-patches clean distclean

help:
	@echo "mmlockscope targets:"
	@echo "  make report      set up everything, run the before/after experiment, write report/"
	@echo "                   (SIZE_MB=$(SIZE_MB) REPS=$(REPS) MODES=\"$(MODES)\" OUT=$(or $(OUT),report))"
	@echo "  make test        set up everything and run the test suite (tests/run)"
	@echo "  make deps        install missing Debian packages (scripts/deps)"
	@echo "  make kernel      build the patched 6.1 kernel into the cache (KCONFIG=debug: debug variant)"
	@echo "  make tools       build the libbpf tools in bpf/"
	@echo "  make workloads   build the workloads in workloads/bin/"
	@echo "  make shell       interactive root shell in the guest"
	@echo "  make trace       run a bpftrace script in the guest next to a workload (SCRIPT=$(SCRIPT))"
	@echo "  make bench       tracing overhead benchmark (scripts/bench-overhead)"
	@echo "  make live        guest with mmlockstat --prometheus forwarded to the host"
	@echo "  make check-patches  checkpatch.pl --strict on kernel-patches/"
	@echo "  make clean       remove build outputs in the checkout (the kernel cache stays)"

deps:
	@scripts/deps

kernel: deps
	@scripts/build-kernel $(KVARIANT) >/dev/null

tools: kernel
	@$(MAKE) -s -C bpf

workloads: deps
	@$(MAKE) -s -C workloads

shell: tools workloads
	@scripts/vm-run --shell

test: tools workloads
	@tests/run

report: tools workloads
	@OUT=$(or $(OUT),report) scripts/report

trace: tools workloads
	@scripts/trace $(SCRIPT)

bench: tools workloads
	@$(if $(OUT),OUT=$(OUT)) scripts/bench-overhead

live: tools workloads
	@scripts/live

check-patches: kernel
	@scripts/check-patches

clean:
	-@$(MAKE) -s -C bpf clean 2>/dev/null
	-@$(MAKE) -s -C workloads clean 2>/dev/null
	rm -rf tests/bin test-out

# Anything else is a typo: say so in one line.
%:
	@echo "make: unknown target '$@' (try 'make help')" >&2; exit 2
