package sessioncache

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"

	"github.com/cloudflare/circl/hpke"
	"github.com/cloudflare/circl/kem"

	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/identity"
)

// The envelope of a sealed state.
const (
	StateDomain      = "tenzro/v1/session-state"
	StatePayloadType = "tenzro.session-state"
)

// PublicKeySize is an X-Wing public key's size (gossip.StandbyKeySize).
const PublicKeySize = 1216

// encSize is the size of an X-Wing encapsulation (the HPKE enc).
const encSize = 1120

// suite is HPKE with KEM X-Wing (X25519 + ML-KEM-768), HKDF-SHA256 and
// AES-128-GCM.
var suite = hpke.NewSuite(hpke.KEM_XWING, hpke.KDF_HKDF_SHA256, hpke.AEAD_AES128GCM)

// hpkeInfo separates this use of the suite from any other.
var hpkeInfo = []byte("tenzro/v1/session-cache")

// Sealed is the signed payload of a state frame: the HPKE ciphertext of
// the state with what the successor checks before opening it.
type Sealed struct {
	SessionID string `cbor:"1,keyasint"`
	Turn      uint32 `cbor:"2,keyasint"`
	// Recipient is the SHA-256 of the X-Wing public key it is sealed to,
	// so a successor tells a state meant for another key from an altered
	// one.
	Recipient  []byte `cbor:"3,keyasint"`
	StateHash  []byte `cbor:"4,keyasint"`
	Enc        []byte `cbor:"5,keyasint"` // the HPKE encapsulated key
	Ciphertext []byte `cbor:"6,keyasint"`
}

func (s *Sealed) check() error {
	if err := checkSessionID(s.SessionID); err != nil {
		return err
	}
	switch {
	case s.Turn == 0:
		return errors.New("turn must be at least 1")
	case len(s.Recipient) != HashSize || len(s.StateHash) != HashSize:
		return fmt.Errorf("recipient and state hash must be %d bytes", HashSize)
	case len(s.Enc) != encSize:
		return fmt.Errorf("encapsulated key of %d bytes, want %d", len(s.Enc), encSize)
	case len(s.Ciphertext) == 0:
		return errors.New("no ciphertext")
	}
	return nil
}

// PrivateKey is a successor's X-Wing key pair.
type PrivateKey struct {
	sk  kem.PrivateKey
	pub []byte
}

// GenerateKey makes a new X-Wing key pair.
func GenerateKey() (*PrivateKey, error) {
	_, sk, err := hpke.KEM_XWING.Scheme().GenerateKeyPair()
	if err != nil {
		return nil, fmt.Errorf("sessioncache: generate key: %w", err)
	}
	return fromPrivate(sk)
}

func fromPrivate(sk kem.PrivateKey) (*PrivateKey, error) {
	pub, err := sk.Public().MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("sessioncache: public key: %w", err)
	}
	return &PrivateKey{sk: sk, pub: pub}, nil
}

// Public returns the X-Wing public key to announce (PublicKeySize bytes).
func (k *PrivateKey) Public() []byte { return append([]byte(nil), k.pub...) }

// LoadOrCreateKey reads the key pair persisted at path (the 32-byte X-Wing
// seed), or makes one and writes it there (mode 0600).
func LoadOrCreateKey(path string) (*PrivateKey, error) {
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		sk, err := hpke.KEM_XWING.Scheme().UnmarshalBinaryPrivateKey(b)
		if err != nil {
			return nil, fmt.Errorf("sessioncache: key %s: %w", path, err)
		}
		return fromPrivate(sk)
	case !errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("sessioncache: read key: %w", err)
	}
	k, err := GenerateKey()
	if err != nil {
		return nil, err
	}
	raw, err := k.sk.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("sessioncache: encode key: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("sessioncache: write key: %w", err)
	}
	if _, err := f.Write(raw); err != nil {
		return nil, fmt.Errorf("sessioncache: write key: %w", errors.Join(err, f.Close()))
	}
	if err := f.Sync(); err != nil {
		return nil, fmt.Errorf("sessioncache: write key: %w", errors.Join(err, f.Close()))
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("sessioncache: write key: %w", err)
	}
	return k, nil
}

