package hwkey

import (
	"crypto/ecdsa"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/google/go-tpm-tools/simulator"
	"github.com/google/go-tpm/tpm2/transport"

	"github.com/tenzrod/tenzrod/receipts/internal/keyfile"
)

// SimSeedFile is the name of the tpm-sim backend's seed file in Config.Dir.
const SimSeedFile = "hwkey-tpm-sim.seed"

const (
	simSeedPEMType = "TENZRO TPM SIMULATOR SEED"
	simSeedSize    = 32
)

// simKey is a primary key of the TPM simulator. It holds no simulator
// between operations (see the package documentation): every operation
// starts the simulator with the key's hierarchy seed, derives the primary
// key again and releases the simulator.
type simKey struct {
	seed   int64  // simulator hierarchy seed
	unique []byte // template unique field, so keys differ even if seeds collide
	pub    *ecdsa.PublicKey
	guard
}

func openSim(dir string) (Key, error) {
	path := filepath.Join(dir, SimSeedFile)
	secret, created, err := keyfile.LoadOrCreate(path, simSeedPEMType, func() ([]byte, error) {
		b := make([]byte, simSeedSize)
		_, err := rand.Read(b)
		return b, err
	})
	if err != nil {
		return nil, fmt.Errorf("hwkey: tpm-sim seed: %w", err)
	}
	if len(secret) != simSeedSize {
		return nil, fmt.Errorf("hwkey: tpm-sim seed %s is %d bytes, want %d", path, len(secret), simSeedSize)
	}
	k := &simKey{
		// Any 64 bits are a seed: the conversion reinterprets them, and a
		// machine's existing seed file must keep giving the same TPM.
		seed:   int64(binary.BigEndian.Uint64(secret[:8])), //nolint:gosec // G115: a bit reinterpretation, on purpose
		unique: secret,
	}
	err = k.with(func(_ transport.TPM, p *primary) error {
		k.pub = p.pub
		return nil
	})
	if err != nil {
		return nil, err
	}
	if created {
		slog.Info("hwkey: created tpm-sim identity seed (simulator, not a hardware TPM)", "path", path)
	}
	return k, nil
}

// with runs fn against a freshly started simulator holding the key's
// primary. The simulator's own package-level lock serializes with every
// other simulator user in the process.
func (k *simKey) with(fn func(t transport.TPM, p *primary) error) (err error) {
	sim, err := simulator.GetWithFixedSeedInsecure(k.seed)
	if err != nil {
		return fmt.Errorf("hwkey: tpm-sim start: %w", err)
	}
	defer func() {
		if cerr := sim.Close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("hwkey: tpm-sim stop: %w", cerr))
		}
	}()
	t := transport.FromReadWriter(sim)
	p, err := createPrimary(t, k.unique)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, flush(t, p.handle)) }()
	if k.pub != nil && !k.pub.Equal(p.pub) {
		return errors.New("hwkey: tpm-sim derived a different key than at open")
	}
	return fn(t, p)
}

func (k *simKey) Backend() Backend { return BackendTPMSim }

func (k *simKey) Public() *ecdsa.PublicKey { return k.pub }

func (k *simKey) Sign(digest []byte) ([]byte, error) {
	return k.guard.sign(digest, func() ([]byte, error) {
		var sig []byte
		err := k.with(func(t transport.TPM, p *primary) error {
			var err error
			sig, err = p.sign(t, digest)
			return err
		})
		return sig, err
	})
}
