package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/cmd/internal/devproc"
	"github.com/tenzrod/tenzrod/node"
	"github.com/tenzrod/tenzrod/node/nodetest"
	"github.com/tenzrod/tenzrod/node/openai"
	"github.com/tenzrod/tenzrod/router/buyerkeys"
)

const keysAdminToken = "sk-tenzro-keys-operator"

// startGatewayProc runs `tenzrod join --home` (a gateway) and waits for its API; the
// returned channel closes once the process has exited and been reaped.
func startGatewayProc(t *testing.T, bin, home, api string) (*exec.Cmd, <-chan struct{}) {
	t.Helper()
	c := exec.Command(bin, "join", "--home", home) // a gateway runs as `tenzrod join`
	done, err := devproc.StartLogged(c, filepath.Join(home, "node.log"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Process.Signal(syscall.SIGTERM)
		<-done
	})
	if _, ok := devproc.WaitUntil(60*time.Second, 50*time.Millisecond, func() bool {
		resp, err := http.Get(api + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil && resp.StatusCode == http.StatusOK
	}); !ok {
		log, _ := os.ReadFile(filepath.Join(home, "node.log"))
		t.Fatalf("gateway at %s never answered /healthz:\n%s", api, devproc.Tail(string(log), 20))
	}
	return c, done
}

// keyUsage is the calling key's GET /v1/key.
func keyUsage(t *testing.T, api, token string) (int, openai.KeyInfo) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, api+"/v1/key", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct{ Data openai.KeyInfo }
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out.Data
}

// TestKeysBuyerSpendSurvivesKill: keys made with `tenzrod keys buyer` on a
// gateway process are served at once (no restart); the gateway is killed
// with SIGKILL and started again: the key, its spend and calls are intact;
// update and revoke take effect on the next request.
func TestKeysBuyerSpendSurvivesKill(t *testing.T) {
	bin := buildBinary(t)
	home := t.TempDir()
	apiAddr := strings.TrimPrefix(nodetest.FreeTCP(t), "tcp://")
	p2pAddr := strings.TrimPrefix(nodetest.FreeTCP(t), "tcp://")
	cfg := node.Default(node.RoleGateway)
	cfg.Home, cfg.Network, cfg.Identity.Backend = home, "keystest", "software"
	cfg.API.Listen = apiAddr
	cfg.API.AdminTokenSHA256 = openai.TokenHash(keysAdminToken)
	host, port, _ := strings.Cut(p2pAddr, ":")
	cfg.P2P.Listen = []string{"/ip4/" + host + "/tcp/" + port}
	cfg.Router.Buyers = []node.BuyerConfig{{Account: "alice", TokenSHA256: openai.TokenHash("sk-tenzro-alice"), InitialCredit: 1_000_000}}
	if err := node.WriteConfig(cfg, true); err != nil {
		t.Fatal(err)
	}
	api := "http://" + apiAddr
	gw, done := startGatewayProc(t, bin, home, api)

	var info node.NodeInfo
	if err := devproc.RPC(api, "tenzro_nodeInfo", nil, &info, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	modelDir := filepath.Join(t.TempDir(), "model")
	modelID, err := node.EnsureDevnetModel(modelDir)
	if err != nil {
		t.Fatal(err)
	}
	pcfg := node.Default(node.RoleProvider)
	pcfg.Home, pcfg.Network, pcfg.Identity.Backend = t.TempDir(), "keystest", "software"
	pcfg.API.Listen, pcfg.P2P.Listen = "127.0.0.1:0", []string{"/ip4/127.0.0.1/tcp/0"}
	pcfg.P2P.Bootstrap = []string{cfg.P2P.Listen[0] + "/p2p/" + info.PeerID}
	pcfg.Provider.Region, pcfg.Provider.AnnounceInterval = "FR", time.Second
	pcfg.Provider.Models = []node.ModelConfig{node.DevnetModel(modelDir, modelID)}
	pcfg.Provider.UnknownConcurrency, pcfg.Provider.UnknownRatePerMinute = 64, 1_000_000
	startInProcess(t, "provider", pcfg)
	if _, ok := devproc.WaitUntil(60*time.Second, 100*time.Millisecond, func() bool {
		return devproc.Quoted(api, node.DevnetModelName, 2*time.Second) == 1
	}); !ok {
		t.Fatal("the gateway never quoted the provider")
	}

	out, err := runCLI(t, "keys", "buyer", "create", "--api", api, "--token", keysAdminToken, "--payer", "alice",
		"--label", "kill", "--max-budget", "1_000_000", "--budget-duration", "1d", "--model", node.DevnetModelName)
	m := regexp.MustCompile(`id +(key_[0-9a-f]+)\ntoken +(\S+)`).FindStringSubmatch(out)
	if err != nil || m == nil {
		t.Fatalf("create: %v\n%s", err, out)
	}
	id, token := m[1], m[2]
	if out, err := runCLI(t, "keys", "buyer", "create", "--api", api, "--token", "sk-wrong", "--payer", "alice"); err == nil {
		t.Fatalf("created with a wrong admin token: %s", out)
	}
	chat := func() int {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		body := map[string]any{"model": node.DevnetModelName, "max_tokens": 4, "messages": []map[string]string{{"role": "user", "content": "hi"}}}
		resp, code, err := devproc.PostChat(ctx, http.DefaultClient, api, token, "", body)
		if err == nil {
			resp.Body.Close()
		}
		return code
	}
	for i := range 2 {
		if code := chat(); code != http.StatusOK {
			t.Fatalf("call %d: %d", i, code)
		}
	}
	_, before := keyUsage(t, api, token)
	if before.Usage == 0 || before.Label != "kill" || before.LimitRemaining == nil || *before.LimitRemaining != 1_000_000-before.Usage {
		t.Fatalf("before the kill: %+v", before)
	}

	if err := gw.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-done
	startGatewayProc(t, bin, home, api)
	if code, after := keyUsage(t, api, token); code != http.StatusOK || after.Usage != before.Usage || after.UsagePeriod != before.Usage {
		t.Fatalf("after the kill: %d %+v, before %+v", code, after, before)
	}
	var u buyerkeys.Usage
	if err := buyerRPC(api, keysAdminToken, "tenzro_getBuyerUsage", map[string]string{"key": id}, &u); err != nil ||
		u.Calls != 2 || u.Total != before.Usage || len(u.Days) == 0 || u.Days[len(u.Days)-1].Models[node.DevnetModelName].Calls == 0 {
		t.Fatalf("usage after the kill: %+v %v", u, err)
	}

	if out, err := runCLI(t, "keys", "buyer", "update", id, "--api", api, "--token", keysAdminToken, "--label", "renamed"); err != nil {
		t.Fatalf("update: %v\n%s", err, out)
	}
	out, err = runCLI(t, "keys", "buyer", "list", "--api", api, "--token", keysAdminToken)
	if err != nil || !regexp.MustCompile(id+` +renamed +alice +[1-9][0-9]* +1000000 +1d +\S+ +active`).MatchString(out) {
		t.Fatalf("list: %v\n%s", err, out)
	}
	if out, err := runCLI(t, "keys", "buyer", "revoke", id, "--api", api, "--token", keysAdminToken); err != nil {
		t.Fatalf("revoke: %v\n%s", err, out)
	}
	if code := chat(); code != http.StatusUnauthorized {
		t.Fatalf("a revoked key's call: %d", code)
	}
}
