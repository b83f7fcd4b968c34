package main

import (
	"bytes"
	"context"
	"net/http"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/internal/freeport"
	"github.com/tenzrod/tenzrod/node"
)

func TestVersionFlagAndCommandAgree(t *testing.T) {
	flag, err := runCLI(t, "--version")
	if err != nil {
		t.Fatal(err)
	}
	cmd, err := runCLI(t, "version")
	if err != nil {
		t.Fatal(err)
	}
	if flag != cmd {
		t.Fatalf("--version and version differ:\n%s\n%s", flag, cmd)
	}
	for _, w := range []string{"tenzrod " + node.Version + "\n", "commit   ", "go       " + runtime.Version(), "kernels  "} {
		if !strings.Contains(cmd, w) {
			t.Errorf("version output lacks %q:\n%s", w, cmd)
		}
	}
}

// TestGatewayCommandStartsInitsHome: init --role gateway says how to start
// the gateway, and that command runs it until its context ends, its API
// answering /healthz meanwhile, and healthcheck --home finds it there;
// once it stopped, healthcheck fails.
func TestGatewayCommandStartsInitsHome(t *testing.T) {
	home := t.TempDir()
	api, err := freeport.Addr()
	if err != nil {
		t.Fatal(err)
	}
	out, err := runCLI(t, "init", "--home", home, "--role", "gateway", "--key-backend", "software", "--api-listen", api)
	if err != nil {
		t.Fatal(err)
	}
	if want := "tenzrod gateway --home " + home; !strings.Contains(out, want) {
		t.Fatalf("init --role gateway does not say %q:\n%s", want, out)
	}
	if _, err := runCLI(t, "provider", "--home", home); err == nil || !strings.Contains(err.Error(), "role") {
		t.Fatalf("provider on a gateway home: %v", err)
	}
	prov := t.TempDir()
	if _, err := runCLI(t, "init", "--home", prov, "--role", "provider", "--key-backend", "software"); err != nil {
		t.Fatal(err)
	}
	if _, err := runCLI(t, "gateway", "--home", prov); err == nil || !strings.Contains(err.Error(), "role") {
		t.Fatalf("gateway on a provider home: %v", err)
	}
	if _, err := runCLI(t, "gateway"); err == nil || !strings.Contains(err.Error(), "--home") {
		t.Fatalf("gateway without --home: %v", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	root := newRootCmd()
	var buf bytes.Buffer
	root.SetOut(&buf)
	root.SetErr(&buf)
	root.SetArgs([]string{"gateway", "--home", filepath.Clean(home)})
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	healthy := false
	for !healthy {
		select {
		case err := <-done:
			t.Fatalf("gateway stopped before answering /healthz: %v\n%s", err, buf.String())
		case <-time.After(50 * time.Millisecond):
		}
		resp, err := http.Get("http://" + api + "/healthz")
		if err == nil {
			healthy = resp.StatusCode == http.StatusOK
			resp.Body.Close()
		}
	}
	out, err = runCLI(t, "healthcheck", "--home", home)
	if err != nil || !strings.Contains(out, `"role":"gateway"`) {
		t.Fatalf("healthcheck of a running gateway: %v\n%s", err, out)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("gateway stop: %v", err)
	}
	if _, err := runCLI(t, "healthcheck", "--home", home); err == nil {
		t.Fatal("healthcheck of a stopped gateway succeeded")
	}
}
