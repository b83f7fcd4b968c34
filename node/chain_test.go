package node

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/chainapi"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/node/nodetest"
	"github.com/tenzrod/tenzrod/node/rpc"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// TestChainConfigRoundTrip: the rendered file carries the [chain]
// section (its checks are consensus's TestChainConfigValidate) and loads
// back the same.
func TestChainConfigRoundTrip(t *testing.T) {
	cfg := testConfig(t, RoleProvider, "software", nil)
	cfg.Chain.Enabled, cfg.Chain.PersistentPeers = true, []string{strings.Repeat("a", 40) + "@127.0.0.1:26656"}
	if err := WriteConfig(cfg, true); err != nil {
		t.Fatal(err)
	}
	back, err := Load(cfg.Home)
	if err != nil {
		t.Fatal(err)
	}
	if !back.Chain.Enabled || back.Chain.Role != consensus.ChainFollower || len(back.Chain.PersistentPeers) != 1 {
		t.Fatalf("chain section after round trip: %+v", back.Chain)
	}
}

// TestChainInNode runs two validator nodes with the chain enabled, from
// homes consensus.DevnetGenesis created, and a node without a chain: the
// height in tenzro_nodeInfo advances, the funded account has its genesis
// balance, a transfer sent through tenzro_sendTx commits, and the chain
// methods of the node without a chain answer Unavailable.
func TestChainInNode(t *testing.T) {
	_, buyerKey, _ := ed25519.GenerateKey(rand.Reader)
	buyer := terms.AccountOf(buyerKey.Public().(ed25519.PublicKey))
	cfgs := []Config{testConfig(t, RoleValidator, "software", nil), testConfig(t, RoleValidator, "software", nil)}
	spec := consensus.Devnet{Dir: t.TempDir(), ChainID: "tenzro-node-test", BlockTime: 100 * time.Millisecond,
		Funded: map[terms.AccountID]uint64{buyer: 5_000_000}}
	for i := range cfgs {
		cfgs[i].Chain.Enabled, cfgs[i].Chain.P2PListen = true, nodetest.FreeTCP(t)
		cfgs[i].Chain.StallAfter = time.Second
		spec.Validators = append(spec.Validators, consensus.DevnetValidator{Home: filepath.Join(cfgs[i].Home, "chain"),
			P2PListen: cfgs[i].Chain.P2PListen, Operator: terms.AccountID{byte(i + 1)}})
	}
	written, err := consensus.DevnetGenesis(spec)
	if err != nil {
		t.Fatal(err)
	}
	var nodes []*Node
	for i := range cfgs {
		cfgs[i].Chain.PersistentPeers = written[i].Peers
		nodes = append(nodes, startNode(t, cfgs[i]))
	}
	info := func() NodeInfo { return nodes[1].Info() }
	nodetest.Eventually(t, 30*time.Second, "height 2", func() bool { return info().Height >= 2 })
	if info().ChainID != spec.ChainID {
		t.Fatalf("chain_id %q, want %q", info().ChainID, spec.ChainID)
	}
	h := info().Height
	nodetest.Eventually(t, 10*time.Second, "the height to advance", func() bool { return info().Height > h })

	acct := func() chainapi.AccountView {
		res, err := nodes[0].rpcCall("tenzro_getAccount", fmt.Sprintf(`{"account":%q}`, buyer))
		if err != nil {
			t.Fatal(err)
		}
		return res.(chainapi.AccountView)
	}
	if a := acct(); !a.Exists || a.Balance != 5_000_000 || a.Nonce != 0 {
		t.Fatalf("genesis account: %+v", a)
	}
	wantCode(t, nodes[0], "tenzro_getAccount", `{"account":"xyz"}`, rpc.CodeInvalidParams)

	raw, err := ledger.NewSigner(buyerKey, spec.ChainID).SignTx(0, &ledger.Transfer{To: terms.AccountID{9}, Amount: 1000})
	if err != nil {
		t.Fatal(err)
	}
	sent, err := nodes[1].rpcCall("tenzro_sendTx", fmt.Sprintf(`{"tx":%q}`, base64.StdEncoding.EncodeToString(raw)))
	if err != nil {
		t.Fatal(err)
	}
	hash := sent.(chainapi.TxView).Hash
	var tx chainapi.TxView
	nodetest.Eventually(t, 15*time.Second, "the transfer to commit", func() bool {
		res, err := nodes[0].rpcCall("tenzro_getTx", fmt.Sprintf(`{"hash":%q}`, hash))
		if err == nil {
			tx = res.(chainapi.TxView)
		}
		return err == nil
	})
	if tx.Code != 0 || tx.Height < 1 {
		t.Fatalf("transfer: %+v", tx)
	}
	nodetest.Eventually(t, 5*time.Second, "the new balance", func() bool { a := acct(); return a.Balance == 5_000_000-1000 && a.Nonce == 1 })
	// A resubmission is refused; a stale nonce is rejected by CheckTx with
	// the chain's code as data.
	wantCode(t, nodes[1], "tenzro_sendTx", fmt.Sprintf(`{"tx":%q}`, base64.StdEncoding.EncodeToString(raw)), rpc.CodeInvalidParams)
	stale, err := ledger.NewSigner(buyerKey, spec.ChainID).SignTx(0, &ledger.Transfer{To: terms.AccountID{9}, Amount: 7})
	if err != nil {
		t.Fatal(err)
	}
	re := wantCode(t, nodes[1], "tenzro_sendTx", fmt.Sprintf(`{"tx":%q}`, base64.StdEncoding.EncodeToString(stale)), rpc.CodeInvalidParams)
	if d, _ := json.Marshal(re.Data); !strings.Contains(string(d), "nonce") {
		t.Fatalf("stale nonce rejection data %s lacks the code name", d)
	}

	vals, err := nodes[0].rpcCall("tenzro_listValidators", "")
	if err != nil || len(vals.([]ledger.Validator)) != 2 {
		t.Fatalf("validators: %v %v", vals, err)
	}
	pack, err := nodes[0].rpcCall("tenzro_getEvidencePack", fmt.Sprintf(`{"account":%q,"from_height":1,"to_height":%d}`, buyer, tx.Height))
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(pack)
	if err != nil || !strings.Contains(string(js), spec.ChainID) {
		t.Fatalf("evidence pack JSON lacks the chain ID (%v): %.300s", err, js)
	}

	// Healthy: /healthz is 200 with the chain's view. One validator of two
	// stopped halts the chain: the other says so, as a 503.
	if code, body := healthz(t, nodes[1]); code != 200 || !strings.Contains(body, `"stalled":false`) {
		t.Fatalf("healthz of a live chain: %d %s", code, body)
	}
	if err := nodes[0].Stop(t.Context()); err != nil {
		t.Fatal(err)
	}
	nodetest.Eventually(t, 15*time.Second, "the halted chain to be reported stalled", func() bool {
		code, body := healthz(t, nodes[1])
		return code == 503 && strings.Contains(body, "chain_stalled") && strings.Contains(body, "has not moved since")
	})
	// (That the stopped peer is reported missing is the consensus
	// watchdog test's: how soon CometBFT drops a stopped peer from its set
	// varies with the machine's load.)
	if c := nodes[1].Info().Chain; c == nil || !c.Stalled {
		t.Fatalf("tenzro_nodeInfo chain of a halted chain: %+v", c)
	}

	off := startNode(t, testConfig(t, RoleGateway, "software", nil))
	if i := off.Info(); i.Height != 0 || i.ChainID != "" {
		t.Fatalf("node without a chain reports %d %q", i.Height, i.ChainID)
	}
	for _, m := range []string{"tenzro_getAccount", "tenzro_getStanding", "tenzro_listValidators", "tenzro_getParams",
		"tenzro_sendTx", "tenzro_getTx", "tenzro_getEvidencePack", "tenzro_getPayments"} {
		wantCode(t, off, m, "{}", rpc.CodeUnavailable)
	}
}

func wantCode(t *testing.T, n *Node, method, params string, code int) *rpc.Error {
	t.Helper()
	_, err := n.rpcCall(method, params)
	var re *rpc.Error
	if !errors.As(err, &re) || re.Code != code {
		t.Fatalf("%s %s: %v, want code %d", method, params, err, code)
	}
	return re
}

func healthz(t *testing.T, n *Node) (int, string) {
	t.Helper()
	return send(t, n.api.URL()+"/healthz", "", "")
}
