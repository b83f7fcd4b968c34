package hwkey

import "sync"

// guard is what the software and simulator keys share: a signature is
// refused once the key is closed, and Close waits for the signatures
// under way. (The TPM key closes its device instead.)
type guard struct {
	mu     sync.RWMutex
	closed bool
}

// sign checks digest and runs f unless the key is closed.
func (g *guard) sign(digest []byte, f func() ([]byte, error)) ([]byte, error) {
	if err := checkDigest(digest); err != nil {
		return nil, err
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	if g.closed {
		return nil, ErrClosed
	}
	return f()
}

func (g *guard) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = true
	return nil
}
