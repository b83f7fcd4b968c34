package identity

import (
	"fmt"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
)

// CertCache remembers certificates whose signatures have been verified, so
// a provider's many messages or receipts under one session pay for the
// hardware, ML-DSA-65 and peer-key verifications once. The validity window
// and the pin are still checked on every use.
type CertCache struct {
	verified *lru.Cache[[32]byte, struct{}]
}

// NewCertCache returns a cache of up to size certificates.
func NewCertCache(size int) *CertCache {
	c, err := lru.New[[32]byte, struct{}](size)
	if err != nil {
		panic(fmt.Sprintf("identity: cert cache size %d: %v", size, err))
	}
	return &CertCache{verified: c}
}

// Verify is Certificate.Verify with the signature checks cached. A nil
// cache verifies fully every time.
func (cc *CertCache) Verify(c *Certificate, pinned MachineID, now time.Time) error {
	if cc == nil {
		return c.Verify(pinned, now)
	}
	h := c.Hash()
	if !cc.verified.Contains(h) {
		if err := c.Verify(pinned, now); err != nil {
			return err
		}
		cc.verified.Add(h, struct{}{})
		return nil
	}
	if !pinned.IsZero() && MachineID(c.MachineID) != pinned {
		return fmt.Errorf("%w: got %x, pinned %s", ErrMachineMismatch, c.MachineID, pinned)
	}
	nowMS := now.UnixMilli()
	if nowMS < c.NotBefore-ClockSkew.Milliseconds() {
		return fmt.Errorf("%w: valid from %s", ErrCertNotYetValid, time.UnixMilli(c.NotBefore).UTC().Format(time.RFC3339))
	}
	if nowMS > c.NotAfter+ClockSkew.Milliseconds() {
		return fmt.Errorf("%w: at %s", ErrCertExpired, time.UnixMilli(c.NotAfter).UTC().Format(time.RFC3339))
	}
	return nil
}
