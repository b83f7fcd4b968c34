package layout

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/tenzrod/tenzrod"

// pkg is the part of `go list -json` the rules read.
type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
	Standard   bool
}

// listPackages lists the module's packages (tests' imports are not the
// production graph, so they are left out).
func listPackages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", module+"/...")
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v: %s", err, stderr.String())
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 20 {
		t.Fatalf("go list found %d packages of %s; run from the repository", len(pkgs), module)
	}
	return pkgs
}

// rel is a package path inside the module ("node/rpc"), or "" outside it.
func rel(path string) string {
	if path == module {
		return "."
	}
	if s, ok := strings.CutPrefix(path, module+"/"); ok {
		return s
	}
	return ""
}

// under reports whether a module-relative path is dir or inside it.
func under(p, dir string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }

// isStd reports whether an import path is the standard library's (no dot
// in its first element).
func isStd(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

// TestImportRules checks the one-way flow of Layout against the module's
// real import graph.
func TestImportRules(t *testing.T) {
	for _, p := range listPackages(t) {
		from := rel(p.ImportPath)
		for _, imp := range p.Imports {
			to := rel(imp)
			if to == "" {
				continue
			}
			if msg := forbidden(from, to); msg != "" {
				t.Errorf("%s imports %s: %s", from, to, msg)
			}
		}
		switch {
		case from == "node/rpc" || from == "receipts/terms":
			// Leaves every part may import: the standard library and
			// nothing of the module but terms' own vocabulary.
			for _, imp := range p.Imports {
				if !isStd(imp) && rel(imp) != "receipts/terms" && !strings.HasPrefix(imp, "github.com/fxamacker/cbor") {
					t.Errorf("%s imports %s: it is a leaf (standard library only)", from, imp)
				}
			}
		case under(from, "consensus/ledger"):
			for _, d := range p.Deps {
				if strings.HasPrefix(d, "github.com/cometbft/") {
					t.Errorf("%s depends on %s: the state machine stays free of CometBFT", from, d)
				}
			}
		}
	}
}

// forbidden names why a production import breaks Layout, or "" when it
// does not.
func forbidden(from, to string) string {
	switch {
	case to == "node" && !under(from, "cmd"):
		return "only cmd assembles a node"
	case under(to, "node") && to != "node/rpc" && !under(from, "node") && !under(from, "cmd"):
		return "the roles and routes under node/ are assembled by node, not imported by the parts"
	case under(to, "cmd") && !under(from, "cmd") && from != "node/attacktest":
		// The attack harness drives the shell's client as an operator would.
		return "nothing but a command (or the attack harness) imports a command"
	case under(from, "receipts") && !under(to, "receipts") && !under(to, "internal"):
		return "receipts is the bottom layer: it imports only receipts and internal"
	case under(from, "inference") && (under(to, "consensus") || under(to, "router") || under(to, "p2p") || under(to, "gossip")):
		return "the engine knows nothing of the market"
	}
	return ""
}

// TestForbiddenCatchesBreaks keeps the rule table honest: each rule
// refuses an import that breaks it and allows one that does not.
func TestForbiddenCatchesBreaks(t *testing.T) {
	for _, c := range []struct {
		from, to string
		bad      bool
	}{
		{"router/gateway", "node", true},
		{"cmd/tenzrod", "node", false},
		{"router/gateway", "node/rpc", false},
		{"router/gateway", "node/provider", true},
		{"node/validator", "node/provider", false},
		{"receipts/receipt", "consensus/ledger", true},
		{"receipts/store", "internal/pebbleopt", false},
		{"inference/llm", "router", true},
		{"node", "cmd/tenzrod", true},
		{"cmd/chaos", "cmd/tenzrod/devnet", false},
	} {
		if got := forbidden(c.from, c.to) != ""; got != c.bad {
			t.Errorf("forbidden(%s, %s) = %v, want %v", c.from, c.to, got, c.bad)
		}
	}
}
