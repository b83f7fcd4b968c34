package testnet_test

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"testing"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
	"github.com/tenzrod/tenzrod/consensus/testnet"
)

// seedKey is the deterministic key of the test's party name.
func seedKey(name string) ed25519.PrivateKey { return ledgertest.SeedKey(name, 0) }

// sender signs with per-account nonces it tracks itself.
type sender struct {
	*ledgertest.Nonces
	net *testnet.Net
}

func newSender(n *testnet.Net) *sender {
	return &sender{Nonces: ledgertest.NewNonces(n.ChainID), net: n}
}

// submit broadcasts raw txs through node and waits for each to commit
// with code 0.
func submit(ctx context.Context, t testing.TB, node *consensus.Node, raws ...[]byte) []consensus.TxResult {
	t.Helper()
	var hashes [][32]byte
	for _, raw := range raws {
		h, err := node.BroadcastTx(ctx, raw)
		if err != nil {
			t.Fatalf("broadcast: %v", err)
		}
		hashes = append(hashes, h)
	}
	var out []consensus.TxResult
	for _, h := range hashes {
		r, err := node.WaitTx(ctx, h)
		if err != nil {
			t.Fatal(err)
		}
		if r.Code != 0 {
			t.Fatalf("tx %x: %v: %s", h[:6], r.Code, r.Log)
		}
		out = append(out, r)
	}
	return out
}

// sameAppHash checks that every running node committed the same app hash
// at height h.
func sameAppHash(ctx context.Context, net *testnet.Net, h int64) ([]byte, error) {
	if err := net.WaitHeight(ctx, h); err != nil {
		return nil, err
	}
	var want []byte
	for i, nd := range net.Running() {
		got, err := nd.App().AppHashAt(h)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			want = got
		} else if string(got) != string(want) {
			return nil, fmt.Errorf("node %s app hash at %d = %x, node 0 = %x", nd.NodeID(), h, got, want)
		}
	}
	if want == nil {
		return nil, errors.New("no running node")
	}
	return want, nil
}
