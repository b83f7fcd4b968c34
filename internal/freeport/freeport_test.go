package freeport

import (
	"net"
	"strconv"
	"testing"
)

func TestPortsAreDistinctBindableAndBelowTheEphemeralRange(t *testing.T) {
	lo, hi := span()
	seen := map[int]bool{}
	for range 50 {
		p, err := TCP()
		if err != nil {
			t.Fatal(err)
		}
		if seen[p] {
			t.Fatalf("port %d handed out twice", p)
		}
		seen[p] = true
		if hi > lo && (p < lo || p >= hi) {
			t.Fatalf("port %d outside [%d, %d)", p, lo, hi)
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			t.Fatalf("port %d not bindable: %v", p, err)
		}
		_ = l.Close()
	}
}

// Another process (here: another open of the lock file) cannot claim a
// port this one holds.
func TestHeldPortCannotBeClaimedAgain(t *testing.T) {
	p, err := TCP()
	if err != nil {
		t.Fatal(err)
	}
	if f, ok := claim(p); ok {
		_ = f.Close()
		t.Fatalf("port %d claimed while held", p)
	}
}

func TestPortInUseIsSkipped(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if bindable(l.Addr().(*net.TCPAddr).Port) {
		t.Fatal("a port with a listener counted as bindable")
	}
}
