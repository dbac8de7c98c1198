# wo — the two commands of the README are `make demo` and `make test`.
GO      ?= go
DEMO    := $(CURDIR)/.demo
WO      := $(CURDIR)/bin/wo
export GOFLAGS := -buildvcs=false
WOENV   := XDG_STATE_HOME=$(DEMO)/state WO_STORE=
DEMOGIT := git -C $(DEMO)/repo -c user.name="wo demo" -c user.email=demo@example.com

.PHONY: build demo test test-arango bench vet fmt-check clean

build:
	$(GO) build -o $(WO) .

# The main job on the embedded store, in a throw-away folder: import the
# fixture epic, validate, show and list the seed's task_cr_01; then run the
# git part of a work order for real, against a local repository and a bare
# remote that it makes (GitHub steps need the GitHub client: see README).
demo: build
	rm -rf $(DEMO) && mkdir -p $(DEMO)
	@echo "== wo import fixtures/hermes-review.json"
	$(WOENV) $(WO) import fixtures/hermes-review.json
	@echo "== wo validate task_cr_01"
	$(WOENV) $(WO) validate task_cr_01
	@echo "== wo show task_cr_01"
	$(WOENV) $(WO) show task_cr_01
	@echo "== wo list --parent task_cr_epic"
	$(WOENV) $(WO) list --parent task_cr_epic
	@echo "== a local repository with a base branch, a change on main, and a bare remote"
	git init -q -b main $(DEMO)/repo
	mkdir -p $(DEMO)/repo/internal/config $(DEMO)/repo/internal/types
	echo "# demo" > $(DEMO)/repo/README.md
	$(DEMOGIT) add -A && $(DEMOGIT) commit -q -m base && $(DEMOGIT) branch code-review-base
	printf 'package config\n\n// Port is where the service listens.\nconst Port = 8080\n' > $(DEMO)/repo/internal/config/config.go
	printf 'package types\n\n// ID names a task.\ntype ID string\n' > $(DEMO)/repo/internal/types/types.go
	$(DEMOGIT) add -A && $(DEMOGIT) commit -q -m "the big change"
	git init -q --bare $(DEMO)/origin.git
	$(DEMOGIT) remote add origin $(DEMO)/origin.git && $(DEMOGIT) push -q origin code-review-base
	sed 's|@DEMO@|$(DEMO)|g' fixtures/demo-git.json > $(DEMO)/demo-git.json
	@echo "== wo import, then wo run --dry-run, then wo run"
	$(WOENV) $(WO) import $(DEMO)/demo-git.json
	$(WOENV) $(WO) run task_demo_01 --dry-run
	$(WOENV) $(WO) run task_demo_01
	@echo "== the result, as git sees it"
	git -C $(DEMO)/origin.git log --oneline review/01-foundation
	git -C $(DEMO)/repo worktree list
	$(WOENV) $(WO) log task_demo_01

# Every test; then the ArangoDB conformance run once more in verbose mode so
# that its skip reason (or its results) is printed.
test:
	$(GO) test -count=1 ./...
	$(MAKE) --no-print-directory test-arango

test-arango:
	$(GO) test -count=1 -v -run '^TestArangoConformance$$' ./integration/

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

clean:
	rm -rf bin $(DEMO)
