# tenzrod — the two commands: `make devnet` and `make test`.
GO        ?= go
BIN       := bin/tenzrod
FUZZTIME  ?= 3000x
FUZZBUDGET ?= 30s
DEVNET_DIR ?= .devnet
DIST      ?= dist
VERSION   ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
COMMIT    ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
LDFLAGS   := -X github.com/tenzrod/tenzrod/node.Version=$(VERSION) -X main.buildCommit=$(COMMIT)

.PHONY: all build devnet test vet lint unit properties fuzz bench clean release image check-packaging

all: build

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/tenzrod

## devnet: 4 validators (one may fail), 3 providers and a gateway on loopback (Ctrl-C stops them all)
devnet: build
	./$(BIN) devnet --dir $(DEVNET_DIR) --validators 4 --providers 3 --gateways 1

## test: go vet, every test under the race detector, the property tests at full count without it, then a short pass of every fuzz target
test: vet unit properties fuzz

# Each stage says how long it took (CI's log is the timing report).
timed = @start=$$(date +%s); $(1) || exit $$?; echo "make $(2): $$(( $$(date +%s) - start ))s"

# vet builds with -race so that it shares every compiled package with
# `unit` (a plain `go vet` compiles the whole tree, test dependencies
# included, a second time).
vet:
	$(call timed,$(GO) vet -race ./...,vet)

## lint: golangci-lint with .golangci.yml (.ci/run installs the pinned version)
lint:
	$(call timed,golangci-lint run ./...,lint)

unit:
	$(call timed,$(GO) test -race -count=1 -timeout 30m ./...,unit)

# properties: the property tests whose acceptance counts (10^5 random
# plans) are cut under the race detector; they run here in full.
properties:
	$(call timed,$(GO) test -count=1 -run 'TestPlanProperty' ./consensus/ledger/,properties)

fuzz:
	$(call timed,FUZZTIME=$(FUZZTIME) FUZZBUDGET=$(FUZZBUDGET) scripts/fuzz-short,fuzz)

## bench: the benchmarks named in the issues (figures, not assertions)
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./gossip/ ./receipts/...

## release: static binaries for linux/darwin x amd64/arm64 in dist/, with a CycloneDX SBOM each and SHA256SUMS
release:
	$(call timed,GO=$(GO) VERSION=$(VERSION) COMMIT=$(COMMIT) DIST=$(DIST) packaging/release,release)

## image: the container image tenzrod:$(VERSION) (docker, else podman)
image:
	$$(command -v docker || command -v podman) build --build-arg VERSION=$(VERSION) --build-arg COMMIT=$(COMMIT) -t tenzrod:$(VERSION) .

## check-packaging: systemd-analyze verify on the units; the image built and its /healthz asked, when a container tool can
check-packaging:
	$(call timed,GO=$(GO) packaging/check,check-packaging)

clean:
	rm -rf bin $(DEVNET_DIR) $(DIST)
