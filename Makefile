# tenzrod — the two commands: `make devnet` and `make test`.
GO        ?= go
BIN       := bin/tenzrod
FUZZTIME  ?= 3000x
FUZZBUDGET ?= 30s
DEVNET_DIR ?= .devnet
VERSION   ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -X github.com/tenzrod/tenzrod/node.Version=$(VERSION)

.PHONY: all build devnet test vet lint unit properties fuzz bench clean

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

clean:
	rm -rf bin $(DEVNET_DIR)
