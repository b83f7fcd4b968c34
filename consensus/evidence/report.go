package evidence

import (
	"fmt"
	"math/bits"
	"strings"
	"time"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// Report is what a verified pack proves.
type Report struct {
	ChainID string
	Account terms.AccountID     // the payer all records belong to (zero for a provider pack)
	Machine *identity.MachineID // a provider pack's machine, all records are paid to it
	// FromHeight..ToHeight is the span of settlement heights covered:
	// Records are every payment record the account settled in it.
	FromHeight, ToHeight int64
	Records              []ledger.SettledRecord
	TotalPaid            uint64 // sum of the records' prices, micro-units
	// TotalReversed is what convictions paid back of them (each record's
	// Reversed, at its ReversedHeight): a reversal rewrites the record in
	// state, so the pack proves it as it stands after ToHeight.
	TotalReversed   uint64
	ReceiptsChecked int // records whose receipt the chain verified at settlement

	StateRoot    terms.Hash32 // app hash: the state after ToHeight
	HeaderHeight int64        // ToHeight + 1
	HeaderHash   []byte
	HeaderTime   time.Time

	// Signers of the commit for the header, among its validator set and
	// among the trusted set.
	SignedPower, TotalPower               int64
	Signers, Validators                   int
	TrustedSignedPower, TrustedTotalPower int64
}

// SigningFraction is SignedPower / TotalPower.
func (r Report) SigningFraction() float64 {
	if r.TotalPower == 0 {
		return 0
	}
	return float64(r.SignedPower) / float64(r.TotalPower)
}

func newReport(p *Pack, trusted ValidatorSet) (Report, error) {
	sh := p.SignedHeader
	r := Report{
		ChainID: p.ChainID, Account: p.Account, Machine: p.Machine, FromHeight: p.FromHeight, ToHeight: p.ToHeight,
		Records: p.Records, StateRoot: p.AppHash, HeaderHeight: sh.Height, HeaderHash: sh.Hash(),
		HeaderTime: sh.Time, TotalPower: p.Validators.TotalVotingPower(), Validators: p.Validators.Size(),
		TrustedTotalPower: trusted.Set.TotalVotingPower(),
	}
	r.SignedPower, r.Signers = signedPower(p.Validators, sh.Commit)
	r.TrustedSignedPower, _ = signedPower(trusted.Set, sh.Commit)
	for _, sr := range p.Records {
		var carry uint64
		r.TotalPaid, carry = bits.Add64(r.TotalPaid, sr.Record.Price, 0)
		if carry != 0 {
			return Report{}, fmt.Errorf("%w: total paid overflows 2^64", ErrRecord)
		}
		r.TotalReversed, carry = bits.Add64(r.TotalReversed, sr.Reversed, 0)
		if carry != 0 {
			return Report{}, fmt.Errorf("%w: total reversed overflows 2^64", ErrRecord)
		}
		if sr.ReceiptChecked {
			r.ReceiptsChecked++
		}
	}
	return r, nil
}

// String states what the pack proves, in words.
func (r Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Chain %s, block %d (hash %X, time %s):\n", r.ChainID, r.HeaderHeight, r.HeaderHash,
		r.HeaderTime.UTC().Format(time.RFC3339))
	fmt.Fprintf(&b, "  signed by %d of %d validators holding %d of %d voting power (%.2f%%, more than 2/3),\n",
		r.Signers, r.Validators, r.SignedPower, r.TotalPower, 100*r.SigningFraction())
	fmt.Fprintf(&b, "  including %d of the %d power of the trusted validator set.\n", r.TrustedSignedPower, r.TrustedTotalPower)
	fmt.Fprintf(&b, "Its app hash %s is the state root after block %d. In that state,\n", r.StateRoot, r.ToHeight)
	fmt.Fprintf(&b, "account %s settled exactly %d payment records at heights %d..%d, no more and no fewer,\n",
		r.Account, len(r.Records), r.FromHeight, r.ToHeight)
	fmt.Fprintf(&b, "paying %d micro-units in total; the chain verified the provider's receipt signature on %d of them.\n",
		r.TotalPaid, r.ReceiptsChecked)
	if r.TotalReversed > 0 {
		fmt.Fprintf(&b, "Convictions reversed %d micro-units of it to the payer.\n", r.TotalReversed)
	}
	for _, sr := range r.Records {
		fmt.Fprintf(&b, "  height %d tx %s: request %s to machine %s, price %d, quote %s, receipt %s%s%s\n",
			sr.Height, sr.TxHash, sr.Record.RequestDigest, sr.Record.Provider, sr.Record.Price,
			sr.Record.QuoteDigest, sr.Record.ReceiptHash, map[bool]string{true: " (signature checked)"}[sr.ReceiptChecked], reversal(sr))
	}
	return b.String()
}

// reversal describes a record's reversal by a conviction, "" for none.
func reversal(sr ledger.SettledRecord) string {
	if sr.Reversed == 0 {
		return ""
	}
	return fmt.Sprintf("; REVERSED: %d paid back at height %d (a guilty dispute verdict)", sr.Reversed, sr.ReversedHeight)
}
