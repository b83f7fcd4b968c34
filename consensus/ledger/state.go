package ledger

import (
	"crypto/sha256"
	"encoding/binary"

	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// Account is an account's state.
type Account struct {
	Balance uint64 `cbor:"1,keyasint" json:"balance"`
	Nonce   uint64 `cbor:"2,keyasint" json:"nonce"` // the next nonce the account must use
}

// Validator is a bonded validator, keyed by its operator account.
type Validator struct {
	Operator   terms.AccountID `cbor:"1,keyasint" json:"operator"`
	ConsPubKey []byte          `cbor:"2,keyasint" json:"cons_pub_key"`
	Stake      uint64          `cbor:"3,keyasint" json:"stake"`
	Power      int64           `cbor:"4,keyasint" json:"power"`
}

// ValidatorTotals is the sum of validator power and the validator count.
type ValidatorTotals struct {
	Power int64  `cbor:"1,keyasint" json:"power"`
	Count uint64 `cbor:"2,keyasint" json:"count"`
}

// Provider is a registered machine.
type Provider struct {
	MachineID        identity.MachineID `cbor:"1,keyasint" json:"machine_id"`
	Operator         terms.AccountID    `cbor:"2,keyasint" json:"operator"`
	HWPubDER         []byte             `cbor:"3,keyasint" json:"hw_pub_der"`
	PQPub            []byte             `cbor:"4,keyasint" json:"pq_pub"`
	PeerID           string             `cbor:"5,keyasint" json:"peer_id"`
	Bond             uint64             `cbor:"6,keyasint" json:"bond"`
	UnbondingSecs    uint64             `cbor:"7,keyasint" json:"unbonding_secs"`
	UnbondAt         int64              `cbor:"8,keyasint" json:"unbond_at"` // unix seconds the bond frees; 0 = live
	RegisteredHeight int64              `cbor:"9,keyasint" json:"registered_height"`
	// LastSettled is the height of the last record settled to the
	// machine: its bond stays until no dispute over it can still run.
	LastSettled  int64  `cbor:"10,keyasint,omitempty" json:"last_settled,omitempty"`
	OpenDisputes uint64 `cbor:"11,keyasint,omitempty" json:"open_disputes,omitempty"`
	SlashedUntil int64  `cbor:"12,keyasint,omitempty" json:"slashed_until,omitempty"` // unix seconds its standing stays 0 until
	Slashed      uint64 `cbor:"13,keyasint,omitempty" json:"slashed,omitempty"`       // total slashed from its bond
	// ConvictedAt is the height of the conviction that slashed its latest
	// episode: a later guilty verdict over a record settled at or before
	// it is part of that episode and slashes nothing more (episode.go).
	ConvictedAt int64 `cbor:"14,keyasint,omitempty" json:"convicted_at,omitempty"`
	// Barred is set by that conviction and cleared by a re-bond of at
	// least RebondDue (ProviderRebond): until then no record paying the
	// machine settles and gateways leave it out of rotation.
	Barred    bool   `cbor:"15,keyasint,omitempty" json:"barred,omitempty"`
	RebondDue uint64 `cbor:"16,keyasint,omitempty" json:"rebond_due,omitempty"`
}

// Proposal is a governance proposal: a change of the governed parameters
// to Params or, when Rebind is set, of one model name's binding.
type Proposal struct {
	ID       uint64          `cbor:"1,keyasint" json:"id"`
	Proposer terms.AccountID `cbor:"2,keyasint" json:"proposer"`
	Params   Params          `cbor:"3,keyasint" json:"params"`
	Deadline int64           `cbor:"4,keyasint" json:"deadline"` // last height votes count
	YesPower int64           `cbor:"5,keyasint" json:"yes_power"`
	Passed   bool            `cbor:"6,keyasint" json:"passed"`
	Rebind   *NameProposal   `cbor:"7,keyasint,omitempty" json:"rebind,omitempty"`
}

// Escrow is a buyer's spend escrow with one settler (a gateway account,
// or the payer itself): records signed by the settler draw on it.
// Withdrawals wait WithdrawDelayBlocks in Pending before they pay out.
type Escrow struct {
	Balance uint64          `cbor:"1,keyasint" json:"balance"` // includes pending withdrawals
	Settler terms.AccountID `cbor:"2,keyasint" json:"settler"`
	Pending uint64          `cbor:"3,keyasint,omitempty" json:"pending,omitempty"`       // withdrawn, not yet paid out
	Unlock  int64           `cbor:"4,keyasint,omitempty" json:"unlock_height,omitempty"` // height Pending pays out from
}

// Available is what new records may still draw: balance − pending
// withdrawals.
func (e Escrow) Available() uint64 { return e.Balance - min(e.Pending, e.Balance) }

// SettledRecord is a payment record as stored, with where it settled.
// Record.Receipt is never stored; ReceiptChecked says settlement verified
// the receipt envelope against the provider's registered machine.
type SettledRecord struct {
	Record         receipt.PaymentRecord `cbor:"1,keyasint" json:"record"`
	Height         int64                 `cbor:"2,keyasint" json:"height"`
	TxHash         terms.Hash32          `cbor:"3,keyasint" json:"tx_hash"`
	ReceiptChecked bool                  `cbor:"4,keyasint,omitempty" json:"receipt_checked,omitempty"`
	Fee            uint64                `cbor:"5,keyasint,omitempty" json:"fee,omitempty"` // FeePerRecord taken from the provider's credit
	// Reversed is what a dispute's conviction paid back to the payer's
	// escrow (the whole price), at ReversedHeight: at most once per
	// record, however many of its expert batches are convicted.
	Reversed       uint64 `cbor:"6,keyasint,omitempty" json:"reversed,omitempty"`
	ReversedHeight int64  `cbor:"7,keyasint,omitempty" json:"reversed_height,omitempty"`
}

// HourTally sums the verdicts on one provider for one hour.
type HourTally struct {
	AvailablePower   int64 `cbor:"1,keyasint" json:"available_power"`
	UnavailablePower int64 `cbor:"2,keyasint" json:"unavailable_power"`
	TotalPower       int64 `cbor:"3,keyasint" json:"total_power"` // validator power when the last verdict landed
}

// Available reports whether verdicts of > 2/3 of validator power found the
// provider available.
func (t HourTally) Available() bool {
	return t.TotalPower > 0 && mulGT(t.AvailablePower, 3, t.TotalPower, 2)
}

// ChainMeta is the chain-wide bookkeeping kept in state. Height and Time
// are the block's: the state keeps those of genesis (InitChain), and
// every reader (the meta query, Node.Meta) is given the block's own, which
// the ledger keeps beside the state (Stamp) so that a block that changes
// nothing leaves the app hash unchanged.
type ChainMeta struct {
	ChainID        string `cbor:"1,keyasint" json:"chain_id"`
	GenesisTime    int64  `cbor:"2,keyasint" json:"genesis_time"` // unix seconds
	Height         int64  `cbor:"3,keyasint" json:"height"`       // the block's (see above)
	Time           int64  `cbor:"4,keyasint" json:"time"`         // its time, unix seconds
	NextProposalID uint64 `cbor:"5,keyasint" json:"next_proposal_id"`
}

// State keys. Every key starts with a one-letter prefix and a slash.
var (
	keyMeta   = []byte("m/meta")
	keyParams = []byte("m/params")
	keyTotals = []byte("m/valtotals")
)

// KeyMeta is the state key of the ChainMeta.
func KeyMeta() []byte { return keyMeta }

// KeyParams is the state key of the governed Params.
func KeyParams() []byte { return keyParams }

// KeyAccount is the state key of an account.
func KeyAccount(a terms.AccountID) []byte { return cat("a/", a[:]) }

// KeyValidator is the state key of a validator by operator.
func KeyValidator(op terms.AccountID) []byte { return cat("v/", op[:]) }

func keyConsKey(pub []byte) []byte { return cat("c/", pub) }

// KeyProvider is the state key of a provider registration.
func KeyProvider(m identity.MachineID) []byte { return cat("p/", m[:]) }

// KeyPeer is the state key of a libp2p peer ID's registration: the
// machine ID it belongs to.
func KeyPeer(peerID string) []byte { return cat("q/", []byte(peerID)) }

// KeyProposal is the state key of a proposal.
func KeyProposal(id uint64) []byte { return cat("g/", u64(id)) }

func keyProposalVote(id uint64, v terms.AccountID) []byte { return cat("h/", u64(id), v[:]) }

// KeyEscrow is the state key of the escrow of payer with settler:
// "e/" ‖ payer ‖ settler, so a payer's escrows are one key range.
func KeyEscrow(payer, settler terms.AccountID) []byte { return cat("e/", payer[:], settler[:]) }

// EscrowRange returns the first and last possible escrow keys of payer.
func EscrowRange(payer terms.AccountID) (first, last []byte) {
	var hi terms.AccountID
	for i := range hi {
		hi[i] = 0xff
	}
	return KeyEscrow(payer, terms.AccountID{}), KeyEscrow(payer, hi)
}

// KeyRecord is the state key of a settled payment record.
func KeyRecord(payer terms.AccountID, requestDigest terms.Hash32) []byte {
	return cat("r/", payer[:], requestDigest[:])
}

// KeyRecordIndex is the state key of a settled record's entry in the
// per-payer, per-height index: "x/" ‖ payer ‖ height (8, big-endian) ‖
// request digest, 74 bytes, mapping to RecordIndexValue of the record. The
// index lets a range proof show every record a payer settled in a span of
// heights, and nothing else. Its prefix must stay the greatest of all key
// prefixes but "y/" (KeyProviderRecordIndex, keys of the same length), so
// the key after an index entry is an index entry too (range proofs need
// edge keys of one length).
func KeyRecordIndex(payer terms.AccountID, height int64, requestDigest terms.Hash32) []byte {
	return cat("x/", payer[:], u64(nonNeg(height)), requestDigest[:])
}

// KeyProviderRecordIndex is the state key of a settled record's entry in
// the per-provider, per-height index: "y/" ‖ machine ‖ height (8,
// big-endian) ‖ SHA-256(payer ‖ request digest), 74 bytes like a payer
// index entry, mapping to ProviderRecordIndexValue. "y/" is the greatest
// key prefix, and
// both indexes have keys of one length, so range proofs over either have
// edge keys of one length.
func KeyProviderRecordIndex(m identity.MachineID, height int64, payer terms.AccountID, requestDigest terms.Hash32) []byte {
	d := sha256.Sum256(cat("", payer[:], requestDigest[:]))
	return cat("y/", m[:], u64(nonNeg(height)), d[:])
}

// ProviderRecordIndexValue is the value of a provider index entry: payer ‖
// request digest ‖ RecordIndexValue of the record, so the proven entry
// names the record (under KeyRecord) and its hash.
func ProviderRecordIndexValue(payer terms.AccountID, requestDigest, recordHash terms.Hash32) []byte {
	return cat("", payer[:], requestDigest[:], recordHash[:])
}

// ProviderRecordIndexRange returns the first and last possible index keys
// of machine m's records settled at heights from..to.
func ProviderRecordIndexRange(m identity.MachineID, from, to int64) (first, last []byte) {
	hi := make([]byte, 32)
	for i := range hi {
		hi[i] = 0xff
	}
	return cat("y/", m[:], u64(nonNeg(from)), make([]byte, 32)), cat("y/", m[:], u64(nonNeg(to)), hi)
}

// RecordIndexRange returns the first and last possible index keys of
// payer's records settled at heights from..to.
func RecordIndexRange(payer terms.AccountID, from, to int64) (first, last []byte) {
	var hi terms.Hash32
	for i := range hi {
		hi[i] = 0xff
	}
	return KeyRecordIndex(payer, from, terms.Hash32{}), KeyRecordIndex(payer, to, hi)
}

// RecordIndexValue is the value of a record's index entry: SHA-256 of the
// record's canonical CBOR as stored under KeyRecord.
func RecordIndexValue(encoded []byte) terms.Hash32 { return sha256.Sum256(encoded) }

// KeyHourTally is the state key of one provider-hour's verdict tally.
func KeyHourTally(m identity.MachineID, hour uint64) []byte { return cat("s/", m[:], u64(hour)) }

func keyVerdict(m identity.MachineID, hour uint64, v terms.AccountID) []byte {
	return cat("t/", m[:], u64(hour), v[:])
}

func u64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

func cat(prefix string, parts ...[]byte) []byte {
	n := len(prefix)
	for _, p := range parts {
		n += len(p)
	}
	out := make([]byte, 0, n)
	out = append(out, prefix...)
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}
