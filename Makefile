# wo — the two commands of the README are `make demo` and `make test`.
GO      ?= go
DEMO    := $(CURDIR)/.demo
WO      := $(CURDIR)/bin/wo
export GOFLAGS := -buildvcs=false
WOENV   := XDG_STATE_HOME=$(DEMO)/state WO_STORE=

.PHONY: build demo tour test test-stress test-long test-arango fuzz fuzz-brief bench bench-compare vet fmt-check clean cross docs lint-workflows mutate metrics

# wo --version: the checkout's git describe (GOFLAGS above turns off Go's
# own VCS stamping, which a build outside make uses instead).
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)

build:
	$(GO) build -ldflags "-X github.com/wo-runner/wo/commands.Version=$(VERSION)" -o $(WO) .
	$(GO) build -o bin/gh-standin ./integration/ghstandin/cmd/gh-standin

# The main job on the embedded store, in a throw-away folder: import the
# fixture epic, show task_cr_01 and list the epic; then run a review
# procedure for real (scripts/demo-review.sh), against a local repository
# and bare remote that it makes and the GitHub stand-in (a test double of
# GitHub): the plan, an interrupt and the resume, the pull request with its
# stack table and the review's comments, the fix, the log, the epic's
# status and what wo undo would take back.
demo: build
	@rm -rf $(DEMO) && mkdir -p $(DEMO)
	@$(GO) build -o $(DEMO)/prview ./scripts/prview
	@echo "== wo import fixtures/hermes-review.json: an example epic"
	@$(WOENV) $(WO) import fixtures/hermes-review.json
	@echo; echo "== wo show task_cr_01: its work order, every value filled in"
	@$(WOENV) $(WO) show task_cr_01
	@echo; echo "== wo list --parent task_cr_epic"
	@$(WOENV) $(WO) list --parent task_cr_epic
	@./scripts/demo-review.sh $(DEMO) $(WO) $(CURDIR)/bin/gh-standin $(DEMO)/prview

# The tour (docs/tour.md) and every guide's runnable example, as a reader
# would run them (integration/tour_test.go; make test runs it too).
tour:
	$(GO) test -count=1 -run '^TestTheTourAndTheGuidesRunAsWritten$$' ./integration/

# Every test but the long checks; then the ArangoDB conformance run once
# more in verbose mode so that its skip reason (or its results) is printed.
# The integration tests run several at a time per core (their TestMain sets
# -parallel unless given): most of their time is spent waiting on wo, git
# and the GitHub stand-in.
# Each part runs whatever an earlier one did; the failures are listed at
# the end, all of them, and make test fails if any part did. The time limit
# is a net for a hung test, not a measure of speed: on a machine busy with
# other work the integration tests take well over go test's default ten
# minutes.
test:
	@failed=; \
	$(GO) test -count=1 -timeout 30m ./... || failed="$$failed go-test"; \
	$(MAKE) --no-print-directory test-arango || failed="$$failed test-arango"; \
	$(MAKE) --no-print-directory fuzz-brief || failed="$$failed fuzz-brief"; \
	echo "== make test left out the long checks ($(LONG_TESTS)): make test-long runs them"; \
	if [ -n "$$failed" ]; then echo "== make test: these parts failed:$$failed"; exit 1; fi; \
	echo "== make test: every part passed"

# The suite under load: ROUNDS rounds (default 10) of two make test at
# once, each in a fresh clone (scripts/test-stress.sh); about ten minutes a
# round on two cores.
test-stress:
	@ROUNDS=$(or $(ROUNDS),10) ./scripts/test-stress.sh

# The long checks: tests that call longTest skip, saying why, unless
# WO_TEST_LONG is set. A test that calls it is added here; CI runs
# make test, then make test-long.
LONG_TESTS := TestRealModuleSplitsIntoStackedPRsThatEachBuild
empty :=
space := $(empty) $(empty)
LONG_PKGS  := ./split/
test-long:
	WO_TEST_LONG=1 $(GO) test -count=1 -v -run '^($(subst $(space),|,$(strip $(LONG_TESTS))))$$' $(LONG_PKGS)

