package sessioncache_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/p2p/p2ptest"
	"github.com/tenzrod/tenzrod/p2p/sessioncache"
	"github.com/tenzrod/tenzrod/receipts/cborx"
)

// TestPrimaryToSuccessor runs the protocol between real hosts: a gateway
// assigns, the primary sends two turns, the successor stores the latest,
// pre-fills it and proves it holds it.
func TestPrimaryToSuccessor(t *testing.T) {
	gw, primary, succ := newMachine(t), newMachine(t), newSuccessor(t, nil)
	gh, ph, sh := gw.host(t), primary.host(t), succ.host(t)
	p2ptest.Connect(t, gh, sh)
	p2ptest.Connect(t, ph, sh)
	srv, err := sessioncache.NewServer(sh, succ.hold, sessioncache.ServerConfig{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	ctx := context.Background()
	if err := sessioncache.Assign(ctx, gh, sh.ID(), assignment("s1", primary.machine())); err != nil {
		t.Fatal(err)
	}
	if turn, h, err := sessioncache.Challenge(ctx, gh, sh.ID(), "s1"); err != nil || turn != 0 || len(h) != 0 {
		t.Fatalf("challenge before any state: turn %d, hash %x, err %v", turn, h, err)
	}
	var want []byte
	for turn := uint32(1); turn <= 2; turn++ {
		st := state("s1", turn, 300*int(turn))
		if err := sessioncache.SendState(ctx, ph, sh.ID(), seal(t, primary, succ.key.Public(), st)); err != nil {
			t.Fatalf("turn %d: %v", turn, err)
		}
		got := <-succ.states
		if got.Turn != turn || len(got.Tokens) != len(st.Tokens) || got.Sampling.Seed != 9 {
			t.Fatalf("pre-filled turn %d with %d tokens", got.Turn, len(got.Tokens))
		}
		pt, _ := st.Marshal()
		h := sessioncache.Hash(pt)
		want = h[:]
	}
	turn, h, err := sessioncache.Challenge(ctx, gh, sh.ID(), "s1")
	if err != nil || turn != 2 || !bytes.Equal(h, want) {
		t.Fatalf("challenge: turn %d, hash %x, err %v; want turn 2, %x", turn, h, err, want)
	}
	if v := value(succ.met.Accepted); v != 2 {
		t.Fatalf("%v states accepted, want 2", v)
	}
	// A session it does not hold: a refusal the gateway acts on.
	var ref *sessioncache.RefusedError
	if _, _, err := sessioncache.Challenge(ctx, gh, sh.ID(), "nope"); !errors.As(err, &ref) || ref.Code != sessioncache.CodeUnknown {
		t.Fatalf("challenge of an unknown session: %v", err)
	}
	// A model it does not stand by for.
	a := assignment("s2", primary.machine())
	a.ModelID = make([]byte, 32)
	if err := sessioncache.Assign(ctx, gh, sh.ID(), a); !errors.As(err, &ref) || ref.Code != sessioncache.CodeRefused {
		t.Fatalf("assignment for another model: %v", err)
	}
	if v := value(succ.met.Rejected.WithLabelValues(sessioncache.ReasonNotStandby)); v != 1 {
		t.Fatalf("not_standby counted %v times", v)
	}
}

func (m *machine) machine() *machine { return m }

// rejected asserts err is a rejection for reason, counted once.
func rejected(t *testing.T, s *successor, err error, reason string) {
	t.Helper()
	var r *sessioncache.Rejection
	if !errors.As(err, &r) || r.Reason != reason {
		t.Fatalf("err %v, want a %s rejection", err, reason)
	}
	if v := value(s.met.Rejected.WithLabelValues(reason)); v != 1 {
		t.Fatalf("%s counted %v times, want 1", reason, v)
	}
	if v := value(s.met.Accepted); v > 1 {
		t.Fatalf("%v states accepted", v)
	}
}

func assigned(t *testing.T, s *successor, gw *machine, a sessioncache.Assignment) {
	t.Helper()
	sa, err := sessioncache.SignAssignment(gw.key, a)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.hold.Assign(context.Background(), gw.peer, sa); err != nil {
		t.Fatal(err)
	}
}

func TestRejectWrongKey(t *testing.T) {
	gw, primary, s, other := newMachine(t), newMachine(t), newSuccessor(t, nil), newSuccessor(t, nil)
	assigned(t, s, gw, assignment("s", primary))
	rejected(t, s, s.hold.Accept(primary.peer, seal(t, primary, other.key.Public(), state("s", 1, 10))), sessioncache.ReasonWrongKey)
}

// alter flips a ciphertext byte of a sealed state; resign signs the
// result again with by's session key (else the signature no longer
// covers it).
func alter(t *testing.T, b []byte, resign *machine) []byte {
	t.Helper()
	env, sealed, err := sessioncache.OpenEnvelope(b)
	if err != nil {
		t.Fatal(err)
	}
	sealed.Ciphertext[len(sealed.Ciphertext)/2] ^= 1
	payload, err := cborx.Marshal(sealed)
	if err != nil {
		t.Fatal(err)
	}
	env.Payload = payload
	if resign != nil {
		if env, err = resign.sess.Seal(env.Domain, env.PayloadType, payload); err != nil {
			t.Fatal(err)
		}
	}
	out, err := env.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestRejectAltered(t *testing.T) {
	gw, primary := newMachine(t), newMachine(t)
	for name, resign := range map[string]*machine{"in transit": nil, "by the primary": primary} {
		t.Run(name, func(t *testing.T) {
			s := newSuccessor(t, nil)
			assigned(t, s, gw, assignment("s", primary))
			b := alter(t, seal(t, primary, s.key.Public(), state("s", 1, 10)), resign)
			rejected(t, s, s.hold.Accept(primary.peer, b), sessioncache.ReasonAltered)
			if _, st, _ := s.hold.Get("s"); st != nil {
				t.Fatal("an altered state was stored")
			}
			if err := s.hold.Accept(primary.peer, seal(t, primary, s.key.Public(), state("s", 1, 10))); err != nil {
				t.Fatalf("the unaltered state: %v", err)
			}
		})
	}
}

func TestRejectReplayed(t *testing.T) {
	gw, primary, s := newMachine(t), newMachine(t), newSuccessor(t, nil)
	assigned(t, s, gw, assignment("s", primary))
	t2 := seal(t, primary, s.key.Public(), state("s", 2, 10))
	if err := s.hold.Accept(primary.peer, t2); err != nil {
		t.Fatal(err)
	}
	rejected(t, s, s.hold.Accept(primary.peer, seal(t, primary, s.key.Public(), state("s", 1, 10))), sessioncache.ReasonReplayed)
	if _, st, _ := s.hold.Get("s"); st == nil || st.Turn != 2 {
		t.Fatalf("held state %+v after a replay, want turn 2", st)
	}
}

func TestRejectWrongPrimary(t *testing.T) {
	gw, primary, rogue, s := newMachine(t), newMachine(t), newMachine(t), newSuccessor(t, nil)
	assigned(t, s, gw, assignment("s", primary))
	// Another machine signs a state and sends it claiming nothing: it is
	// not the session's primary, whichever peer it sends from.
	rejected(t, s, s.hold.Accept(primary.peer, seal(t, rogue, s.key.Public(), state("s", 1, 10))), sessioncache.ReasonWrongPrimary)
}

func TestRejectWrongPrimaryRelay(t *testing.T) {
	gw, primary, rogue, s := newMachine(t), newMachine(t), newMachine(t), newSuccessor(t, nil)
	assigned(t, s, gw, assignment("s", primary))
	// The primary's genuine state relayed by another peer.
	rejected(t, s, s.hold.Accept(rogue.peer, seal(t, primary, s.key.Public(), state("s", 1, 10))), sessioncache.ReasonWrongPrimary)
}

func TestRejectUnassigned(t *testing.T) {
	primary, s := newMachine(t), newSuccessor(t, nil)
	rejected(t, s, s.hold.Accept(primary.peer, seal(t, primary, s.key.Public(), state("s", 1, 10))), sessioncache.ReasonUnassigned)
}

func TestRejectWrongModel(t *testing.T) {
	gw, primary, s := newMachine(t), newMachine(t), newSuccessor(t, nil)
	assigned(t, s, gw, assignment("s", primary))
	st := state("s", 1, 10)
	st.ModelID = make([]byte, 32)
	rejected(t, s, s.hold.Accept(primary.peer, seal(t, primary, s.key.Public(), st)), sessioncache.ReasonWrongModel)
}

func TestRejectMalformed(t *testing.T) {
	primary, s := newMachine(t), newSuccessor(t, nil)
	rejected(t, s, s.hold.Accept(primary.peer, []byte{0xa0}), sessioncache.ReasonMalformed)
}

func TestRejectAssignmentBadSignature(t *testing.T) {
	gw, other, primary, s := newMachine(t), newMachine(t), newMachine(t), newSuccessor(t, nil)
	sa, err := sessioncache.SignAssignment(gw.key, assignment("s", primary))
	if err != nil {
		t.Fatal(err)
	}
	// Sent by another peer than the one that signed it.
	rejected(t, s, s.hold.Assign(context.Background(), other.peer, sa), sessioncache.ReasonBadSignature)
}

func TestRejectAssignmentUnfunded(t *testing.T) {
	gw, primary := newMachine(t), newMachine(t)
	var saw sessioncache.Assignment
	s := newSuccessor(t, func(_ context.Context, from peer.ID, a sessioncache.Assignment) error {
		saw = a
		if len(a.StreamID) == 0 {
			return errors.New("no standby stream")
		}
		return nil
	})
	sa, err := sessioncache.SignAssignment(gw.key, assignment("s", primary))
	if err != nil {
		t.Fatal(err)
	}
	rejected(t, s, s.hold.Assign(context.Background(), gw.peer, sa), sessioncache.ReasonUnfunded)
	if saw.SessionID != "s" || s.hold.Len() != 0 {
		t.Fatalf("funding check saw %+v; holder holds %d sessions", saw, s.hold.Len())
	}
	a := assignment("s", primary)
	a.Payer, a.StreamID, a.StreamHeight = bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32), 41
	assigned(t, s, gw, a)
	if got, _, ok := s.hold.Get("s"); !ok || !bytes.Equal(got.StreamID, a.StreamID) {
		t.Fatalf("funded assignment not held: %+v", got)
	}
	if saw.StreamHeight != 41 {
		t.Fatalf("funding check saw stream height %d, want the signed 41", saw.StreamHeight)
	}
}

func TestHolderBound(t *testing.T) {
	gw, primary := newMachine(t), newMachine(t)
	s := newSuccessor(t, nil)
	for _, id := range []string{"a", "b", "c"} {
		assigned(t, s, gw, assignment(id, primary))
	}
	if s.hold.Len() != 3 {
		t.Fatalf("%d sessions", s.hold.Len())
	}
	s.hold.Forget("b")
	if _, _, ok := s.hold.Get("b"); ok {
		t.Fatal("forgotten session still held")
	}
}

func TestKeyPersists(t *testing.T) {
	p := filepath.Join(t.TempDir(), "session-cache.key")
	k1, err := sessioncache.LoadOrCreateKey(p)
	if err != nil {
		t.Fatal(err)
	}
	k2, err := sessioncache.LoadOrCreateKey(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(k1.Public(), k2.Public()) || len(k1.Public()) != sessioncache.PublicKeySize {
		t.Fatalf("reloaded key differs or is %d bytes", len(k1.Public()))
	}
}

func TestChecks(t *testing.T) {
	primary := newMachine(t)
	for name, a := range map[string]sessioncache.Assignment{
		"no session":              {ModelID: testModel, PrimaryPeer: primary.peer, PrimaryMachine: primary.machineID()},
		"model":                   {SessionID: "s", ModelID: []byte{1}, PrimaryPeer: primary.peer, PrimaryMachine: primary.machineID()},
		"machine":                 {SessionID: "s", ModelID: testModel, PrimaryPeer: primary.peer},
		"peer":                    {SessionID: "s", ModelID: testModel, PrimaryPeer: "x", PrimaryMachine: primary.machineID()},
		"stream":                  {SessionID: "s", ModelID: testModel, PrimaryPeer: primary.peer, PrimaryMachine: primary.machineID(), StreamID: make([]byte, 32)},
		"height without a stream": {SessionID: "s", ModelID: testModel, PrimaryPeer: primary.peer, PrimaryMachine: primary.machineID(), StreamHeight: 5},
		"negative height": {SessionID: "s", ModelID: testModel, PrimaryPeer: primary.peer, PrimaryMachine: primary.machineID(),
			Payer: make([]byte, 32), StreamID: make([]byte, 32), StreamHeight: -1},
	} {
		if _, err := sessioncache.SignAssignment(primary.key, a); err == nil {
			t.Errorf("%s: bad assignment signed", name)
		}
	}
	for name, st := range map[string]*sessioncache.State{
		"turn 0":    state("s", 0, 3),
		"no tokens": state("s", 1, 0),
		"token":     {SessionID: "s", Turn: 1, ModelID: testModel, Tokens: []uint32{1 << 31}},
	} {
		if _, err := sessioncache.Seal(primary.sess, make([]byte, 1216), st); err == nil {
			t.Errorf("%s: bad state sealed", name)
		}
	}
}
