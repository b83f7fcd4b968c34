package scale

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/receipts/hwkey"
	"github.com/tenzrod/tenzrod/receipts/identity"
)

// member is one simulated machine: its software identity, libp2p key and
// a session certified for that key, made once and reused by every size.
type member struct {
	id       *identity.Identity
	key      crypto.PrivKey
	peer     peer.ID
	sess     *identity.Session
	machine  identity.MachineID
	operator ed25519.PrivateKey // the machine's operator account
}

// Pool holds the identities of a run. Generating one costs two key pairs
// and three signatures (about a millisecond), so sizes share them.
type Pool struct {
	dir string
	now time.Time

	mu      sync.Mutex
	members map[string][]*member // by role: "provider", "core"
}

// sessionLife covers the longest run with room to spare.
const sessionLife = 6 * time.Hour

// NewPool returns an empty pool keeping its key files under a temporary
// directory; Close removes it.
func NewPool() (*Pool, error) {
	dir, err := os.MkdirTemp("", "tenzro-scale")
	if err != nil {
		return nil, fmt.Errorf("scale: pool: %w", err)
	}
	return &Pool{dir: dir, now: time.Now(), members: map[string][]*member{}}, nil
}

// get returns member i of role, generating the pool up to it.
func (p *Pool) get(role string, i int) (*member, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.members[role]) <= i {
		m, err := p.generate(fmt.Sprintf("%s-%d", role, len(p.members[role])))
		if err != nil {
			return nil, err
		}
		p.members[role] = append(p.members[role], m)
	}
	return p.members[role][i], nil
}

func (p *Pool) generate(i string) (*member, error) {
	id, err := identity.Open(hwkey.Config{Backend: hwkey.BackendSoftware, Dir: filepath.Join(p.dir, i)})
	if err != nil {
		return nil, fmt.Errorf("scale: identity %s: %w", i, err)
	}
	key, _, err := crypto.GenerateEd25519Key(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("scale: peer key %s: %w", i, err)
	}
	pid, err := peer.IDFromPrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("scale: peer id %s: %w", i, err)
	}
	sess, err := id.IssueSession(key, p.now.Add(-time.Minute), p.now.Add(sessionLife))
	if err != nil {
		return nil, fmt.Errorf("scale: session %s: %w", i, err)
	}
	_, op, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("scale: operator %s: %w", i, err)
	}
	return &member{id: id, key: key, peer: pid, sess: sess, machine: id.MachineID(), operator: op}, nil
}

// Close releases the identities and removes their files.
func (p *Pool) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, ms := range p.members {
		for _, m := range ms {
			_ = m.id.Close()
		}
	}
	p.members = map[string][]*member{}
	return os.RemoveAll(p.dir)
}

// modelID is the catalog ID of simulated model k; k < 0 is the popular
// model every provider serves, and darkModel one nobody gossips.
func modelID(k int) [32]byte { return sha256.Sum256(fmt.Appendf(nil, "tenzro/scale/model/%d", k)) }

const (
	popularModel = -1
	darkModel    = -2
)
