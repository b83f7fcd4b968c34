package consensus

import (
	"context"
	"fmt"

	abci "github.com/cometbft/cometbft/abci/types"
	cmtcrypto "github.com/cometbft/cometbft/api/cometbft/crypto/v1"
	"github.com/ethereum/go-ethereum/trie"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// ProviderRecordRange is a provider machine's complete list of payment
// records settled at heights From..To, as of the state after block Height,
// with the range proof of their provider index entries (see
// ledger.KeyProviderRecordIndex) against that state's root: the
// provider's evidence of what it was paid.
type ProviderRecordRange struct {
	Machine  identity.MachineID
	From, To int64
	Height   int64
	Records  []ledger.SettledRecord
	Proof    RangeProof
}

// queryProviderRange answers providerrange/<machine>/<from>/<to>, its
// segments parsed by its route.
func queryProviderRange(t *trie.Trie, m identity.MachineID, from, to int64) (*abci.QueryResponse, error) {
	first, last := ledger.ProviderRecordIndexRange(m, from, to)
	return proveRecords(t, first, last, func(k, v []byte) (terms.AccountID, terms.Hash32, error) {
		var payer terms.AccountID
		var d terms.Hash32
		if len(v) != 96 {
			return payer, d, fmt.Errorf("consensus: provider index entry %x holds %d bytes, want 96", k, len(v))
		}
		copy(payer[:], v[:32])
		copy(d[:], v[32:64])
		return payer, d, nil
	})
}

// ProviderRecordRange returns machine m's records settled at heights
// from..to as of the state after block height (0 = latest committed; it
// must be >= to), with their range proof. It does not verify the proof;
// VerifyProviderRecordRange does.
func (n *Node) ProviderRecordRange(ctx context.Context, m identity.MachineID, from, to, height int64) (ProviderRecordRange, error) {
	path := fmt.Sprintf("providerrange/%s/%d/%d", m, from, to)
	r, err := n.queryRange(ctx, path, to, height)
	if err != nil {
		return ProviderRecordRange{}, err
	}
	out, err := ParseProviderRecordRange(m, from, to, r.Height, r.Value, r.Proof)
	if err != nil {
		return out, fmt.Errorf("consensus: %s: %w", path, err)
	}
	return out, nil
}

// ParseProviderRecordRange decodes the answer to a providerrange query made
// at height. It does not verify the proof.
func ParseProviderRecordRange(m identity.MachineID, from, to, height int64, value []byte, ops []cmtcrypto.ProofOp) (ProviderRecordRange, error) {
	out := ProviderRecordRange{Machine: m, From: from, To: to, Height: height}
	return out, parseRangeAnswer(value, ops, &out.Records, &out.Proof)
}

// VerifyProviderRecordRange checks pr against root (the app hash of the
// header committing to the state after pr.Height): the proof must cover
// exactly the machine's index range From..To and pr.Records must be
// exactly the records the proven entries name, in order, each hashing to
// its entry. It returns nil only if the records are all, and only, the
// records settled to that machine at those heights.
func VerifyProviderRecordRange(root []byte, pr ProviderRecordRange) error {
	first, last := ledger.ProviderRecordIndexRange(pr.Machine, pr.From, pr.To)
	return verifyRecords(root, first, last, pr.Proof, pr.Records, recordIndex{
		foreign: func(sr ledger.SettledRecord) string {
			if sr.Record.Provider == pr.Machine {
				return ""
			}
			return fmt.Sprintf("is of machine %s, not %s", sr.Record.Provider, pr.Machine)
		},
		entry: func(sr ledger.SettledRecord, h terms.Hash32) (key, value []byte) {
			return ledger.KeyProviderRecordIndex(sr.Record.Provider, sr.Height, sr.Record.Payer, sr.Record.RequestDigest),
				ledger.ProviderRecordIndexValue(sr.Record.Payer, sr.Record.RequestDigest, h)
		},
	})
}
