# go-curator: build, check and test.
#
# The repository is one clone with several Go modules, joined by go.work:
#   .            the library (github.com/go-curator/curator)
#   zktest/      the public test package: real ZooKeeper servers for tests
#   zktest/docker/       opt-in: zktest's servers in Docker (testcontainers-go)
#   integration/ tests against real ZooKeeper and Java Curator
#   examples/    runnable demos
#   bench/       benchmarks against the peers
#   cmd/curatorctl/      the operator's command line tool
#   contrib/prometheus/  the metrics adapter for Prometheus
#
#   make deps     install what the tests need (Debian: zookeeper, Curator, Kazoo)
#   make fmt      fail if gofmt would change a file
#   make vet      go vet, every module
#   make tidy     fail if go mod tidy would change any module
#   make sums     go mod tidy every module (after a change to a published
#                 module, its dependents' go.sum lines for it change)
#   make oldgo    vet every published module with the Go of its go line, and
#                 unit-test the library and zktest with it
#   make consumer install curatorctl and build consumer modules from a module
#                 proxy built from the checkout, as users get them; check
#                 their module graphs and take a mutex in a consumer's test
#   make test     all tests with -race against real ZooKeeper; prints N passed, N failed, N skipped
#   make demo     run the stock demo (installs only ZooKeeper)
#   make bench    run the benchmarks against the peers
#   make fuzz     run every Go fuzz target for FUZZTIME (default 5s) each
#   make chaos    the long chaos soak (CHAOS_DURATION, default 10m)
#
# The published modules (., zktest, zktest/docker, contrib/prometheus,
# cmd/curatorctl) require each other at the next release's version, with no
# replace lines (RELEASING.md); go.work joins the modules for development,
# and tidy, sums, oldgo and consumer serve the repository's modules from a
# proxy directory built from the checkout (.ci/modules).
#
# ZK_TEST_REQUIRE=1 (the default here) makes a test fail, not skip, when no
# ZooKeeper can be started; override with `make test ZK_TEST_REQUIRE=0`.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c

GO ?= go
ZK_TEST_REQUIRE ?= 1
export ZK_TEST_REQUIRE

# Every package of every module in the workspace.
ALL := github.com/go-curator/curator/...

TEST_PACKAGES := zookeeper libcurator-recipes-java libcurator-discovery-java python3-kazoo iptables
DEMO_PACKAGES := zookeeper

.PHONY: all test vet fmt tidy sums oldgo consumer deps demo-deps demo bench fuzz chaos

all: fmt vet tidy test

test: deps
	@tmp="$$(mktemp -d)"; trap 'rm -rf "$$tmp"' EXIT; \
	$(GO) build -o "$$tmp/testsum" github.com/go-curator/curator/zktest/cmd/testsum; \
	echo "ZK_TEST_REQUIRE=$$ZK_TEST_REQUIRE $(GO) test -race -count=1 -timeout 20m -json $(ALL) | testsum"; \
	$(GO) test -race -count=1 -timeout 20m -json $(ALL) | "$$tmp/testsum"

vet:
	$(GO) vet $(ALL)

fmt:
	@files="$$(gofmt -l .)"; \
	if [ -n "$$files" ]; then echo "gofmt needed on:"; echo "$$files"; exit 1; fi

tidy:
	@bash .ci/modules tidy

sums:
	@bash .ci/modules sums

oldgo:
	bash .ci/modules oldgo

consumer: deps
	bash .ci/consumer

define install
	missing=""; \
	for p in $(1); do \
		dpkg-query -W -f='$${Status}' "$$p" 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -z "$$missing" ]; then echo "deps: $(1) already installed"; exit 0; fi; \
	sudo=""; [ "$$(id -u)" -eq 0 ] || sudo="sudo"; \
	echo "deps: installing$$missing"; \
	$$sudo apt-get update; \
	$$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y $$missing
endef

deps:
	@$(call install,$(TEST_PACKAGES))

demo-deps:
	@$(call install,$(DEMO_PACKAGES))

demo: demo-deps
	$(GO) run github.com/go-curator/curator/examples/stock

bench: deps
	$(GO) run github.com/go-curator/curator/bench

FUZZTIME ?= 5s

fuzz:
	@for pkg in $$($(GO) list $(ALL)); do \
		list="$$($(GO) test -list '^Fuzz' "$$pkg")" || { echo "$$list"; exit 1; }; \
		for f in $$(echo "$$list" | grep '^Fuzz' || true); do \
			echo "fuzz $$pkg $$f for $(FUZZTIME)"; \
			$(GO) test -run '^$$' -fuzz "^$$f\$$" -fuzztime $(FUZZTIME) "$$pkg" >/dev/null || { \
				echo "fuzz $$f failed; running it again (a real failure is saved under testdata/fuzz and fails again)"; \
				$(GO) test -run '^$$' -fuzz "^$$f\$$" -fuzztime $(FUZZTIME) "$$pkg" || exit 1; }; \
		done; \
	done

CHAOS_DURATION ?= 10m

chaos: deps
	CHAOS_DURATION=$(CHAOS_DURATION) $(GO) test -race -count=1 -timeout 60m -run '^TestChaos_' -v github.com/go-curator/curator/integration | grep -E '^(=== RUN|--- |\s+chaos.*acquisitions|ok|FAIL|PASS)'