# Fuzz targets (package:function) over what wo reads from outside: the
# document decoder and validator, templates, agent output, hand-written
# plans, the manifest path checks, and terminal escaping. make test runs
# each for FUZZTIME_BRIEF; make fuzz for FUZZTIME. Crashers land in the
# package's testdata/fuzz and then run as ordinary tests. Minimizing each
# new input is capped at 5s: left at Go's 60s, minimizing the larger
# documents took the whole run.
FUZZ_TARGETS := ./workorder:FuzzDecodeValidate ./workorder:FuzzRender ./workorder:FuzzCheckRelativePath \
	./procedure/action:FuzzExtractDeliverable ./split:FuzzParseHandPlan ./gitops:FuzzCheckInside ./termtext:FuzzLine ./termtext:FuzzFitWrap ./reviewer:FuzzParseBody
FUZZTIME_BRIEF ?= 3s
FUZZTIME ?= 60s

fuzz-brief:
	@$(MAKE) --no-print-directory fuzz FUZZTIME=$(FUZZTIME_BRIEF)

# Go's fuzzer sometimes fails a run with only "context deadline exceeded"
# when its time runs out while it is handling a new input (no failing
# input is written): that is the toolchain's, not a finding, and the
# target runs once more. A real finding names its failing input and fails.
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; fn=$${t##*:}; \
		echo "== fuzz $$fn in $$pkg for $(FUZZTIME)"; \
		if ! $(GO) test -list "^$$fn\$$" $$pkg | grep -qx "$$fn"; then \
			echo "$$pkg has no fuzz target $$fn (moved?): fix FUZZ_TARGETS in the Makefile"; exit 1; fi; \
		if ! out=$$($(GO) test -run '^$$' -fuzz "^$$fn\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 5s $$pkg 2>&1); then \
			echo "$$out"; \
			if echo "$$out" | grep -q "context deadline exceeded" && ! echo "$$out" | grep -q "Failing input"; then \
				echo "== $$fn: the fuzzer's own deadline ran out, with no failing input; once more"; \
				$(GO) test -run '^$$' -fuzz "^$$fn\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 5s $$pkg; \
			else exit 1; fi; \
		else echo "$$out"; fi; \
	done

test-arango:
	$(GO) test -count=1 -v -run '^TestArangoConformance$$' ./integration/

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# wo against its baselines, in one table: every figure is the median of
# per-pair ratios from alternating pairs measured in this run (the disk
# settled between sides), so that a busy machine moves both sides alike.
# WO_BENCH_PAIRS pairs each (default 5); about 5 minutes, most of it
# building the 30,000-file repository. Figures go in docs/BENCHMARKS.md.
WO_BENCH_PAIRS ?= 5
bench-compare:
	@{ $(GO) test -count=1 -run '^TestAStepCostsTwoStoreRequests$$' -v ./procedure/; \
	  WO_BENCH_PAIRS=$(WO_BENCH_PAIRS) $(GO) test -run '^$$' -bench '^BenchmarkStatusEpic1000$$' -benchtime 1x ./commands/; \
	  WO_BENCH_PAIRS=$(WO_BENCH_PAIRS) $(GO) test -run '^$$' -bench '^BenchmarkWorktreeCreate5k$$' -benchtime 1x ./gitops/; \
	  WO_BENCH_PAIRS=$(WO_BENCH_PAIRS) $(GO) test -run '^$$' -bench '^Benchmark(GitHalfRealHistory|StatusShowProcess|WorktreeCheckoutCommit30k)$$' \
	    -benchtime 1x -timeout 20m ./integration/; } 2>&1 | $(GO) run ./scripts/benchtable

vet:
	$(GO) vet ./...

# The code's figures (cyclomatic complexity ≤ 30, functions over 60 lines
# ≤ 3%, no interface over 12 methods, procedure/ ≤ 3,000 lines, no gitops
# in commands, no workorder in gitops), from scripts/codemetrics, each said
# met or NOT MET; a broken one fails the build (METRICS_FLAGS= for a report
# only).
METRICS_FLAGS ?= -check
metrics:
	$(GO) run ./scripts/codemetrics -top 10 $(METRICS_FLAGS)

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

clean:
	rm -rf bin $(DEMO)

# The example workflows of docs/ci through actionlint, at the version that
# tools/go.mod pins (go tool runs it from the module cache); make test runs
# it too, as TestExampleWorkflowsPassActionlint in integration/.
lint-workflows:
	cd tools && $(GO) tool actionlint ../docs/ci/*.yml

# docs/cli.md is generated from the commands' own definitions, and the
# field and action reference in docs/work-order.md from the table the
# validator checks documents against; tests in commands/ fail when either
# is out of date.
docs:
	$(GO) run ./scripts/gencli > docs/cli.md
	$(GO) run ./scripts/gencli -fields docs/work-order.md
	$(GO) run ./scripts/gencli -json docs/json

# Build and vet for every release target. The end-to-end tests (integration/)
# need a unix host (signals, process groups) and are not vetted for Windows.
# The os.Root fallback that Windows uses for confined worktree writes also
# runs gitops's tests here, on this host (tag wo_osroot).
CROSS_TARGETS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64
cross:
	@set -e; for t in $(CROSS_TARGETS); do \
		os=$${t%/*}; arch=$${t#*/}; pkgs=./...; \
		if [ $$os = windows ]; then pkgs=$$($(GO) list ./... | grep -v '/integration$$'); fi; \
		echo "== $$os/$$arch: build, vet"; \
		GOOS=$$os GOARCH=$$arch $(GO) build ./...; \
		GOOS=$$os GOARCH=$$arch $(GO) vet $$pkgs; \
	done
	@echo "== gitops with the os.Root fallback (-tags wo_osroot)"
	$(GO) test -count=1 -tags wo_osroot ./gitops

# Mutation testing with gremlins (pinned in tools/go.mod), one package at a
# time: make mutate PKG=./reviewer. Most packages' unit tests run in well
# under a second, so the timeout coefficient is raised (30): at gremlins'
# default a loaded machine calls mutants "timed out" that the tests would
# kill.
# Each mutant is a build of the package's tests and a run of them, and on
# a large package the build is most of it: the mutated package is compiled
# without inlining or debug information and linked without symbols, and go
# vet (which go test runs first) is left out, so that a mutant must be
# caught by the tests alone. On procedure that is 3.1 s of CPU a mutant
# for the build, was 5.0 s. The long checks stay out (WO_TEST_LONG unset).
# The tests' temporary folders go on tmpfs (MUTATE_TMP, /dev/shm where the
# machine has it): the tests make thousands of files, and on a disk that
# is half their time (procedure/action: 2.5 s a run there, 4.8 s on ext4).
# A mutant that makes a loop endless (an agent's process group waited
# for) runs until the timeout, the coefficient times the package's test
# time: for the packages whose tests take seconds rather than a fraction of
# one, 3 (procedure/action: about 20 s), so that each such mutant does not
# hold a worker for minutes.
PKG ?= ./workorder
MUTATE_WORKERS ?= 2
MUTATE_TMP ?= /dev/shm
MUTATE_COEFFICIENT ?= $(if $(filter ./procedure ./procedure/action,$(PKG)),3,30)
MUTATE_GOFLAGS := $(GOFLAGS) -vet=off "-gcflags=-l -dwarf=false" "-ldflags=-s -w"
mutate:
	cd tools && $(GO) build -o ../bin/gremlins github.com/go-gremlins/gremlins/cmd/gremlins
	@tmp=$$(mktemp -d "$(MUTATE_TMP)/wo-mutate-XXXXXX" 2>/dev/null || mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	echo "gremlins on $(PKG), temporary folders in $$tmp"; \
	TMPDIR=$$tmp GOFLAGS='$(MUTATE_GOFLAGS)' WO_TEST_LONG= bin/gremlins unleash --workers $(MUTATE_WORKERS) --timeout-coefficient $(MUTATE_COEFFICIENT) $(PKG)
