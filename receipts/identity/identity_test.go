package identity

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloudflare/circl/sign/mldsa/mldsa65"

	"github.com/tenzrod/tenzrod/receipts/hwkey"
)

func TestEndToEnd(t *testing.T) {
	for _, b := range backends {
		t.Run(string(b), func(t *testing.T) {
			id := openIdentity(t, b, t.TempDir())
			if id.Backend() != b {
				t.Fatalf("Backend() = %s", id.Backend())
			}
			pk := newPeerKey(t)
			pid := peerOf(t, pk)
			s, err := id.IssueSession(pk, t0, t0.Add(time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			wire := marshal(t, seal(t, s, heartbeatDomain, []byte{0xa1, 0x01, 0x02}))

			got, err := UnmarshalEnvelope(wire, 64<<10)
			if err != nil {
				t.Fatalf("UnmarshalEnvelope: %v", err)
			}
			if err := got.Verify(heartbeatDomain, id.MachineID(), t0.Add(time.Minute)); err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if !bytes.Equal(got.Payload, []byte{0xa1, 0x01, 0x02}) || got.PayloadType != "tenzro.test" {
				t.Fatalf("payload round trip: %x %q", got.Payload, got.PayloadType)
			}
			if p, err := got.Cert.Peer(); err != nil || p != pid {
				t.Fatalf("Peer() = %s, %v; want %s", p, err, pid)
			}
			if k, err := got.Cert.SessionKey(); err != nil || !k.Equal(s.PublicKey()) {
				t.Fatalf("SessionKey() differs from the session's key (%v)", err)
			}
			if m, err := got.Cert.Machine(); err != nil || m != id.MachineID() || s.MachineID() != m {
				t.Fatalf("Machine() = %s, %v", m, err)
			}
			if got.Cert.Hash() != s.Cert.Hash() {
				t.Fatal("certificate hash changed over the wire")
			}
			if got.Cert.Backend != string(b) || got.Cert.HardwareBacked() != b.Hardware() {
				t.Fatalf("cert backend %q, hardware %v", got.Cert.Backend, got.Cert.HardwareBacked())
			}
			nb, na := got.Cert.Validity()
			if !nb.Equal(t0) || !na.Equal(t0.Add(time.Hour)) || !s.NotAfter().Equal(na) {
				t.Fatalf("validity %s..%s", nb, na)
			}
			if ComputeMachineID(got.Cert.HWPub, got.Cert.PQPub) != id.MachineID() {
				t.Fatal("machine ID is not the hash of the certified keys")
			}
		})
	}
}

func TestReopenGivesSameMachineID(t *testing.T) {
	for _, b := range backends {
		t.Run(string(b), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "identity")
			a := openIdentity(t, b, dir)
			want := a.MachineID()
			s := newSession(t, a)
			if err := a.Close(); err != nil {
				t.Fatal(err)
			}
			again := openIdentity(t, b, dir)
			if again.MachineID() != want {
				t.Fatalf("reopened machine ID %s, want %s", again.MachineID(), want)
			}
			// A session certified before the restart verifies against the pin.
			if err := s.Cert.Verify(again.MachineID(), t0); err != nil {
				t.Fatal(err)
			}
			if other := openIdentity(t, b, t.TempDir()); other.MachineID() == want {
				t.Fatal("two directories gave one machine ID")
			}
		})
	}
}

func TestPinnedMachineMismatch(t *testing.T) {
	a := openIdentity(t, hwkey.BackendSoftware, t.TempDir())
	b := openIdentity(t, hwkey.BackendTPMSim, t.TempDir())
	e := seal(t, newSession(t, a), heartbeatDomain, []byte("x"))
	err := e.Verify(heartbeatDomain, b.MachineID(), t0)
	if !errors.Is(err, ErrMachineMismatch) {
		t.Fatalf("Verify against another machine: %v, want ErrMachineMismatch", err)
	}
	if err := e.Verify(heartbeatDomain, MachineID{}, t0); err != nil {
		t.Fatalf("unpinned Verify: %v", err)
	}
}

