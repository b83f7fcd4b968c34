package p2p

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/libp2p/go-libp2p/core/crypto"
	cryptopb "github.com/libp2p/go-libp2p/core/crypto/pb"
	"github.com/libp2p/go-libp2p/core/peer"
)

// LoadOrCreateKey returns the Ed25519 libp2p key stored at path, creating it
// (and its directory, mode 0700) on first use. The file holds the key in
// libp2p's protobuf encoding (crypto.MarshalPrivateKey) and is created with
// mode 0600. Creation is atomic and exclusive: two processes racing on the
// same path end up with the same key.
func LoadOrCreateKey(path string) (crypto.PrivKey, error) {
	if path == "" {
		return nil, errors.New("p2p: key file path is empty")
	}
	k, err := readKey(path)
	if err == nil {
		return k, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}

	priv, _, err := crypto.GenerateEd25519Key(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("p2p: generate key: %w", err)
	}
	raw, err := crypto.MarshalPrivateKey(priv)
	if err != nil {
		return nil, fmt.Errorf("p2p: encode key: %w", err)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("p2p: create key directory: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".p2p-key-*")
	if err != nil {
		return nil, fmt.Errorf("p2p: create key file: %w", err)
	}
	tmpName := tmp.Name()
	defer os.Remove(tmpName) //nolint:errcheck // after a successful link this only drops the temp name
	if err := tmp.Chmod(0o600); err != nil {
		return nil, fmt.Errorf("p2p: create key file: %w", errors.Join(err, tmp.Close()))
	}
	if _, err := tmp.Write(raw); err != nil {
		return nil, fmt.Errorf("p2p: write key file: %w", errors.Join(err, tmp.Close()))
	}
	if err := tmp.Sync(); err != nil {
		return nil, fmt.Errorf("p2p: write key file: %w", errors.Join(err, tmp.Close()))
	}
	if err := tmp.Close(); err != nil {
		return nil, fmt.Errorf("p2p: write key file: %w", err)
	}
	// Link fails if path exists, so a concurrent creator's key is never
	// overwritten; in that case use the key that won.
	if err := os.Link(tmpName, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return readKey(path)
		}
		return nil, fmt.Errorf("p2p: install key file: %w", err)
	}
	slog.Default().Info("p2p: created peer key", "path", path, "peer", peerIDOrEmpty(priv))
	return priv, nil
}

// PeerIDFromKeyFile returns the peer ID of the key stored at path. It never
// creates the file: call LoadOrCreateKey first (e.g. during `init`) when the
// key may not exist yet.
func PeerIDFromKeyFile(path string) (peer.ID, error) {
	k, err := readKey(path)
	if err != nil {
		return "", err
	}
	id, err := peer.IDFromPrivateKey(k)
	if err != nil {
		return "", fmt.Errorf("p2p: peer id from %s: %w", path, err)
	}
	return id, nil
}

func readKey(path string) (crypto.PrivKey, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("p2p: read key file: %w", err)
	}
	k, err := crypto.UnmarshalPrivateKey(raw)
	if err != nil {
		return nil, fmt.Errorf("p2p: key file %s: not a libp2p private key: %w", path, err)
	}
	if k.Type() != cryptopb.KeyType_Ed25519 {
		return nil, fmt.Errorf("p2p: key file %s: key type %s, want Ed25519", path, k.Type())
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 {
		slog.Default().Warn("p2p: key file is accessible by group or others", "path", path, "mode", fi.Mode().Perm().String())
	}
	return k, nil
}

func peerIDOrEmpty(k crypto.PrivKey) string {
	id, err := peer.IDFromPrivateKey(k)
	if err != nil {
		return ""
	}
	return id.String()
}
