package main

import (
	"crypto/sha256"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/p2p/expert"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// batchEvidence writes, under home as a serving provider keeps them, the
// evidence of one expert batch signed by a machine and the binding of its
// receipt to a record of payer; it returns the evidence file and the
// binding.
func batchEvidence(t *testing.T, home string, payer terms.AccountID) (string, *expert.Binding) {
	t.Helper()
	m := testMachine(t)
	const dim = 4
	rows, _ := expert.PackRows([][]float32{{1, 2, 3, 4}}, dim)
	out, _ := expert.PackRows([][]float32{{4, 3, 2, 1}}, dim)
	req := &expert.Request{Model: [32]byte{0x1a}, Layer: 1, Dim: dim, Batches: []expert.WireBatch{{Expert: 2, Positions: []uint32{0}, Rows: rows}}}
	env, err := expert.Sign(m.Session, expert.NewReceipt(m.Session, req, [][]byte{out}, time.Now()), false)
	if err != nil {
		t.Fatal(err)
	}
	b := expert.SampledBatch{Model: req.Model, Layer: 1, Dim: dim, Expert: 2, Positions: []uint32{0}, Input: rows, Output: out,
		Receipt: env, Index: 0, Holder: []byte(m.PeerID), Machine: m.MachineID()}
	ev := &expert.Evidence{Batch: b, InputHash: sha256.Sum256(rows), ClaimedHash: sha256.Sum256(out),
		RecomputedHash: sha256.Sum256([]byte("other rows")), RecomputedBy: []byte("standby")}
	enc, err := expert.EncodeEvidence(ev)
	if err != nil {
		t.Fatal(err)
	}
	store := func(kind string) *expert.SampleStore {
		s, err := expert.OpenSampleStore(filepath.Join(home, "experts", kind, "1a00000000000000"), 0)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	evs := store("evidence")
	name, err := evs.Put(b.ID(), enc)
	if err != nil {
		t.Fatal(err)
	}
	u := expert.HolderUsage{Receipts: [][]byte{[]byte("an earlier receipt"), env}}
	bind := expert.BindingOf(&u, payer, terms.Hash32(sha256.Sum256([]byte("the call"))))
	data, err := expert.EncodeBinding(bind)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store("bindings").Put(ev.Ref().ReceiptHash, data); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(home, "experts", "evidence", "1a00000000000000", name), bind
}

// TestTxDisputeOpenBatch: `tx dispute open --batch` (and the shell's
// `dispute open`, the same command) finds the binding of
// the batch's receipt in the home beside the evidence, builds the
// expert-batch dispute over the record it names and submits it: the
// chain refuses it only because that record was never settled. Flags that
// do not go together, a binding of other receipts and a home without
// bindings are refused before anything is signed.
func TestTxDisputeOpenBatch(t *testing.T) {
	n := startTxNet(t)
	home := t.TempDir()
	evFile, bind := batchEvidence(t, home, n.buyer)
	out, err := runCLI(t, "tx", "dispute", "open", "--api", n.api, "--key", n.buyerKey, "--batch", evFile, "--bond", "10_000_000")
	if err == nil || !strings.Contains(err.Error(), "code 48") || !strings.Contains(err.Error(), bind.RequestDigest.String()) {
		t.Fatalf("a batch dispute over an unsettled record: %v, want the chain's bad evidence naming record %s\n%s", err, bind.RequestDigest, out)
	}

	// The shell's `dispute open` is the same command against its node.
	out, err = runCLI(t, "shell", "--api", n.api, "--history", os.DevNull, "-c",
		"dispute open --key "+n.buyerKey+" --batch "+evFile+" --bond 10_000_000")
	if err == nil || !strings.Contains(err.Error(), "code 48") || !strings.Contains(err.Error(), bind.RequestDigest.String()) {
		t.Fatalf("shell dispute open --batch: %v, want the chain's bad evidence naming record %s\n%s", err, bind.RequestDigest, out)
	}
	if out, err := runCLI(t, "shell", "--api", n.api, "--history", os.DevNull, "-c", "help dispute open"); err != nil || !strings.Contains(out, "--batch FILE") {
		t.Fatalf("shell help dispute open: %v\n%s", err, out)
	}

	other := filepath.Join(t.TempDir(), "other.cbor")
	data, _ := expert.EncodeBinding(&expert.Binding{Payer: n.buyer, ReceiptHashes: []terms.Hash32{{9}}})
	if err := os.WriteFile(other, data, 0o600); err != nil {
		t.Fatal(err)
	}
	lone := filepath.Join(t.TempDir(), "evidence.cbor")
	raw, _ := os.ReadFile(evFile)
	if err := os.WriteFile(lone, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--batch", evFile, "--payer", n.buyer.String()}, "give no --payer"},
		{[]string{"--binding", other, "--payer", n.buyer.String()}, "--binding goes with --batch"},
		{[]string{"--batch", evFile, "--binding", other}, "binds other receipts"},
		{[]string{"--batch", lone}, "--binding is required"},
		{[]string{"--batch", other}, "not expert evidence"},
	} {
		args := append([]string{"tx", "dispute", "open", "--api", n.api, "--key", n.buyerKey, "--bond", "1"}, tc.args...)
		if out, err := runCLI(t, args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("tx dispute open %v: %v, want %q\n%s", tc.args, err, tc.want, out)
		}
	}
}
