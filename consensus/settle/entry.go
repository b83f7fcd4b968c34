package settle

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/receipt"
)

// State is where a stored record is in its life.
type State uint8

// States. A record is Pending until it is known settled (Settled) or the
// chain refuses it for good (Skipped); both are final.
const (
	StatePending State = 1
	StateSettled State = 2
	StateSkipped State = 3
)

// enumName is names[v]: the names of an enumeration's values in order,
// "" for a value without one. It reports false for a value without a
// name.
func enumName(v uint8, names ...string) (string, bool) {
	if int(v) < len(names) && names[v] != "" {
		return names[v], true
	}
	return "", false
}

func (s State) String() string {
	if n, ok := enumName(uint8(s), "", "pending", "settled", "skipped"); ok {
		return n
	}
	return fmt.Sprintf("state %d", uint8(s))
}

// Limits of a stored entry.
const (
	MaxReasonBytes = 1 << 10
	maxEntryBytes  = receipt.MaxReceiptBytes + 4<<10
)

// Entry is one stored payment record and what this node knows of it.
type Entry struct {
	Record receipt.PaymentRecord `cbor:"1,keyasint" json:"record"`
	// Peer is the libp2p peer (binary ID): at the gateway the provider
	// that served the call, at the provider the peer that delivered it.
	Peer  []byte `cbor:"2,keyasint,omitempty" json:"-"`
	State State  `cbor:"3,keyasint" json:"state"`
	// Acked: the provider acknowledged (persisted) the record (gateway).
	Acked bool `cbor:"4,keyasint,omitempty" json:"acked,omitempty"`
	// Height: the block that settled it, or for a record found settled
	// by a query, the committed height at which it was seen settled.
	Height int64 `cbor:"5,keyasint,omitempty" json:"height,omitempty"`
	// Code and Reason: why the chain skipped it (StateSkipped).
	Code   uint32 `cbor:"6,keyasint,omitempty" json:"code,omitempty"`
	Reason string `cbor:"7,keyasint,omitempty" json:"reason,omitempty"`
	// At is when this node signed (gateway) or accepted (provider) it,
	// unix nanoseconds on the component's clock.
	At int64 `cbor:"8,keyasint" json:"at"`
	// Expected is the provider's own price for the call (0: it had none);
	// Underpriced says Record.Price was below it.
	Expected    uint64 `cbor:"9,keyasint,omitempty" json:"expected,omitempty"`
	Underpriced bool   `cbor:"10,keyasint,omitempty" json:"underpriced,omitempty"`
}

// PeerID is Peer as a peer.ID ("" when none).
func (e *Entry) PeerID() peer.ID { return peer.ID(e.Peer) }

// encodeEntry returns the canonical CBOR of e.
func encodeEntry(e *Entry) ([]byte, error) {
	b, err := cborx.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("settle: encode entry: %w", err)
	}
	return b, nil
}

// DecodeEntry parses a stored entry: canonical CBOR of an Entry whose
// state is known, whose record passes the chain's stateless checks and
// carries a receipt hashing to its ReceiptHash, and whose peer ID (if
// any) parses.
func DecodeEntry(b []byte) (*Entry, error) {
	var e Entry
	if err := cborx.UnmarshalCanonical(b, maxEntryBytes, &e); err != nil {
		return nil, fmt.Errorf("settle: entry: %w", err)
	}
	if e.State < StatePending || e.State > StateSkipped {
		return nil, fmt.Errorf("settle: entry: unknown state %d", e.State)
	}
	if err := checkRecord(&e.Record); err != nil {
		return nil, fmt.Errorf("settle: entry: record: %w", err)
	}
	if len(e.Record.Receipt) == 0 || sha256.Sum256(e.Record.Receipt) != e.Record.ReceiptHash {
		return nil, fmt.Errorf("settle: entry: receipt missing or not hashing to the record's receipt hash")
	}
	if len(e.Peer) > 0 {
		if _, err := peer.IDFromBytes(e.Peer); err != nil {
			return nil, fmt.Errorf("settle: entry: peer: %w", err)
		}
	}
	if e.Height < 0 || len(e.Reason) > MaxReasonBytes {
		return nil, fmt.Errorf("settle: entry: height %d or reason of %d bytes out of range", e.Height, len(e.Reason))
	}
	if e.State != StateSkipped && (e.Code != 0 || e.Reason != "") {
		return nil, fmt.Errorf("settle: entry: %s with a skip code", e.State)
	}
	return &e, nil
}

// rkey identifies a record: payer ‖ request digest, the chain's dedupe key.
type rkey [64]byte

func keyOf(r *receipt.PaymentRecord) rkey {
	var k rkey
	copy(k[:32], r.Payer[:])
	copy(k[32:], r.RequestDigest[:])
	return k
}

// String is payer hex / digest hex.
func (k rkey) String() string { return hex.EncodeToString(k[:32]) + "/" + hex.EncodeToString(k[32:]) }

// truncate bounds a reason to MaxReasonBytes of valid UTF-8 (CBOR text
// must be, or the entry would not decode again).
func truncate(s string) string {
	if len(s) > MaxReasonBytes {
		s = s[:MaxReasonBytes]
	}
	return strings.ToValidUTF8(s, "")
}
