package p2p

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/libp2p/go-libp2p/core/crypto"
	cryptopb "github.com/libp2p/go-libp2p/core/crypto/pb"
	"github.com/libp2p/go-libp2p/core/peer"
)

func TestLoadOrCreateKeyPersists(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "p2p.key")
	k1, err := LoadOrCreateKey(path)
	if err != nil {
		t.Fatal(err)
	}
	if k1.Type() != cryptopb.KeyType_Ed25519 {
		t.Fatalf("key type %v, want Ed25519", k1.Type())
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Fatalf("key file mode %v, want 0600", perm)
	}
	k2, err := LoadOrCreateKey(path)
	if err != nil {
		t.Fatal(err)
	}
	if !k1.Equals(k2) {
		t.Fatal("reloaded key differs from the created one")
	}
	want, _ := peer.IDFromPrivateKey(k1)
	got, err := PeerIDFromKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("PeerIDFromKeyFile = %s, want %s", got, want)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Fatalf("key directory holds %d entries, want only the key (temp file leaked?)", len(entries))
	}
}

func TestLoadOrCreateKeyConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p2p.key")
	const n = 8
	keys := make([]crypto.PrivKey, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k, err := LoadOrCreateKey(path)
			if err != nil {
				t.Error(err)
				return
			}
			keys[i] = k
		}()
	}
	wg.Wait()
	for i := 1; i < n; i++ {
		if keys[i] == nil || !keys[0].Equals(keys[i]) {
			t.Fatalf("concurrent creators got different keys (%d)", i)
		}
	}
}

func TestKeyFileErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := PeerIDFromKeyFile(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("PeerIDFromKeyFile(missing) = %v, want fs.ErrNotExist", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal("PeerIDFromKeyFile created the key file")
	}
	garbage := filepath.Join(dir, "garbage")
	if err := os.WriteFile(garbage, []byte("not a key"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOrCreateKey(garbage); err == nil {
		t.Fatal("LoadOrCreateKey accepted a garbage file")
	}
	raw, _ := os.ReadFile(garbage)
	if string(raw) != "not a key" {
		t.Fatal("LoadOrCreateKey overwrote an unreadable key file")
	}
	// A valid libp2p key of another type is refused.
	sk, _, err := crypto.GenerateSecp256k1Key(nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := crypto.MarshalPrivateKey(sk)
	other := filepath.Join(dir, "secp")
	if err := os.WriteFile(other, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOrCreateKey(other); err == nil {
		t.Fatal("LoadOrCreateKey accepted a secp256k1 key")
	}
}
