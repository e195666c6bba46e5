# go-curator: build, check and test.
#
#   make deps    install what the tests need (Debian: zookeeper, Curator, Kazoo)
#   make fmt     fail if gofmt would change a file
#   make vet     go vet
#   make tidy    fail if go mod tidy would change go.mod or go.sum
#   make test    all tests with -race against real ZooKeeper; prints N passed, N failed, N skipped
#   make demo    run the client demo
#   make bench   run the benchmarks against the peers
#   make fuzz    run every Go fuzz target for FUZZTIME (default 5s) each
#   make chaos   the long chaos soak (CHAOS_DURATION, default 10m)
#
# ZK_TEST_REQUIRE=1 (the default here) makes a test fail, not skip, when no
# ZooKeeper can be started; override with `make test ZK_TEST_REQUIRE=0`.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c

GO ?= go
ZK_TEST_REQUIRE ?= 1
export ZK_TEST_REQUIRE

DEB_PACKAGES := zookeeper libcurator-recipes-java python3-kazoo

.PHONY: all test vet tidy fmt deps demo bench fuzz chaos

all: fmt vet tidy test

test: deps
	@tmp="$$(mktemp -d)"; trap 'rm -rf "$$tmp"' EXIT; \
	$(GO) build -o "$$tmp/testsum" ./internal/zktest/cmd/testsum; \
	echo "ZK_TEST_REQUIRE=$$ZK_TEST_REQUIRE $(GO) test -race -count=1 -timeout 20m -json ./... | testsum"; \
	$(GO) test -race -count=1 -timeout 20m -json ./... | "$$tmp/testsum"

vet:
	$(GO) vet ./...

tidy:
	$(GO) mod tidy -diff

fmt:
	@files="$$(gofmt -l .)"; \
	if [ -n "$$files" ]; then echo "gofmt needed on:"; echo "$$files"; exit 1; fi

deps:
	@missing=""; \
	for p in $(DEB_PACKAGES); do \
		dpkg-query -W -f='$${Status}' "$$p" 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -z "$$missing" ]; then echo "deps: $(DEB_PACKAGES) already installed"; exit 0; fi; \
	sudo=""; [ "$$(id -u)" -eq 0 ] || sudo="sudo"; \
	echo "deps: installing$$missing"; \
	$$sudo apt-get update; \
	$$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y $(DEB_PACKAGES)

demo: deps
	$(GO) run ./examples/stock

bench: deps
	$(GO) run ./bench

FUZZTIME ?= 5s

fuzz:
	@for pkg in $$($(GO) list ./...); do \
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
	CHAOS_DURATION=$(CHAOS_DURATION) $(GO) test -race -count=1 -timeout 60m -run '^TestChaos_' -v ./integration/ | grep -E '^(=== RUN|--- |\s+chaos.*acquisitions|ok|FAIL|PASS)'
