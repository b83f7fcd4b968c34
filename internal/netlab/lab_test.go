package netlab

import (
	"context"
	"net"
	"net/netip"
	"testing"
	"time"
)

// newLab builds a Lab for t and checks at cleanup that it left nothing.
func newLab(t *testing.T, prefix string) *Lab {
	t.Helper()
	l, err := New(prefix)
	if err != nil {
		t.Fatalf("%v (this test needs root and `ip netns`; CI runs it as root)", err)
	}
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Error(err)
		}
		left, err := Leftovers(prefix)
		if err != nil {
			t.Fatal(err)
		}
		if len(left) > 0 {
			t.Errorf("namespaces left after Close: %v", left)
		}
	})
	return l
}

// udpEcho listens on UDP inside h's namespace and answers each datagram
// with the source address it came from, as the far side observed it.
func udpEcho(t *testing.T, h Host) netip.AddrPort {
	t.Helper()
	pc, err := In(h.NS, func() (net.PacketConn, error) { return net.ListenPacket("udp4", h.IP.String()+":0") })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 64)
		for {
			_, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			_, _ = pc.WriteTo([]byte(from.String()), from)
		}
	}()
	return pc.LocalAddr().(*net.UDPAddr).AddrPort()
}

// observed sends from one UDP socket inside h (local port 40000) to each
// echo and returns the source addresses they saw.
func observed(t *testing.T, h Host, echoes []netip.AddrPort) []netip.AddrPort {
	t.Helper()
	pc, err := In(h.NS, func() (net.PacketConn, error) { return net.ListenPacket("udp4", h.IP.String()+":40000") })
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	var out []netip.AddrPort
	buf := make([]byte, 64)
	for _, e := range echoes {
		if _, err := pc.WriteTo([]byte("?"), net.UDPAddrFromAddrPort(e)); err != nil {
			t.Fatal(err)
		}
		// Loss is impossible on veths, so one datagram suffices; the
		// deadline only ends a broken run.
		_ = pc.SetReadDeadline(time.Now().Add(10 * time.Second))
		n, _, err := pc.ReadFrom(buf)
		if err != nil {
			t.Fatalf("%s → %s: %v", h.Name, e, err)
		}
		ap, err := netip.ParseAddrPort(string(buf[:n]))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ap)
	}
	return out
}

// TestLabNAT builds three public hosts and two homes, one behind each
// kind of NAT, and checks what the internet sees of each home: the
// router's address always; the local port kept, for every destination,
// behind the easy NAT; a port drawn afresh per destination behind the hard
// one; and no way in for a connection the home did not open. Cleanup
// asserts that no namespace (and so no veth, bridge or rule) is left.
func TestLabNAT(t *testing.T) {
	l := newLab(t, "tznl")
	var echoes []netip.AddrPort
	var pubs []Host
	for _, n := range []string{"a", "b", "c"} {
		h, err := l.AddPublic(n)
		if err != nil {
			t.Fatal(err)
		}
		if !PublicPrefix.Contains(h.IP) || h.Public != h.IP {
			t.Fatalf("public host %s at %s (public %s), want one address in %s", n, h.IP, h.Public, PublicPrefix)
		}
		pubs = append(pubs, h)
		echoes = append(echoes, udpEcho(t, h))
	}
	easy, err := l.AddBehindNAT("easy", EasyNAT)
	if err != nil {
		t.Fatal(err)
	}
	hard, err := l.AddBehindNAT("hard", HardNAT)
	if err != nil {
		t.Fatal(err)
	}
	for _, ap := range observed(t, easy, echoes) {
		if ap != netip.AddrPortFrom(easy.Public, 40000) {
			t.Errorf("behind the easy NAT: seen as %s, want %s:40000 at every destination", ap, easy.Public)
		}
	}
	seen := map[uint16]bool{}
	for _, ap := range observed(t, hard, echoes) {
		if ap.Addr() != hard.Public {
			t.Errorf("behind the hard NAT: seen from %s, want the router's %s", ap.Addr(), hard.Public)
		}
		seen[ap.Port()] = true
	}
	// Three independent random ports all equal is a 1-in-4·10⁹ event.
	if len(seen) == 1 {
		t.Errorf("behind the hard NAT: the same port %v at all three destinations; want one per destination", seen)
	}
	// Public hosts reach one another directly.
	ln, err := In(pubs[1].NS, func() (net.Listener, error) { return net.Listen("tcp4", pubs[1].IP.String()+":0") })
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := DialContext(context.Background(), pubs[0].NS, "tcp4", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	// Nothing gets into a home unasked: the router drops the dial.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if c, err := DialContext(ctx, pubs[0].NS, "tcp4", netip.AddrPortFrom(easy.Public, 40000).String()); err == nil {
		c.Close()
		t.Errorf("a dial from the internet into the easy home's router got through")
	}
	// And nothing leads out: a namespace has no route beyond the internet.
	if c, err := DialContext(context.Background(), pubs[0].NS, "tcp4", "192.0.2.1:80"); err == nil {
		c.Close()
		t.Errorf("a public host reached 192.0.2.1 outside the lab")
	}
}

// TestLabSweep leaves a Lab behind with a process running inside, as a
// killed run would, and checks that the next New of its prefix removes
// both, and that a failed New says why.
func TestLabSweep(t *testing.T) {
	old, err := New("tzsw")
	if err != nil {
		t.Fatalf("%v (this test needs root and `ip netns`; CI runs it as root)", err)
	}
	h, err := old.AddPublic("a")
	if err != nil {
		t.Fatal(err)
	}
	sleeper := Command(h.NS, "sleep", "600")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- sleeper.Wait() }()

	l := newLab(t, "tzsw") // sweeps old, never closed
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		_ = sleeper.Process.Kill()
		t.Fatal("the process left in a swept namespace still runs 30 s later")
	}
	left, err := Leftovers("tzsw")
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 1 || left[0] != l.hub {
		t.Errorf("after the sweep: %v, want only the new lab's %s", left, l.hub)
	}
	if _, err := New("Bad-Prefix"); err == nil {
		t.Error("New accepted a prefix with capitals and a dash")
	}
}