func TestAlteredEnvelopeFails(t *testing.T) {
	id := openIdentity(t, hwkey.BackendSoftware, t.TempDir())
	s := newSession(t, id)
	for name, alter := range map[string]func(e *Envelope){
		"payload":      func(e *Envelope) { e.Payload[0] ^= 1 },
		"payload type": func(e *Envelope) { e.PayloadType = "tenzro.other" },
		"domain": func(e *Envelope) {
			e.Domain = announceDomain
		},
		"signature":     func(e *Envelope) { e.Sig[len(e.Sig)-1] ^= 1 },
		"other session": func(e *Envelope) { e.Cert = newSession(t, id).Cert },
	} {
		t.Run(name, func(t *testing.T) {
			e := seal(t, s, heartbeatDomain, []byte("payload"))
			if err := e.VerifySignature(); err != nil {
				t.Fatalf("unaltered: %v", err)
			}
			alter(e)
			// Verify with the envelope's own domain, so only the signature
			// can catch the change.
			err := e.Verify(e.Domain, id.MachineID(), t0)
			if !errors.Is(err, ErrBadSignature) {
				t.Fatalf("altered %s: %v, want ErrBadSignature", name, err)
			}
		})
	}
	// Sealing copies: tampering an envelope leaves the session intact.
	e := seal(t, s, heartbeatDomain, []byte("p"))
	e.Cert.HWSig[0] ^= 1
	if err := s.Cert.Verify(id.MachineID(), t0); err != nil {
		t.Fatalf("session certificate changed with its envelope: %v", err)
	}
}

func TestDomainSeparation(t *testing.T) {
	id := openIdentity(t, hwkey.BackendSoftware, t.TempDir())
	e := seal(t, newSession(t, id), heartbeatDomain, []byte("p"))
	if err := e.Verify(announceDomain, id.MachineID(), t0); !errors.Is(err, ErrDomainMismatch) {
		t.Fatalf("heartbeat verified as announce: %v", err)
	}
	// Moving bytes between domain and payload type changes the signed bytes.
	pairs := [][2]string{{"ab", "c"}, {"a", "bc"}, {"abc", ""}}
	seen := map[string]bool{}
	for _, p := range pairs {
		k := string(SigningBytes(p[0], p[1], []byte("d")))
		if seen[k] {
			t.Fatalf("SigningBytes collides for %q", p)
		}
		seen[k] = true
	}
	if bytes.Equal(SigningBytes("a", "b", []byte("\x01c")), SigningBytes("a", "b\x01", []byte("c"))) {
		t.Fatal("SigningBytes collides across payload type and payload")
	}
}

func TestCertificateValidityWindow(t *testing.T) {
	id := openIdentity(t, hwkey.BackendSoftware, t.TempDir())
	s := newSession(t, id) // valid t0 .. t0+1h
	m := id.MachineID()
	for _, tc := range []struct {
		now  time.Time
		want error
	}{
		{t0.Add(-ClockSkew - time.Second), ErrCertNotYetValid},
		{t0.Add(-ClockSkew + time.Second), nil},
		{t0.Add(time.Hour + ClockSkew - time.Second), nil},
		{t0.Add(time.Hour + ClockSkew + time.Second), ErrCertExpired},
		{t0.Add(48 * time.Hour), ErrCertExpired},
	} {
		err := s.Cert.Verify(m, tc.now)
		if (tc.want == nil && err != nil) || (tc.want != nil && !errors.Is(err, tc.want)) {
			t.Errorf("Verify at %s: %v, want %v", tc.now, err, tc.want)
		}
	}
	e := seal(t, s, heartbeatDomain, []byte("p"))
	if err := e.Verify(heartbeatDomain, m, t0.Add(2*time.Hour)); !errors.Is(err, ErrCertExpired) {
		t.Fatalf("envelope with expired cert: %v", err)
	}
}

