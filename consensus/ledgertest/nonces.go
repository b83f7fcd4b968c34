package ledgertest

import (
	"crypto/ed25519"
	"sync"
	"testing"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// Nonces signs transactions at per-account nonces it tracks itself, for
// tests that submit several transactions of one account before any
// commits (a node's account query would give each the same nonce).
type Nonces struct {
	chainID string
	mu      sync.Mutex
	next    map[terms.AccountID]uint64
}

// NewNonces tracks nonces on chainID, every account starting at 0.
func NewNonces(chainID string) *Nonces {
	return &Nonces{chainID: chainID, next: map[terms.AccountID]uint64{}}
}

// Signer is k's signer on the chain.
func (n *Nonces) Signer(k ed25519.PrivateKey) *ledger.Signer { return ledger.NewSigner(k, n.chainID) }

// Sign signs payload as k's next transaction.
func (n *Nonces) Sign(t testing.TB, k ed25519.PrivateKey, payload any) []byte {
	t.Helper()
	n.mu.Lock()
	defer n.mu.Unlock()
	s := n.Signer(k)
	raw := SignTx(t, s, n.next[s.Account()], payload)
	n.next[s.Account()]++
	return raw
}

// Unsign gives back a's last nonce, for a transaction the test signed
// but will not submit.
func (n *Nonces) Unsign(a terms.AccountID) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.next[a]--
}
