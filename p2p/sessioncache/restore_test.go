package sessioncache_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/p2p/sessioncache"
)

// reopen is the successor s restarted: a new Holder with the same key
// over the store in dir, restored.
func reopen(t testing.TB, s *successor, dir string) (*sessioncache.Holder, []sessioncache.Restored) {
	t.Helper()
	st, err := sessioncache.OpenDirStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	h, err := sessioncache.NewHolder(sessioncache.HolderConfig{Key: s.key, Session: s.sessionFn(),
		Standby: func(id []byte) bool { return bytes.Equal(id, testModel) }, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	rs, err := h.Restore()
	if err != nil {
		t.Fatal(err)
	}
	return h, rs
}

// storedSuccessor is a successor whose holder persists into dir.
func storedSuccessor(t testing.TB, dir string) *successor {
	t.Helper()
	s := newSuccessor(t, nil)
	s.hold, _ = reopen(t, s, dir)
	return s
}

// heldOne is a stored successor in dir holding turn 1 (of n tokens) of
// session "s".
func heldOne(t *testing.T, dir string, n int) *successor {
	t.Helper()
	gw, primary := newMachine(t), newMachine(t)
	s := storedSuccessor(t, dir)
	assigned(t, s, gw, assignment("s", primary))
	if err := s.hold.Accept(primary.peer, seal(t, primary, s.key.Public(), state("s", 1, n))); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestHolderRestartKeepsState: a successor restarted with its store holds
// the latest accepted state (re-verified from the bytes the primary
// sealed) and proves it; it still refuses an older turn.
func TestHolderRestartKeepsState(t *testing.T) {
	dir := t.TempDir()
	gw, primary := newMachine(t), newMachine(t)
	s := storedSuccessor(t, dir)
	assigned(t, s, gw, assignment("s", primary))
	assigned(t, s, gw, assignment("idle", primary)) // assigned, no state yet
	for turn := uint32(1); turn <= 2; turn++ {
		if err := s.hold.Accept(primary.peer, seal(t, primary, s.key.Public(), state("s", turn, 20))); err != nil {
			t.Fatal(err)
		}
	}
	nonce := bytes.Repeat([]byte{1}, sessioncache.NonceSize)
	before, err := s.hold.Prove("s", nonce)
	if err != nil {
		t.Fatal(err)
	}
	want, err := sessioncache.VerifyProof(before, s.peer, "s", nonce, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	h, rs := reopen(t, s, dir)
	if len(rs) != 2 || h.Len() != 2 {
		t.Fatalf("restored %d sessions (holder %d), want 2", len(rs), h.Len())
	}
	for _, r := range rs {
		if r.Gateway != gw.peer || r.A.PrimaryPeer != primary.peer {
			t.Fatalf("restored %+v", r)
		}
		if (r.A.SessionID == "s") != (r.State != nil) || r.State != nil && (r.State.Turn != 2 || len(r.State.Tokens) != 20) {
			t.Fatalf("restored %s with state %+v", r.A.SessionID, r.State)
		}
	}
	after, err := h.Prove("s", nonce)
	if err != nil {
		t.Fatal(err)
	}
	got, err := sessioncache.VerifyProof(after, s.peer, "s", nonce, time.Now())
	if err != nil || got.Turn != 2 || !bytes.Equal(got.StateHash, want.StateHash) {
		t.Fatalf("proof after restart %+v %v, want turn 2 hash %x", got, err, want.StateHash)
	}
	var r *sessioncache.Rejection
	if err := h.Accept(primary.peer, seal(t, primary, s.key.Public(), state("s", 2, 20))); !errors.As(err, &r) || r.Reason != sessioncache.ReasonReplayed {
		t.Fatalf("turn 2 again after a restart: %v", err)
	}
	// Forgetting removes it from the store as well.
	h.Forget("s")
	if _, rs := reopen(t, s, dir); len(rs) != 1 || rs[0].A.SessionID != "idle" {
		t.Fatalf("after Forget, restored %+v", rs)
	}
}

// TestHolderRestartWithoutState: a successor restarted without its store
// (or with another key) holds nothing and says so to a challenge, which
// is what makes the gateway replace it.
func TestHolderRestartWithoutState(t *testing.T) {
	dir := t.TempDir()
	s := heldOne(t, dir, 5)
	fresh, rs := reopen(t, s, t.TempDir())
	if len(rs) != 0 {
		t.Fatalf("restored %d from an empty store", len(rs))
	}
	var r *sessioncache.Rejection
	if _, err := fresh.Prove("s", make([]byte, sessioncache.NonceSize)); !errors.As(err, &r) || r.Reason != sessioncache.ReasonUnassigned {
		t.Fatalf("challenge of a restarted successor without state: %v", err)
	}
	// Another key cannot open what was sealed to the first: the record
	// is dropped, not trusted.
	other, err := sessioncache.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	s2 := *s
	s2.key = other
	if _, rs := reopen(t, &s2, dir); len(rs) != 0 {
		t.Fatalf("restored %d states sealed to another key", len(rs))
	}
	if _, rs := reopen(t, s, dir); len(rs) != 0 {
		t.Fatal("a record that failed to restore was kept")
	}
}

// TestHolderRestoreRefusesTampered: a stored record altered on disk (the
// sealed state, or the gateway's statement) is dropped at restore.
func TestHolderRestoreRefusesTampered(t *testing.T) {
	dir := t.TempDir()
	s := heldOne(t, dir, 50)
	files, err := filepath.Glob(filepath.Join(dir, "*.rec"))
	if err != nil || len(files) != 1 {
		t.Fatalf("stored files %v %v", files, err)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range []int{len(b) - 20, len(b) / 3} {
		c := bytes.Clone(b)
		c[at] ^= 0x40
		if err := os.WriteFile(files[0], c, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, rs := reopen(t, s, dir); len(rs) != 0 {
			t.Fatalf("byte %d flipped: restored %+v", at, rs)
		}
	}
}

// TestProofAttacks: a challenge's answer binds the nonce, the session and
// the successor: a replayed answer, an answer for another session and
// one signed by another successor are each refused; a stale turn is the
// gateway's to judge, and the proof carries it faithfully.
func TestProofAttacks(t *testing.T) {
	gw, primary := newMachine(t), newMachine(t)
	s, other := newSuccessor(t, nil), newSuccessor(t, nil)
	for _, h := range []*successor{s, other} {
		assigned(t, h, gw, assignment("a", primary))
		assigned(t, h, gw, assignment("b", primary))
	}
	if err := s.hold.Accept(primary.peer, seal(t, primary, s.key.Public(), state("a", 3, 5))); err != nil {
		t.Fatal(err)
	}
	n1, n2 := bytes.Repeat([]byte{1}, sessioncache.NonceSize), bytes.Repeat([]byte{2}, sessioncache.NonceSize)
	p1, err := s.hold.Prove("a", n1)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if p, err := sessioncache.VerifyProof(p1, s.peer, "a", n1, now); err != nil || p.Turn != 3 {
		t.Fatalf("a fair answer: %+v %v", p, err)
	}
	if _, err := sessioncache.VerifyProof(p1, s.peer, "a", n2, now); err == nil {
		t.Fatal("an answer replayed to a later challenge was accepted")
	}
	if _, err := sessioncache.VerifyProof(p1, s.peer, "b", n1, now); err == nil {
		t.Fatal("an answer for session a was accepted for session b")
	}
	if _, err := sessioncache.VerifyProof(p1, other.peer, "a", n1, now); err == nil {
		t.Fatal("an answer signed by another successor was accepted for this one")
	}
	stale, err := s.hold.Prove("b", n2)
	if err != nil {
		t.Fatal(err)
	}
	if p, err := sessioncache.VerifyProof(stale, s.peer, "b", n2, now); err != nil || p.Turn != 0 || len(p.StateHash) != 0 {
		t.Fatalf("an answer for a session without state: %+v %v", p, err)
	}
	c := bytes.Clone(p1)
	c[len(c)-5] ^= 1
	if _, err := sessioncache.VerifyProof(c, s.peer, "a", n1, now); err == nil {
		t.Fatal("an altered answer was accepted")
	}
}

// memStore is a Store of one record the fuzzer writes.
type memStore map[string][]byte

func (m memStore) Put(id string, b []byte) error   { m[id] = b; return nil }
func (m memStore) Delete(id string) error          { delete(m, id); return nil }
func (m memStore) All() (map[string][]byte, error) { return m, nil }

// FuzzRestoreRecord: whatever a stored record holds, Restore neither
// panics nor keeps a record it cannot verify.
func FuzzRestoreRecord(f *testing.F) {
	dir := f.TempDir()
	gw, primary := newMachine(f), newMachine(f)
	s := storedSuccessor(f, dir)
	sa, err := sessioncache.SignAssignment(gw.key, assignment("s", primary))
	if err != nil {
		f.Fatal(err)
	}
	if err := s.hold.Assign(context.Background(), gw.peer, sa); err != nil {
		f.Fatal(err)
	}
	if err := s.hold.Accept(primary.peer, seal(f, primary, s.key.Public(), state("s", 1, 5))); err != nil {
		f.Fatal(err)
	}
	st, err := sessioncache.OpenDirStore(dir)
	if err != nil {
		f.Fatal(err)
	}
	recs, err := st.All()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(recs["s"])
	f.Add([]byte{0xa0})
	f.Fuzz(func(t *testing.T, b []byte) {
		m := memStore{"s": b}
		h, err := sessioncache.NewHolder(sessioncache.HolderConfig{Key: s.key, Session: s.sessionFn(), Store: m})
		if err != nil {
			t.Fatal(err)
		}
		rs, err := h.Restore()
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) != len(m) || len(rs) > 1 {
			t.Fatalf("restored %d, store keeps %d", len(rs), len(m))
		}
	})
}
