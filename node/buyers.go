package node

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"github.com/tenzrod/tenzrod/router/gateway"
)

// BuyerConfig maps an access token to an account at this node. Only the
// token's SHA-256 is kept, so the config file never holds the secret; the
// token itself is never sent to a provider.
type BuyerConfig struct {
	Account     string `toml:"account"`
	TokenSHA256 string `toml:"token_sha256"`
	// InitialCredit is credited once, the first time the node sees the
	// account, in micro-units.
	InitialCredit uint64 `toml:"initial_credit"`
	// The buyer's fair share (max_concurrent, rate_per_minute); 0 takes
	// [router.buyer_defaults].
	gateway.BuyerLimits
}

var accountRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

// Validate checks one buyer entry.
func (b BuyerConfig) Validate() error {
	if !accountRE.MatchString(b.Account) {
		return fmt.Errorf("account %q must match %s", b.Account, accountRE)
	}
	if h, err := hex.DecodeString(b.TokenSHA256); err != nil || len(h) != sha256.Size {
		return errors.New("token_sha256 must be 64 hex digits (sha256 of the token)")
	}
	return b.BuyerLimits.Validate()
}

// TokenHash returns the hex SHA-256 of a token, as token_sha256 holds it.
func TokenHash(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])
}

// buyers resolves bearer tokens to accounts.
type buyers struct{ byHash map[string]string }

func newBuyers(cfg []BuyerConfig) *buyers {
	b := &buyers{byHash: map[string]string{}}
	for _, c := range cfg {
		b.byHash[strings.ToLower(c.TokenSHA256)] = c.Account
	}
	return b
}

// errUnauthorized is returned for a missing or unknown token.
var errUnauthorized = errors.New("a valid bearer token is required (Authorization: Bearer …)")

// account returns the account of the request's bearer token.
func (b *buyers) account(h http.Header) (string, error) {
	auth := h.Get("Authorization")
	tok, ok := strings.CutPrefix(auth, "Bearer ")
	if !ok || tok == "" {
		return "", errUnauthorized
	}
	want := TokenHash(tok)
	for hash, acct := range b.byHash {
		if subtle.ConstantTimeCompare([]byte(hash), []byte(want)) == 1 {
			return acct, nil
		}
	}
	return "", errUnauthorized
}
