package identity

import (
	"errors"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/receipts/hwkey"
)

// TestCertCacheRechecksPinAndWindow: a cached certificate still fails
// against another pin and outside its validity window, and a tampered one
// (another hash) is verified afresh.
func TestCertCacheRechecksPinAndWindow(t *testing.T) {
	id := openIdentity(t, hwkey.BackendSoftware, t.TempDir())
	c := newSession(t, id).Cert
	cc := NewCertCache(8)
	if err := cc.Verify(&c, id.MachineID(), t0); err != nil {
		t.Fatal(err)
	}
	if err := cc.Verify(&c, id.MachineID(), t0.Add(time.Minute)); err != nil {
		t.Fatalf("cached: %v", err)
	}
	if err := cc.Verify(&c, MachineID{1}, t0); !errors.Is(err, ErrMachineMismatch) {
		t.Fatalf("other pin: %v", err)
	}
	if err := cc.Verify(&c, id.MachineID(), t0.Add(2*time.Hour)); !errors.Is(err, ErrCertExpired) {
		t.Fatalf("expired: %v", err)
	}
	bad := c.Clone()
	bad.HWSig[len(bad.HWSig)-1] ^= 1
	if err := cc.Verify(&bad, id.MachineID(), t0); !errors.Is(err, ErrBadCertSignature) {
		t.Fatalf("tampered: %v", err)
	}
	var none *CertCache
	if err := none.Verify(&c, id.MachineID(), t0); err != nil {
		t.Fatalf("nil cache: %v", err)
	}
}