func TestTamperedCertificateFails(t *testing.T) {
	a := openIdentity(t, hwkey.BackendTPMSim, t.TempDir())
	b := openIdentity(t, hwkey.BackendSoftware, t.TempDir())
	base := newSession(t, a).Cert
	otherCert := newSession(t, b).Cert
	otherSession := newSession(t, a).Cert
	cases := []struct {
		name  string
		alter func(c *Certificate)
		want  error
	}{
		{"hw sig", func(c *Certificate) { c.HWSig[len(c.HWSig)-1] ^= 1 }, ErrBadCertSignature},
		{"pq sig", func(c *Certificate) { c.PQSig[100] ^= 1 }, ErrBadCertSignature},
		{"machine id", func(c *Certificate) { c.MachineID[0] ^= 1 }, ErrBadMachineID},
		{"session key", func(c *Certificate) { c.SessionPub = otherSession.SessionPub }, ErrBadCertSignature},
		{"peer id", func(c *Certificate) { c.PeerID = otherSession.PeerID }, ErrBadCertSignature},
		{"not after", func(c *Certificate) { c.NotAfter += 1000 }, ErrBadCertSignature},
		{"backend", func(c *Certificate) { c.Backend = "tpm" }, ErrBadCertSignature},
		{"version", func(c *Certificate) { c.Version = 2 }, ErrUnsupportedVersion},
		{"unknown backend", func(c *Certificate) { c.Backend = "file" }, ErrMalformedCert},
		{"short pq key", func(c *Certificate) { c.PQPub = c.PQPub[:100] }, ErrMalformedCert},
		{"bad hw key", func(c *Certificate) { c.HWPub = []byte{1, 2, 3} }, ErrMalformedCert},
		{"short machine id", func(c *Certificate) { c.MachineID = c.MachineID[:31] }, ErrMalformedCert},
		{"bad peer id", func(c *Certificate) { c.PeerID = []byte{0xff} }, ErrMalformedCert},
		{"inverted window", func(c *Certificate) { c.NotBefore = c.NotAfter + 1 }, ErrMalformedCert},
		{"no hw sig", func(c *Certificate) { c.HWSig = nil }, ErrMalformedCert},
		{"peer sig", func(c *Certificate) { c.PeerSig[0] ^= 1 }, ErrBadCertSignature},
		{"no peer sig", func(c *Certificate) { c.PeerSig = nil }, ErrMalformedCert},
		// Another machine's hardware key with a consistent machine ID: the
		// hardware signature no longer verifies.
		{"swapped hw key", func(c *Certificate) {
			c.HWPub = otherCert.HWPub
			m := ComputeMachineID(c.HWPub, c.PQPub)
			c.MachineID = m[:]
		}, ErrBadCertSignature},
		// Same with the ML-DSA key: the ML-DSA signature no longer verifies.
		{"swapped pq key", func(c *Certificate) {
			c.PQPub = otherCert.PQPub
			m := ComputeMachineID(c.HWPub, c.PQPub)
			c.MachineID = m[:]
		}, ErrBadCertSignature},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := base.Clone()
			if err := c.Verify(MachineID{}, t0); err != nil {
				t.Fatalf("unaltered: %v", err)
			}
			tc.alter(&c)
			if err := c.Verify(MachineID{}, t0); !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if c.Hash() == base.Hash() {
				t.Fatal("altered certificate has the same hash")
			}
		})
	}
}

// TestCertCannotClaimAnotherPeer: a machine that certifies a session for a
// peer ID whose key it does not hold cannot produce the peer signature, even
// with valid hardware and ML-DSA signatures over the claim.
func TestCertCannotClaimAnotherPeer(t *testing.T) {
	attacker := openIdentity(t, hwkey.BackendSoftware, t.TempDir())
	victim := peerOf(t, newPeerKey(t))
	s, err := attacker.IssueSession(newPeerKey(t), t0, t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	c := s.Cert.Clone()
	c.PeerID = []byte(victim)
	tbs, err := c.tbs()
	if err != nil {
		t.Fatal(err)
	}
	digest := sha256.Sum256(tbs)
	if c.HWSig, err = attacker.hw.Sign(digest[:]); err != nil {
		t.Fatal(err)
	}
	if err := mldsa65.SignTo(attacker.pq, tbs, nil, true, c.PQSig); err != nil {
		t.Fatal(err)
	}
	err = c.Verify(attacker.MachineID(), t0)
	if !errors.Is(err, ErrBadCertSignature) || !strings.Contains(err.Error(), "peer key") {
		t.Fatalf("cert claiming the victim's peer ID: %v", err)
	}
}

func TestConcurrentIdentitiesInOneProcess(t *testing.T) {
	const perBackend = 5
	type node struct {
		id *Identity
		s  *Session
	}
	nodes := make([]node, 2*perBackend)
	dirs := make([]string, len(nodes))
	for i := range dirs {
		dirs[i] = t.TempDir()
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(nodes))
	for i := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id, err := Open(hwkey.Config{Backend: backends[i%2], Dir: dirs[i]})
			if err != nil {
				errs <- err
				return
			}
			s, err := id.IssueSession(newPeerKey(t), t0, t0.Add(time.Hour))
			if err != nil {
				errs <- err
				return
			}
			nodes[i] = node{id, s}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, n := range nodes {
			n.id.Close()
		}
	})
	seen := map[MachineID]bool{}
	for i, n := range nodes {
		if seen[n.id.MachineID()] {
			t.Fatal("two nodes share a machine ID")
		}
		seen[n.id.MachineID()] = true
		// Every node's envelope verifies against its own pin and no other.
		e := seal(t, n.s, heartbeatDomain, []byte(fmt.Sprint(i)))
		for j, m := range nodes {
			err := e.Verify(heartbeatDomain, m.id.MachineID(), t0)
			if i == j && err != nil {
				t.Errorf("node %d: %v", i, err)
			}
			if i != j && !errors.Is(err, ErrMachineMismatch) {
				t.Errorf("node %d verified as node %d: %v", i, j, err)
			}
		}
	}
}

