# zkrecipes: `make test` runs everything CI runs; `make demo` shows the recipes.
GO          ?= go
# A tool's verdict is its exit status. No target reads what a tool prints
# on stderr, where go run says "go: downloading …" on a machine whose module
# cache lacks the tool (issue 27); make lint-fresh runs lint as such a
# machine does, and .ci/run runs it so.
STATICCHECK := $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2
# The public API of the last release, which every change must stay
# compatible with (make api); make api-export writes it at a release.
# api/ holds it twice: v0.1.0.api, apidiff's export data (binary), and
# v0.1.0.txt, its listing, one declaration a line, for a reviewer's diff;
# the check fails if they disagree. The checker is a module of its own
# (api/go.mod) that runs apidiff as a library, pinned by its go.sum and
# kept out of the library's go.mod, which every user's module graph reads.
# A listing alone would need a checker of our own; a baseline built from
# the v0.1.0 commit would need history that a shallow clone lacks.
APIBASE     := v0.1.0
LINT        ?= lint
# The packages users import, and the internal ones their docs must not name.
PUBLIC      := . ./locks ./barriers ./election ./zktest
INTERNAL    := args|jute|layout|recipe|seqnode|telemetry|testenv|zkserver|znode|zpath|curatortest|eventlog
# A count, not a duration: a duration-bounded fuzz run can fail at its
# deadline under load with no crasher (go.dev/issue/75804, unfixed in Go 1.26).
FUZZTIME    ?= 100000x
BENCHCOUNT  ?= 5
BENCHDELAY  ?= 250us
# The most functions, and packages, the free path may cross (make enginepath).
ENGINEPATH_LIMITS := -max-chain 20 -max-chain-pkgs 3

.PHONY: test deps lint lint-fresh api api-export unit fuzz bench demo chaos soak enginepath

## test: lint, the whole suite with the race detector (real ZooKeeper), fuzz smoke
# .ci/run sets LINT=lint-fresh.
test: deps $(LINT) unit fuzz
	@# A free Mutex.Lock and its Release cross at most 20 functions that
	@# call another, in at most 3 packages besides the root (issue 28).
	@out=$$($(GO) run ./tools/enginepath $(ENGINEPATH_LIMITS) 2>&1) || { printf '%s\n' "$$out"; exit 1; }; \
		printf '%s\n' "$$out" | tail -1

## deps: Debian's ZooKeeper, Curator (for the interop tests) and a JDK
deps:
	@pkgs=; \
	test -f /usr/share/java/zookeeper.jar || pkgs="$$pkgs zookeeper"; \
	test -f /usr/share/java/curator-recipes.jar || pkgs="$$pkgs libcurator-recipes-java"; \
	command -v javac >/dev/null || pkgs="$$pkgs default-jdk-headless"; \
	if [ -n "$$pkgs" ]; then \
		echo "installing Debian packages:$$pkgs"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$pkgs; \
	fi

lint:
	@out=$$(gofmt -l .) || exit 1; if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(STATICCHECK) ./...
	$(GO) fix -diff ./...
	$(GO) mod verify
	cd examples/testkit && $(GO) vet ./... && $(STATICCHECK) ./... && $(GO) mod verify
	cd api && $(GO) vet ./... && $(STATICCHECK) ./... && $(GO) mod verify
	@$(MAKE) --no-print-directory api
	@# No package sets a value in another at init; no shipped file is over
	@# 400 lines (issue 28).
	$(GO) run ./tools/enginepath -check -init-wiring -long-files 400
	@# The documentation of what users import names no internal package.
	@for p in $(PUBLIC); do \
		doc=$$($(GO) doc -all $$p) || exit 1; \
		if printf '%s\n' "$$doc" | grep -nE '\binternal/|\b($(INTERNAL))\.[A-Z]'; then \
			echo "go doc $$p names an internal package (above)"; exit 1; fi; done

## lint-fresh: lint with an empty module cache, as on a fresh machine (about a minute: 100 MB of modules)
lint-fresh:
	@cache=$$(mktemp -d); start=$$(date +%s); \
	GOMODCACHE=$$cache $(MAKE) --no-print-directory lint; rc=$$?; \
	GOMODCACHE=$$cache $(GO) clean -modcache; rm -rf $$cache; \
	echo "lint-fresh: $$(($$(date +%s) - start)) s with an empty module cache"; exit $$rc

## api: fail on any change to the public API incompatible with the last release
# The suites and tools (tests/, tools/) are not API, though importable.
api:
	cd api && $(GO) run . -root .. $(APIBASE)

## api-export: at a release, write the new baseline (set APIBASE to it)
api-export:
	cd api && $(GO) run . -root .. -export $(APIBASE)

