package sessioncache

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/p2p"
	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/identity"
)

// DefaultClientTimeout bounds one exchange when ctx has no earlier
// deadline.
const DefaultClientTimeout = DefaultTimeout + 2*time.Second

// RefusedError is a successor's refusal, with its answer code.
type RefusedError struct {
	Code   uint32
	Reason string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("sessioncache: refused (code %d): %s", e.Code, e.Reason)
}

// Assign tells successor to that it stands by for session a, signed by
// h's libp2p key. A nil error means the successor accepted it.
func Assign(ctx context.Context, h host.Host, to peer.ID, a Assignment) error {
	sa, err := SignAssignment(h.Peerstore().PrivKey(h.ID()), a)
	if err != nil {
		return err
	}
	_, err = exchange(ctx, h, to, &Request{Assign: sa})
	return err
}

// SendState delivers a sealed state (Seal) to the session's successor.
func SendState(ctx context.Context, h host.Host, to peer.ID, sealed []byte) error {
	if len(sealed) == 0 {
		return errors.New("sessioncache: no sealed state to send")
	}
	_, err := exchange(ctx, h, to, &Request{State: sealed})
	return err
}

// Challenge asks successor to to prove which turn of sessionID it holds:
// the answer is signed by a session key certified for that peer. A
// successor that holds the session but no state yet answers turn 0.
func Challenge(ctx context.Context, h host.Host, to peer.ID, sessionID string) (turn uint32, stateHash []byte, err error) {
	if err := checkSessionID(sessionID); err != nil {
		return 0, nil, fmt.Errorf("sessioncache: challenge: %w", err)
	}
	nonce := make([]byte, NonceSize)
	if _, err := rand.Read(nonce); err != nil {
		return 0, nil, fmt.Errorf("sessioncache: challenge: %w", err)
	}
	ans, err := exchange(ctx, h, to, &Request{Challenge: &ChallengeRequest{SessionID: sessionID, Nonce: nonce}})
	if err != nil {
		return 0, nil, err
	}
	p, err := VerifyProof(ans.Proof, to, sessionID, nonce, time.Now())
	if err != nil {
		return 0, nil, err
	}
	return p.Turn, p.StateHash, nil
}

// VerifyProof checks a challenge's answer: signed by a valid session
// certificate of peer from, for this session and nonce.
func VerifyProof(b []byte, from peer.ID, sessionID string, nonce []byte, now time.Time) (*Proof, error) {
	env, err := identity.UnmarshalEnvelope(b, MaxFrameSize)
	if err != nil {
		return nil, fmt.Errorf("%w: proof: %w", ErrMalformed, err)
	}
	// The certificate chains to whatever machine it names; the gateway
	// checks that machine against the successor it assigned.
	if err := env.Verify(ProofDomain, identity.MachineID{}, now); err != nil {
		return nil, fmt.Errorf("sessioncache: proof: %w", err)
	}
	if env.PayloadType != ProofPayloadType || !bytes.Equal(env.Cert.PeerID, []byte(from)) {
		return nil, errors.New("sessioncache: proof: of another kind or another peer")
	}
	p := new(Proof)
	if err := cborx.UnmarshalCanonical(env.Payload, MaxFrameSize, p); err != nil {
		return nil, fmt.Errorf("%w: proof: %w", ErrMalformed, err)
	}
	if p.SessionID != sessionID || !bytes.Equal(p.Nonce, nonce) {
		return nil, errors.New("sessioncache: proof: for another session or nonce")
	}
	if len(p.StateHash) != 0 && len(p.StateHash) != HashSize {
		return nil, fmt.Errorf("%w: proof: state hash of %d bytes", ErrMalformed, len(p.StateHash))
	}
	return p, nil
}

// exchange sends one request on a new stream and reads the answer; a
// refusal is a *RefusedError.
func exchange(ctx context.Context, h host.Host, to peer.ID, req *Request) (*Answer, error) {
	payload, err := encode("request", req)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, DefaultClientTimeout)
	defer cancel()
	b, _, err := p2p.Call(ctx, h, to, ProtocolID, ServiceName, payload, MaxFrameSize)
	if err != nil {
		return nil, fmt.Errorf("sessioncache: %w", err)
	}
	ans, err := DecodeAnswer(b)
	if err != nil {
		return nil, fmt.Errorf("sessioncache: decode answer: %w", err)
	}
	if ans.Code != CodeOK {
		return nil, &RefusedError{Code: ans.Code, Reason: ans.Reason}
	}
	return ans, nil
}
