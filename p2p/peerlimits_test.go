package p2p

import (
	"errors"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
)

// TestPeerLimits: a peer's limit and the total are enforced, a release
// frees its slot, and after Close nothing is admitted and Wait returns
// once the admitted are released.
func TestPeerLimits(t *testing.T) {
	l := NewPeerLimits(2, 3, "exchanges")
	a, b := peer.ID("a"), peer.ID("b")
	ra1, err1 := l.Admit(a)
	_, err2 := l.Admit(a)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if _, err := l.Admit(a); err == nil {
		t.Fatal("a third exchange of one peer admitted")
	}
	rb, err := l.Admit(b)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Admit(peer.ID("c")); err == nil || l.Active() != 3 {
		t.Fatalf("over the total: %v, active %d", err, l.Active())
	}
	ra1()
	if _, err := l.Admit(peer.ID("c")); err != nil {
		t.Fatalf("a freed slot: %v", err)
	}
	l.Close()
	if _, err := l.Admit(peer.ID("d")); !errors.Is(err, ErrLimitsClosed) {
		t.Fatalf("after Close: %v", err)
	}
	done := make(chan struct{})
	go func() { l.Wait(); close(done) }()
	select {
	case <-done:
		t.Fatal("Wait returned with exchanges still admitted")
	case <-time.After(20 * time.Millisecond):
	}
	rb()
	if l.Active() != 2 {
		t.Fatalf("active %d, want 2", l.Active())
	}
}
