package node

import (
	"context"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/node/nodetest"
	"github.com/tenzrod/tenzrod/p2p/sessioncache"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// TestStandbyHeldAgainstAFundedStream: on a chain a successor takes a
// session only against an open stream from the session's payer paying it
// at least its standby fee, claims what the stream accrues in the
// background, and lets the session go once the payer stops the stream.
func TestStandbyHeldAgainstAFundedStream(t *testing.T) {
	payer := newAccountKey(t)
	const fee = 36_000 // 10 micro-units a second
	net := newChainNetWith(t, 1, 1, 0, testChainParams(3600), chainExtra{
		funded: map[terms.AccountID]uint64{keyAccount(payer): 10_000_000},
		provOpts: []func(*Config){func(c *Config) {
			c.Provider.Standby.Enabled, c.Provider.Standby.FeePerHour, c.Provider.Standby.ClaimInterval = true, fee, time.Second
		}}})
	chain, succ, other := net.validators[0].Chain(), net.registered[0], net.validators[0]
	machine := succ.Identity().MachineID()
	nodetest.Eventually(t, 60*time.Second, "the successor's registration to commit", func() bool {
		_, ok, _ := chain.Provider(t.Context(), machine)
		return ok
	})
	sub, err := consensus.NewSubmitter(chain, payer, nil)
	if err != nil {
		t.Fatal(err)
	}
	submit := func(payload any) consensus.TxResult {
		t.Helper()
		res, err := sub.Submit(t.Context(), payload)
		if err != nil || res.Code != 0 {
			t.Fatalf("submit %T: %+v, %v", payload, res, err)
		}
		nodetest.Eventually(t, 10*time.Second, "the successor's chain to catch up", func() bool { return succ.Chain().App().Height() >= res.Height })
		return res
	}
	submit(&ledger.EscrowFund{Amount: 1_000_000})
	low := terms.Hash32(submit(&ledger.StreamOpen{Payee: machine, Rate: fee - 1, Deposit: 100_000}).Data)
	id := terms.Hash32(submit(&ledger.StreamOpen{Payee: machine, Rate: fee, Deposit: 100_000}).Data)

	gw, err := libp2p.New(libp2p.ListenAddrStrings("/ip4/127.0.0.1/tcp/0"), libp2p.DisableRelay())
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	if err := gw.Connect(t.Context(), peer.AddrInfo{ID: succ.Host().ID(), Addrs: succ.Host().Host().Addrs()}); err != nil {
		t.Fatal(err)
	}
	pm := other.Identity().MachineID()
	payerID := keyAccount(payer)
	a := sessioncache.Assignment{SessionID: "paid", ModelID: modelIDOf(t), PrimaryPeer: other.Host().ID(), PrimaryMachine: pm[:]}
	refusedFor := func(a sessioncache.Assignment, why string) {
		t.Helper()
		var ref *sessioncache.RefusedError
		if err := sessioncache.Assign(context.Background(), gw, succ.Host().ID(), a); !errors.As(err, &ref) || !strings.Contains(ref.Reason, why) {
			t.Fatalf("assignment %x: %v, want a refusal for %q", a.StreamID, err, why)
		}
	}
	refusedFor(a, "standby stream")
	withStream := func(s terms.Hash32, by terms.AccountID) sessioncache.Assignment {
		b := a
		b.StreamID, b.Payer = s[:], by[:]
		return b
	}
	refusedFor(withStream(low, payerID), "below the standby fee")
	refusedFor(withStream(id, terms.AccountID{1}), "not the session's payer")
	refusedFor(withStream(terms.Hash32{9}, payerID), "does not exist")
	if err := sessioncache.Assign(context.Background(), gw, succ.Host().ID(), withStream(id, payerID)); err != nil {
		t.Fatal(err)
	}
	if _, ok := succ.Provider().HeldSession("paid"); !ok {
		t.Fatal("the funded session is not held")
	}
	nodetest.Eventually(t, 30*time.Second, "the successor's claim to land", func() bool {
		s, ok, err := chain.Stream(t.Context(), id)
		return err == nil && ok && s.Claimed > 0
	})
	submit(&ledger.StreamStop{ID: id})
	nodetest.Eventually(t, 30*time.Second, "the successor to let the stopped session go", func() bool {
		_, ok := succ.Provider().HeldSession("paid")
		return !ok
	})
	s, _, _ := chain.Stream(t.Context(), id)
	if !s.Closed || s.Claimed+s.Refunded != s.Deposit {
		t.Fatalf("stopped stream %+v breaks deposit = claimed + refunded", s)
	}
}

func modelIDOf(t *testing.T) []byte {
	t.Helper()
	_, id := testModelDir(t)
	b, err := hex.DecodeString(id)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
