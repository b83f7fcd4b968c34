package sessioncache_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/p2p/sessioncache"
	"github.com/tenzrod/tenzrod/receipts/cborx"
)

// FuzzDecodeRequest: any frame decodes to one request or errors, and
// what decodes is canonical: it encodes back to the same bytes.
func FuzzDecodeRequest(f *testing.F) {
	for _, r := range []*sessioncache.Request{
		{State: []byte{1, 2, 3}},
		{Challenge: &sessioncache.ChallengeRequest{SessionID: "s", Nonce: make([]byte, 16)}},
		{Assign: &sessioncache.SignedAssignment{Assignment: []byte{0xa0}, PubKey: []byte{1}, Sig: []byte{2}}},
	} {
		b, _ := cborx.Marshal(r)
		f.Add(b)
	}
	f.Add([]byte{0xa0})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := sessioncache.DecodeRequest(b)
		if err != nil {
			return
		}
		out, err := cborx.Marshal(r)
		if err != nil || !bytes.Equal(out, b) {
			t.Fatalf("decoded request re-encodes to %x (err %v), input %x", out, err, b)
		}
	})
}

func FuzzDecodeAnswer(f *testing.F) {
	for _, a := range []*sessioncache.Answer{{}, {Code: 1, Reason: "no"}, {Proof: []byte{1}}} {
		b, _ := cborx.Marshal(a)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := sessioncache.DecodeAnswer(b)
		if err != nil {
			return
		}
		if a.Code > sessioncache.CodeRetry || len(a.Reason) > sessioncache.MaxReasonLen {
			t.Fatalf("decoded an answer breaking the limits: %+v", a)
		}
	})
}

func FuzzDecodeState(f *testing.F) {
	pt, _ := state("s", 3, 20).Marshal()
	f.Add(pt)
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := sessioncache.DecodeState(b)
		if err != nil {
			return
		}
		if err := st.Check(); err != nil {
			t.Fatalf("decoded a state that fails its checks: %v", err)
		}
	})
}

// FuzzAcceptSealed feeds a successor arbitrary state frames: nothing
// panics, and whatever it stores is a checked state of the assigned
// session and model.
func FuzzAcceptSealed(f *testing.F) {
	gw, primary := newMachine(f), newMachine(f)
	succ := newSuccessor(f, nil)
	sa, err := sessioncache.SignAssignment(gw.key, assignment("s", primary))
	if err != nil {
		f.Fatal(err)
	}
	good := seal(f, primary, succ.key.Public(), state("s", 1, 40))
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add(seal(f, primary, make([]byte, sessioncache.PublicKeySize), state("s", 2, 4)))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := sessioncache.NewHolder(sessioncache.HolderConfig{Key: succ.key, Session: succ.machine.sessionFn(),
			Standby: func([]byte) bool { return true }})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Assign(context.Background(), gw.peer, sa); err != nil {
			t.Fatal(err)
		}
		if err := s.Accept(primary.peer, b); err != nil {
			return
		}
		_, st, ok := s.Get("s")
		if !ok || st == nil || st.SessionID != "s" || !bytes.Equal(st.ModelID, testModel) || st.Check() != nil {
			t.Fatalf("accepted a frame and holds %+v", st)
		}
	})
}

func FuzzVerifyProof(f *testing.F) {
	m := newMachine(f)
	nonce := make([]byte, 16)
	succ := newSuccessor(f, nil)
	sa, _ := sessioncache.SignAssignment(m.key, assignment("s", m))
	_ = succ.hold.Assign(context.Background(), m.peer, sa)
	p, err := succ.hold.Prove("s", nonce)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(p)
	f.Fuzz(func(t *testing.T, b []byte) {
		pr, err := sessioncache.VerifyProof(b, succ.peer, "s", nonce, time.Now())
		if err != nil {
			return
		}
		if pr.SessionID != "s" || !bytes.Equal(pr.Nonce, nonce) {
			t.Fatalf("verified a proof of %q", pr.SessionID)
		}
	})
}

func FuzzVerifyAssignment(f *testing.F) {
	gw, primary := newMachine(f), newMachine(f)
	sa, _ := sessioncache.SignAssignment(gw.key, assignment("s", primary))
	f.Add(sa.Assignment, sa.PubKey, sa.Sig)
	f.Fuzz(func(t *testing.T, a, pub, sig []byte) {
		got, err := (&sessioncache.SignedAssignment{Assignment: a, PubKey: pub, Sig: sig}).Verify(gw.peer)
		if err != nil {
			return
		}
		if got.Check() != nil {
			t.Fatalf("verified an assignment failing its checks: %+v", got)
		}
	})
}
