package gateway

import (
	"encoding/hex"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/p2p/sessioncache"
	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// SessionStore keeps the session table's rows across restarts, one
// record per session ID: the store successors keep their states in
// (p2p/sessioncache.DirStore is one).
type SessionStore = sessioncache.Store

// sessionRecord is a session as stored: what a restarted gateway needs to
// continue it (its primary, its successor and the stream paying it, the
// turn reached, who pays, the model).
type sessionRecord struct {
	ID           string        `cbor:"1,keyasint"`
	Model        []byte        `cbor:"2,keyasint,omitempty"`
	Payer        string        `cbor:"3,keyasint"`
	Continuity   uint8         `cbor:"4,keyasint,omitempty"`
	Jurisdiction string        `cbor:"5,keyasint,omitempty"`
	Level        string        `cbor:"6,keyasint,omitempty"`
	Primary      *memberRecord `cbor:"7,keyasint,omitempty"`
	Successor    *memberRecord `cbor:"8,keyasint,omitempty"`
	Reason       string        `cbor:"9,keyasint,omitempty"`
	Turn         uint32        `cbor:"10,keyasint,omitempty"`
	Sealed       uint32        `cbor:"11,keyasint,omitempty"`
	CreatedMs    int64         `cbor:"12,keyasint"`
	LastUseMs    int64         `cbor:"13,keyasint"`
	Failovers    uint32        `cbor:"14,keyasint,omitempty"`
	Failed       [][]byte      `cbor:"15,keyasint,omitempty"`
}

type memberRecord struct {
	Peer     []byte `cbor:"1,keyasint"`
	Machine  []byte `cbor:"2,keyasint"`
	Operator string `cbor:"3,keyasint,omitempty"`
	Region   string `cbor:"4,keyasint,omitempty"`
	Fee      uint64 `cbor:"5,keyasint,omitempty"`
	Key      []byte `cbor:"6,keyasint,omitempty"`
	Stream   string `cbor:"7,keyasint,omitempty"`
}

// Bounds of a stored session record.
const (
	maxSessionRecord = 64 << 10
	maxFailedStored  = 64
	maxStoredText    = 256
)

func (m *member) record() *memberRecord {
	if m == nil {
		return nil
	}
	return &memberRecord{Peer: []byte(m.peer), Machine: m.machine[:], Operator: m.operator, Region: m.region, Fee: m.fee, Key: m.key, Stream: m.stream}
}

func encodeSession(e *sessionEntry) ([]byte, error) {
	r := &sessionRecord{ID: e.id, Model: e.model, Payer: e.payer, Continuity: uint8(e.continuity), Jurisdiction: e.jurisdiction,
		Level: string(e.level), Primary: e.primary.record(), Successor: e.successor.record(), Reason: e.reason, Turn: e.turn,
		Sealed: e.sealed, CreatedMs: e.created.UnixMilli(), LastUseMs: e.lastUse.UnixMilli(), Failovers: e.failovers}
	for p := range e.failed {
		if len(r.Failed) < maxFailedStored {
			r.Failed = append(r.Failed, []byte(p))
		}
	}
	b, err := cborx.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("gateway: session: encode: %w", err)
	}
	return b, nil
}

func checkText(what, s string) error {
	if len(s) > maxStoredText || !utf8.ValidString(s) {
		return fmt.Errorf("%s longer than %d bytes or not UTF-8", what, maxStoredText)
	}
	return nil
}

func (r *memberRecord) member() (*member, error) {
	p, err := peer.IDFromBytes(r.Peer)
	if err != nil {
		return nil, fmt.Errorf("peer: %w", err)
	}
	if len(r.Machine) != len(identity.MachineID{}) {
		return nil, fmt.Errorf("machine of %d bytes", len(r.Machine))
	}
	if r.Key != nil && len(r.Key) != gossip.StandbyKeySize {
		return nil, fmt.Errorf("standby key of %d bytes", len(r.Key))
	}
	if r.Stream != "" {
		if b, err := hex.DecodeString(r.Stream); err != nil || len(b) != 32 {
			return nil, errors.New("stream ID is not 32 bytes of hex")
		}
	}
	if err := errors.Join(checkText("operator", r.Operator), checkText("region", r.Region)); err != nil {
		return nil, err
	}
	return &member{peer: p, machine: identity.MachineID(r.Machine), operator: r.Operator, region: r.Region, fee: r.Fee, key: r.Key, stream: r.Stream}, nil
}

