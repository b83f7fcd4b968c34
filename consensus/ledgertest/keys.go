package ledgertest

import (
	"crypto/ed25519"
	"crypto/sha256"
	"fmt"
	"testing"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// Chain is the chain ID of tests that drive a ledger or an app directly.
const Chain = "tenzro-unit"

// NewKey is a fresh random Ed25519 key.
func NewKey() ed25519.PrivateKey {
	_, k, err := ed25519.GenerateKey(nil)
	if err != nil {
		panic(fmt.Sprintf("ledgertest: key: %v", err)) // crypto/rand does not fail
	}
	return k
}

// SeedKey is the key named name and i: deterministic, so two chains (or
// two nodes of one) can share a genesis.
func SeedKey(name string, i int) ed25519.PrivateKey {
	seed := sha256.Sum256(fmt.Appendf(nil, "%s-%d", name, i))
	return ed25519.NewKeyFromSeed(seed[:])
}

// Account is the account of key k.
func Account(k ed25519.PrivateKey) terms.AccountID {
	return terms.AccountOf(k.Public().(ed25519.PublicKey))
}

// Signer is the deterministic signer named name on chainID and its
// genesis funding of balance.
func Signer(chainID, name string, balance uint64) (*ledger.Signer, ledger.GenesisAccount) {
	s := ledger.NewSigner(SeedKey(name, 0), chainID)
	return s, ledger.GenesisAccount{Account: s.Account(), Balance: balance}
}

// Validators are genesis validators of the given powers: validator i's
// operator key is SeedKey("validator", i), its consensus key
// SeedKey("cons", i).
func Validators(chainID string, powers ...int64) ([]*ledger.Signer, []ledger.GenesisValidator) {
	var ss []*ledger.Signer
	var gs []ledger.GenesisValidator
	for i, p := range powers {
		s := ledger.NewSigner(SeedKey("validator", i), chainID)
		cons := SeedKey("cons", i).Public().(ed25519.PublicKey) //nolint:forcetypeassert // ed25519's Public is documented to return this type
		ss = append(ss, s)
		gs = append(gs, ledger.GenesisValidator{Operator: s.Account(),
			ConsPubKey: cons, Stake: uint64(p) * ledger.PowerUnit})
	}
	return ss, gs
}

// Genesis is the app genesis of a test chain: params, the funded accts
// and nVals validators of equal power, whose signers it returns.
func Genesis(chainID string, params ledger.Params, nVals int, accts ...ledger.GenesisAccount) (ledger.AppGenesis, []*ledger.Signer) {
	vals, gvals := Validators(chainID, Equal(nVals)...)
	return ledger.AppGenesis{Params: params, Accounts: accts, Validators: gvals}, vals
}

// Equal is n powers of 10, the validators of most tests.
func Equal(n int) []int64 {
	p := make([]int64, n)
	for i := range p {
		p[i] = 10
	}
	return p
}

// Params are the default parameters with a small serving bond and short
// SLA window and voting period, so tests reach them in a few blocks.
func Params() ledger.Params {
	p := ledger.DefaultParams()
	p.MinServingBond = 1000
	p.SLAWindowHours = 6
	p.VotingPeriodBlocks = 20
	return p
}

// SignTx signs payload by s at nonce, failing t on error.
func SignTx(t testing.TB, s *ledger.Signer, nonce uint64, payload any) []byte {
	t.Helper()
	raw, err := s.SignTx(nonce, payload)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// Signed is rec signed by settler, by default valid up to height 300
// (within the default withdrawal delay of any test height).
func Signed(t testing.TB, settler *ledger.Signer, rec receipt.PaymentRecord) receipt.PaymentRecord {
	t.Helper()
	if rec.ExpiryHeight == 0 {
		rec.ExpiryHeight = 300
	}
	if err := settler.SignRecord(&rec); err != nil {
		t.Fatal(err)
	}
	return rec
}
