package store

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/tenzrod/tenzrod/receipts/hwkey"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/identity/identitytest"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// signedReceipt returns a real receipt envelope from a tpm-sim machine and
// that machine's ID.
func signedReceipt(t *testing.T, nonce []byte) ([]byte, identity.MachineID, time.Time) {
	t.Helper()
	id := identitytest.OpenBackend(t, hwkey.BackendTPMSim)
	pk, _ := identitytest.PeerKey(t)
	now := time.Now()
	sess := identitytest.Session(t, id, pk, now, now.Add(time.Hour))
	model := bytes.Repeat([]byte{9}, 32)
	in := receipt.InputCommitment(model, false, nil, "2+2=", "", terms.Sampling{MaxTokens: 4})
	out := receipt.OutputHash("4")
	m := id.MachineID()
	env, err := receipt.Sign(sess, &receipt.Receipt{ModelID: model, Engine: "embedded", MachineID: m[:],
		ProviderPeer: sess.Cert.PeerID, Nonce: nonce, InputCommitment: in[:], OutputHash: out[:],
		Units: terms.Units{InputTokens: 4, OutputTokens: 2}, Sampling: receipt.SamplingParams{MaxTokens: 4},
		FinishReason: "stop", TimeMs: now.UnixMilli()})
	if err != nil {
		t.Fatal(err)
	}
	return env, m, now
}

func TestReceiptsSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	nonce := []byte("0123456789abcdef")
	env, machine, now := signedReceipt(t, nonce)
	good := ReceiptMeta{Verified: true, Provider: "12D3KooW...", Model: "tiny", TimeMs: now.UnixMilli()}
	if err := s.PutReceipt(nonce, env, good); err != nil {
		t.Fatal(err)
	}
	bad := ReceiptMeta{Verified: false, Reason: "receipt: bad signature", Provider: "p2", Model: "tiny", TimeMs: 7}
	if err := s.PutReceipt([]byte("other-nonce-0001"), []byte("garbage"), bad); err != nil {
		t.Fatal(err)
	}
	if err := s.PutReceipt([]byte("no-receipt-00001"), nil, ReceiptMeta{Reason: "provider sent no receipt"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.GetReceipt(nonce); !errors.Is(err, ErrClosed) {
		t.Fatalf("GetReceipt after Close: %v", err)
	}

	s = openStore(t, dir)
	gotEnv, gotMeta, err := s.GetReceipt(nonce)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(gotEnv, env) || gotMeta != good {
		t.Fatalf("receipt changed across a restart: meta %+v", gotMeta)
	}
	r, err := receipt.Verify(gotEnv, machine, now)
	if err != nil || !bytes.Equal(r.Nonce, nonce) {
		t.Fatalf("stored receipt no longer verifies: %v", err)
	}
	if e, m, err := s.GetReceipt([]byte("other-nonce-0001")); err != nil || string(e) != "garbage" || m != bad {
		t.Fatalf("failed receipt: %q %+v %v", e, m, err)
	}
	if e, m, err := s.GetReceipt([]byte("no-receipt-00001")); err != nil || len(e) != 0 || m.Reason == "" {
		t.Fatalf("missing receipt: %q %+v %v", e, m, err)
	}
	if _, _, err := s.GetReceipt([]byte("never-stored")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown nonce: %v", err)
	}
	// A later put replaces the earlier one.
	if err := s.PutReceipt([]byte("other-nonce-0001"), env, good); err != nil {
		t.Fatal(err)
	}
	if e, m, _ := s.GetReceipt([]byte("other-nonce-0001")); !bytes.Equal(e, env) || m != good {
		t.Fatal("PutReceipt did not replace")
	}
}

func TestPutReceiptLimits(t *testing.T) {
	s := openStore(t, t.TempDir())
	cases := map[string]struct {
		nonce, env []byte
		meta       ReceiptMeta
	}{
		"empty nonce":       {nil, nil, ReceiptMeta{}},
		"long nonce":        {make([]byte, MaxNonceLen+1), nil, ReceiptMeta{}},
		"oversize envelope": {[]byte("n"), make([]byte, receipt.MaxEnvelopeSize+1), ReceiptMeta{}},
		"long provider":     {[]byte("n"), nil, ReceiptMeta{Provider: strings.Repeat("p", MaxMetaFieldLen+1)}},
		"invalid model":     {[]byte("n"), nil, ReceiptMeta{Model: "\xff"}},
	}
	for name, tc := range cases {
		if err := s.PutReceipt(tc.nonce, tc.env, tc.meta); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// Long or invalid reasons are kept, truncated to valid UTF-8.
	reason := strings.Repeat("é", MaxReasonLen) + "\xff"
	if err := s.PutReceipt([]byte("n"), nil, ReceiptMeta{Reason: reason}); err != nil {
		t.Fatal(err)
	}
	_, m, err := s.GetReceipt([]byte("n"))
	if err != nil || len(m.Reason) > MaxReasonLen || len(m.Reason) < MaxReasonLen-1 ||
		!utf8.ValidString(m.Reason) || !strings.HasPrefix(reason, m.Reason) {
		t.Fatalf("reason of %d bytes stored as %d bytes: %v", len(reason), len(m.Reason), err)
	}
}

func TestClosedStore(t *testing.T) {
	s, err := OpenWith(t.TempDir(), GroupSync)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	rec := payment(t, "alice", 1, 1, 1, 1)
	for name, err := range map[string]error{
		"PutReceipt": s.PutReceipt([]byte("n"), nil, ReceiptMeta{}),
		"Settle":     s.Settle(rec),
		"PutPayment": s.PutPayment(rec),
		"Credit":     s.Credit("alice", 1),
		"Debit":      s.Debit("alice", 1),
	} {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close: %v", name, err)
		}
	}
	if _, err := s.Balance("alice"); !errors.Is(err, ErrClosed) {
		t.Errorf("Balance after Close: %v", err)
	}
	if _, err := s.ListPayments("alice", 1); !errors.Is(err, ErrClosed) {
		t.Errorf("ListPayments after Close: %v", err)
	}
}