# Goroutine leaks (goleak) and leftover znodes (zktest.Root) are checked
# inside the tests themselves.
unit:
	$(GO) test -race -shuffle=on -count=1 -timeout 20m ./...
	@# Tests built without the race detector only (//go:build !race): see
	@# tests/integration/request_drop_norace_test.go.
	$(GO) test -count=1 -timeout 10m -run '^TestConcurrentDroppedRequestsKeepTheSession$$' ./tests/integration/
	@# A module of its own that uses the public test kit as a user's would.
	cd examples/testkit && $(GO) test -race -shuffle=on -count=1 ./...

fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzSort$$' -fuzztime $(FUZZTIME) ./internal/seqnode/
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./internal/seqnode/

## bench: performance against the baselines measured in the same run, then all but the queue with BENCHDELAY each way
# ZKBENCH_MAX_WAITERS and ZKBENCH_MAX_MIB bound BenchmarkQueue (see bench/README.md).
# Each of the BENCHCOUNT runs is a whole pass, in turn, not -count: a slow
# spell of the machine then hits every benchmark of a pass alike, not all the
# runs of one. ZKBENCH_PASS starts each pass's lockers at a different one.
# A failed pass fails the target: tee's status is not the passes'.
bench: deps
	{ ( for i in $$(seq $(BENCHCOUNT)); do \
		ZKBENCH_PASS=$$i $(GO) test -run '^$$' -bench . -benchmem -count 1 -timeout 3h ./bench/ || exit; done; \
	for i in $$(seq $(BENCHCOUNT)); do \
		ZKBENCH_PASS=$$i ZKBENCH_DELAY=$(BENCHDELAY) $(GO) test -run '^$$' \
			-bench '^Benchmark(Uncontended|Contended|ReadHeavy|Semaphore|DoubleBarrier|MultiLock)' -benchmem \
			-count 1 -timeout 1h ./bench/ || exit; done ); echo $$? > bench.rc; } | tee bench.txt; \
	rc=$$(cat bench.rc); rm -f bench.rc; [ "$$rc" = 0 ] || exit $$rc
	$(GO) run ./bench/ratio < bench.txt

## demo: the README's first command: the CLI's demo against a throwaway local ZooKeeper
demo:
	$(GO) run ./tools/withzk -- $(GO) run ./cmd/zkrecipes demo

## enginepath: the functions, files and packages a free Mutex.Lock and its Release run through (issue 28), under a throwaway local ZooKeeper
# It fails past ENGINEPATH_LIMITS, the counts of the chain reached from Lock
# and Release (not all that ran: the session's goroutines run too), which
# make test checks too; go run ./tools/enginepath -init-wiring and
# -long-files N count the rest.
enginepath:
	$(GO) run ./tools/enginepath $(ENGINEPATH_LIMITS)

## soak: the million-section soak of docs/faults.md, and the run beside Curator (up to about 2 h 15 min)
# SOAK_DURATION, SOAK_SECTIONS, SOAK_EPOCH, SOAK_PROCS, SOAK_GAP,
# SOAK_ROLL_GAP, SOAK_SIZES and COMPARE_RUN size and tune it; the report
# (soak.md, compare.md), the picture (soak.svg, soak.png) and any failing
# epoch's timeline with porcupine's pictures go to SOAK_OUT (soak-out/),
# the log to soak.txt. SOAK_KEEP=1 keeps every timeline.
SOAK_OUT ?= $(CURDIR)/soak-out
soak: deps
	@mkdir -p $(SOAK_OUT); { SOAK_LONG=1 SOAK_OUT=$(SOAK_OUT) $(GO) test -count=1 -timeout 4h -v \
		-run '^(TestSoak|TestSoakBesideCurator)$$' ./tests/chaos/ 2>&1; \
		echo $$? > soak.rc; } | tee soak.txt; rc=$$(cat soak.rc); rm -f soak.rc; exit $$rc

## chaos: the long fault run of docs/faults.md (>= 10,000 critical sections in 8 processes)
# CHAOS_PROCS, CHAOS_SECTIONS (per scenario), CHAOS_ROUNDS, CHAOS_CUTS and
# CHAOS_KEEP=dir (keep timelines) size and tune it; the result goes to chaos.txt.
chaos: deps
	@{ CHAOS_LONG=1 $(GO) test -count=1 -timeout 3h -v -run '^(TestFaults|TestNoLockIsFlagged)$$' ./tests/chaos/ 2>&1; \
		echo $$? > chaos.rc; } | tee chaos.txt; rc=$$(cat chaos.rc); rm -f chaos.rc; exit $$rc