func TestOpenErrors(t *testing.T) {
	dev := filepath.Join(t.TempDir(), "tpmrm0")
	_, err := Open(hwkey.Config{Backend: hwkey.BackendTPM, Dir: t.TempDir(), Device: dev})
	if err == nil || !strings.Contains(err.Error(), `use backend "tpm-sim" or "software"`) ||
		!strings.Contains(err.Error(), "tpm device "+dev) {
		t.Fatalf("missing TPM device: %v", err)
	}
	if _, err := Open(hwkey.Config{Backend: hwkey.BackendTPM}); err == nil {
		t.Fatal("Open without a directory succeeded")
	}
	if _, err := Open(hwkey.Config{Backend: "yubikey", Dir: t.TempDir()}); err == nil {
		t.Fatal("Open with an unknown backend succeeded")
	}
}

func TestIssueSessionRejectsBadInput(t *testing.T) {
	id := openIdentity(t, hwkey.BackendSoftware, t.TempDir())
	if _, err := id.IssueSession(nil, t0, t0.Add(time.Hour)); err == nil {
		t.Error("missing peer key accepted")
	}
	if _, err := id.IssueSession(newPeerKey(t), t0, t0); err == nil {
		t.Error("empty validity window accepted")
	}
	s := newSession(t, id)
	for _, l := range []string{"", strings.Repeat("x", MaxLabelLen+1), "\xff"} {
		if _, err := s.Seal(l, "t", nil); err == nil {
			t.Errorf("Seal accepted domain %q", l)
		}
		if _, err := s.Seal(heartbeatDomain, l, nil); err == nil {
			t.Errorf("Seal accepted payload type %q", l)
		}
	}
}

func TestMachineIDText(t *testing.T) {
	id := openIdentity(t, hwkey.BackendSoftware, t.TempDir())
	m := id.MachineID()
	s := m.String()
	if len(s) != 64 || strings.ToLower(s) != s {
		t.Fatalf("String() = %q", s)
	}
	if p, err := ParseMachineID(s); err != nil || p != m {
		t.Fatalf("ParseMachineID(String()) = %s, %v", p, err)
	}
	if p, err := ParseMachineID(strings.ToUpper(s)); err != nil || p != m {
		t.Fatalf("ParseMachineID(upper) = %s, %v", p, err)
	}
	for _, bad := range []string{"", s[:62], s + "00", "zz" + s[2:]} {
		if _, err := ParseMachineID(bad); err == nil {
			t.Errorf("ParseMachineID(%q) succeeded", bad)
		}
	}
	j, err := json.Marshal(map[string]MachineID{"m": m})
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]MachineID
	if err := json.Unmarshal(j, &back); err != nil || back["m"] != m {
		t.Fatalf("JSON round trip: %s, %v", j, err)
	}
	if m.IsZero() || !(MachineID{}).IsZero() {
		t.Fatal("IsZero wrong")
	}
}