// decodeSession strictly decodes a stored session: the store is this
// gateway's, but a record is checked as any input before it steers money.
func decodeSession(b []byte) (*sessionEntry, error) {
	var r sessionRecord
	if err := cborx.UnmarshalCanonical(b, maxSessionRecord, &r); err != nil {
		return nil, fmt.Errorf("gateway: session record: %w", err)
	}
	bad := func(err error) (*sessionEntry, error) {
		return nil, fmt.Errorf("gateway: session record %q: %w", r.ID, err)
	}
	if err := CheckSessionID(r.ID); err != nil {
		return bad(err)
	}
	if r.Payer == "" {
		return bad(errors.New("no payer"))
	}
	if err := errors.Join(checkText("payer", r.Payer), checkText("reason", r.Reason), checkText("jurisdiction", r.Jurisdiction)); err != nil {
		return bad(err)
	}
	if len(r.Model) != 0 && len(r.Model) != 32 {
		return bad(fmt.Errorf("model ID of %d bytes", len(r.Model)))
	}
	if Continuity(r.Continuity) > ContinuityRequired {
		return bad(fmt.Errorf("continuity %d", r.Continuity))
	}
	if r.Level != "" && !terms.Verification(r.Level).Valid() {
		return bad(fmt.Errorf("verification %q", r.Level))
	}
	if r.Sealed > r.Turn || len(r.Failed) > maxFailedStored {
		return bad(fmt.Errorf("sealed turn %d past turn %d, or %d failed successors", r.Sealed, r.Turn, len(r.Failed)))
	}
	e := &sessionEntry{id: r.ID, model: r.Model, payer: r.Payer, continuity: Continuity(r.Continuity), jurisdiction: r.Jurisdiction,
		level: terms.Verification(r.Level), reason: r.Reason, turn: r.Turn, sealed: r.Sealed,
		created: time.UnixMilli(r.CreatedMs), lastUse: time.UnixMilli(r.LastUseMs), failovers: r.Failovers}
	var err error
	if r.Primary != nil {
		if e.primary, err = r.Primary.member(); err != nil {
			return bad(fmt.Errorf("primary: %w", err))
		}
	}
	if r.Successor != nil {
		if e.successor, err = r.Successor.member(); err != nil {
			return bad(fmt.Errorf("successor: %w", err))
		}
	}
	for _, f := range r.Failed {
		p, err := peer.IDFromBytes(f)
		if err != nil {
			return bad(fmt.Errorf("failed successor: %w", err))
		}
		if e.failed == nil {
			e.failed = map[peer.ID]bool{}
		}
		e.failed[p] = true
	}
	return e, nil
}

// persistLocked records the rows put and the sessions gone; the caller
// holds the table's lock and calls the returned function once it has let
// it go. persistMu is taken before the table's lock is released, so the
// writes land in the order the changes were made without holding the
// table during the disk's sync.
func (g *Gateway) persistLocked(put []*sessionEntry, gone []string) func() {
	if g.store == nil || len(put)+len(gone) == 0 {
		return func() {}
	}
	recs := make(map[string][]byte, len(put))
	for _, e := range put {
		b, err := encodeSession(e)
		if err != nil {
			g.log.Warn("session: persist", "session", e.id, "err", err)
			continue
		}
		recs[e.id] = b
	}
	g.persistMu.Lock()
	return func() {
		defer g.persistMu.Unlock()
		for id, b := range recs {
			if err := g.store.Put(id, b); err != nil {
				g.log.Warn("session: persist", "session", id, "err", err)
			}
		}
		for _, id := range gone {
			if err := g.store.Delete(id); err != nil {
				g.log.Warn("session: forget a stored session", "session", id, "err", err)
			}
		}
	}
}
