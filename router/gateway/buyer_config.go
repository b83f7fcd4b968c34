package gateway

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/tenzrod/tenzrod/receipts/store"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// BuyerConfig is one [[router.buyers]] entry: it maps an access token to
// who pays for its calls. Only the token's SHA-256 is kept, so the config
// file never holds the secret; the token itself is never sent to a
// provider.
//
// On a chain a token names a Payer: the on-chain account whose escrow
// with this node's account (the settler) pays each call, by a payment
// record this node signs. Off chain (a test mode) it names a local
// Account with an InitialCredit instead.
type BuyerConfig struct {
	Payer       string `toml:"payer"`
	Account     string `toml:"account"`
	TokenSHA256 string `toml:"token_sha256"`
	// InitialCredit is credited once, the first time the node sees the
	// (off-chain) account, in micro-units.
	InitialCredit uint64 `toml:"initial_credit"`
	// The buyer's fair share (max_concurrent, rate_per_minute); 0 takes
	// [router.buyer_defaults].
	BuyerLimits
}

var accountRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

// Validate checks one buyer entry.
func (b BuyerConfig) Validate() error {
	switch {
	case b.Payer != "" && (b.Account != "" || b.InitialCredit != 0):
		return errors.New("payer: an on-chain payer takes no account or initial_credit (those are off-chain)")
	case b.Payer != "":
		if _, err := terms.ParseAccountID(b.Payer); err != nil {
			return fmt.Errorf("payer: %w", err)
		}
	case !accountRE.MatchString(b.Account):
		return fmt.Errorf("account %q must match %s (or set payer, an on-chain account)", b.Account, accountRE)
	}
	if h, err := hex.DecodeString(b.TokenSHA256); err != nil || len(h) != sha256.Size {
		return errors.New("token_sha256 must be 64 hex digits (sha256 of the token)")
	}
	return b.BuyerLimits.Validate()
}

// Key is who the buyer's calls are billed to: the payer's hex account on
// a chain, the local account off chain.
func (b BuyerConfig) Key() string {
	if b.Payer != "" {
		return strings.ToLower(b.Payer)
	}
	return b.Account
}

// BuyerAccounts maps each buyer's token hash to the account its calls are
// billed to (Key).
func (r RouterConfig) BuyerAccounts() map[string]string {
	accounts := make(map[string]string, len(r.Buyers))
	for _, b := range r.Buyers {
		accounts[b.TokenSHA256] = b.Key()
	}
	return accounts
}

// CreditBuyers credits each off-chain buyer's initial credit on the
// node's first sight of the account: one with no balance and no payment.
func (r RouterConfig) CreditBuyers(st *store.Store) error {
	for _, b := range r.Buyers {
		if b.InitialCredit == 0 || b.Payer != "" {
			continue
		}
		bal, err := st.Balance(b.Account)
		if err != nil {
			return fmt.Errorf("gateway: buyer %s: %w", b.Account, err)
		}
		paid, err := st.ListPayments(b.Account, 1)
		if err != nil {
			return fmt.Errorf("gateway: buyer %s: %w", b.Account, err)
		}
		if bal == 0 && len(paid) == 0 {
			if err := st.Credit(b.Account, b.InitialCredit); err != nil {
				return fmt.Errorf("gateway: buyer %s: %w", b.Account, err)
			}
		}
	}
	return nil
}
