package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tenzrod/tenzrod/cmd/tenzrod/devnet"
	"github.com/tenzrod/tenzrod/node"
)

// TestDevnetAddProviderFlags: each missing or wrong flag is named before
// anything is written.
func TestDevnetAddProviderFlags(t *testing.T) {
	empty := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--dir", empty}, "no running devnet"},
		{[]string{"--dir", empty, "--upstream-model", "m"}, "need --upstream"},
		{[]string{"--dir", empty, "--model-id", strings.Repeat("ab", 32)}, "need --upstream"},
		{[]string{"--dir", empty, "--upstream", "http://127.0.0.1:8080/v1"}, "--upstream-model"},
		{[]string{"--dir", empty, "--fund", "-5"}, "--fund"},
	} {
		_, err := runCLI(t, append([]string{"devnet", "add-provider"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error naming %q", c.args, err, c.want)
		}
	}
	if entries, _ := os.ReadDir(empty); len(entries) != 0 {
		t.Errorf("a refused add-provider left %d entries in --dir", len(entries))
	}
}

// TestAddedProviderShape: an added provider serves the devnet's model
// from the devnet's directory, or with --upstream the same catalog ID
// through the engine (the id rule: the ID of the weights, not the
// engine's name), and takes the first free provider-N name.
func TestAddedProviderShape(t *testing.T) {
	dir := t.TempDir()
	id, err := node.EnsureDevnetModel(filepath.Join(dir, "models", node.DevnetModelName))
	if err != nil {
		t.Fatal(err)
	}
	m := devnet.Manifest{Model: node.DevnetModelName, Nodes: []devnet.NodeEntry{{Name: "provider-0"}}}
	if err := os.Mkdir(filepath.Join(dir, "provider-1"), 0o700); err != nil {
		t.Fatal(err)
	}
	if name, err := nextProviderName(dir, m); err != nil || name != "provider-2" {
		t.Fatalf("next name %q, %v; want provider-2", name, err)
	}
	for _, o := range []addProviderOpts{{}, {upstream: "http://127.0.0.1:8080/v1", upstreamModel: "llama"}} {
		home := filepath.Join(t.TempDir(), "p")
		if out, err := runCLI(t, "init", "--home", home, "--role", "provider", "--key-backend", "software"); err != nil {
			t.Fatalf("init: %v\n%s", err, out)
		}
		if err := shapeAddedProvider(dir, home, m, o); err != nil {
			t.Fatal(err)
		}
		cfg, err := node.Load(home)
		if err != nil {
			t.Fatal(err)
		}
		mc := cfg.Provider.Models[0]
		if len(cfg.Provider.Models) != 1 || mc.ID != id || mc.Name != node.DevnetModelName {
			t.Fatalf("models %+v, want the devnet's %s", cfg.Provider.Models, id)
		}
		if o.upstream == "" && (mc.Engine != "embedded" || mc.Dir != filepath.Join(dir, "models", node.DevnetModelName)) {
			t.Errorf("embedded: %+v", mc)
		}
		if o.upstream != "" && (mc.Engine != "upstream" || mc.Dir != "" || mc.UpstreamURL != o.upstream || mc.UpstreamModel != "llama") {
			t.Errorf("upstream: %+v", mc)
		}
	}
	home := filepath.Join(t.TempDir(), "p")
	if out, err := runCLI(t, "init", "--home", home, "--role", "provider", "--key-backend", "software"); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	err = shapeAddedProvider(dir, home, m, addProviderOpts{upstream: "http://127.0.0.1:8080/v1", upstreamModel: "llama", modelID: "llama", modelName: "llama"})
	if err == nil || !strings.Contains(err.Error(), "id") {
		t.Errorf("an engine name as --model-id: %v", err)
	}
	err = shapeAddedProvider(dir, home, m, addProviderOpts{upstream: "http://127.0.0.1:8080/v1", upstreamModel: "llama", modelID: strings.Repeat("ab", 32)})
	if err == nil || !strings.Contains(err.Error(), "--model-name") {
		t.Errorf("other weights under the devnet model's name: %v", err)
	}
}