// Seal encrypts st to the successor's X-Wing public key and signs the
// result with the primary's session key; the bytes are a state frame's
// payload (SendState).
func Seal(sess *identity.Session, successorKey []byte, st *State) ([]byte, error) {
	pt, err := st.Marshal()
	if err != nil {
		return nil, err
	}
	pk, err := hpke.KEM_XWING.Scheme().UnmarshalBinaryPublicKey(successorKey)
	if err != nil {
		return nil, fmt.Errorf("sessioncache: successor key: %w", err)
	}
	sender, err := suite.NewSender(pk, hpkeInfo)
	if err != nil {
		return nil, fmt.Errorf("sessioncache: seal: %w", err)
	}
	enc, sealer, err := sender.Setup(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("sessioncache: seal: %w", err)
	}
	h := Hash(pt)
	ct, err := sealer.Seal(pt, AAD(st.SessionID, st.Turn, h[:]))
	if err != nil {
		return nil, fmt.Errorf("sessioncache: seal: %w", err)
	}
	rcpt := sha256.Sum256(successorKey)
	payload, err := cborx.Marshal(&Sealed{SessionID: st.SessionID, Turn: st.Turn, Recipient: rcpt[:], StateHash: h[:], Enc: enc, Ciphertext: ct})
	if err != nil {
		return nil, fmt.Errorf("sessioncache: encode sealed state: %w", err)
	}
	env, err := sess.Seal(StateDomain, StatePayloadType, payload)
	if err != nil {
		return nil, fmt.Errorf("sessioncache: sign sealed state: %w", err)
	}
	return env.Marshal()
}

// OpenEnvelope decodes a state frame's payload without verifying it: the
// envelope and its sealed header.
func OpenEnvelope(b []byte) (*identity.Envelope, *Sealed, error) {
	env, err := identity.UnmarshalEnvelope(b, MaxFrameSize)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if env.Domain != StateDomain || env.PayloadType != StatePayloadType {
		return nil, nil, fmt.Errorf("%w: envelope of %q/%q, want a sealed state", ErrMalformed, env.Domain, env.PayloadType)
	}
	s := new(Sealed)
	if err := cborx.UnmarshalCanonical(env.Payload, MaxFrameSize, s); err != nil {
		return nil, nil, fmt.Errorf("%w: sealed state: %w", ErrMalformed, err)
	}
	if err := s.check(); err != nil {
		return nil, nil, fmt.Errorf("%w: sealed state: %w", ErrMalformed, err)
	}
	return env, s, nil
}

// errAltered marks a sealed state that does not open or whose plaintext
// is not what its header says.
var errAltered = errors.New("sessioncache: sealed state altered")

// open decrypts s with k and checks the plaintext against its header.
func (k *PrivateKey) open(s *Sealed) (*State, []byte, error) {
	receiver, err := suite.NewReceiver(k.sk, hpkeInfo)
	if err != nil {
		return nil, nil, fmt.Errorf("sessioncache: open: %w", err)
	}
	opener, err := receiver.Setup(s.Enc)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", errAltered, err)
	}
	pt, err := opener.Open(s.Ciphertext, AAD(s.SessionID, s.Turn, s.StateHash))
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", errAltered, err)
	}
	if h := Hash(pt); !bytes.Equal(h[:], s.StateHash) {
		return nil, nil, fmt.Errorf("%w: plaintext does not hash to the state hash", errAltered)
	}
	st, err := DecodeState(pt)
	if err != nil {
		return nil, nil, err
	}
	if st.SessionID != s.SessionID || st.Turn != s.Turn {
		return nil, nil, fmt.Errorf("%w: state of session %q turn %d under a header of %q turn %d", errAltered, st.SessionID, st.Turn, s.SessionID, s.Turn)
	}
	return st, s.StateHash, nil
}
