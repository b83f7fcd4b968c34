package openai

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"

	"github.com/tenzrod/tenzrod/router/buyerkeys"
)

// ErrUnauthorized is returned for a missing or unknown bearer token.
var ErrUnauthorized = errors.New("a valid bearer token is required (Authorization: Bearer …)")

// TokenHash returns the hex SHA-256 of a token, as a config keeps it: the
// config file never holds the secret.
func TokenHash(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])
}

// Buyers resolves bearer tokens to the accounts that pay for their calls,
// and recognises the operator's admin token. Only tokens' SHA-256 hashes
// are held.
type Buyers struct {
	byHash map[string]string
	admin  string // SHA-256 hex of the operator's token; "" for none
	keys   *buyerkeys.Store
}

// NewBuyers builds the resolver from token hashes (hex SHA-256) to the
// account each bills, and the operator's admin token hash ("" for none).
func NewBuyers(accounts map[string]string, adminSHA256 string) *Buyers {
	b := &Buyers{byHash: make(map[string]string, len(accounts)), admin: strings.ToLower(adminSHA256)}
	for hash, acct := range accounts {
		b.byHash[strings.ToLower(hash)] = acct
	}
	return b
}

// Account returns the account of the request's bearer token.
func (b *Buyers) Account(h http.Header) (string, error) {
	tok, ok := bearer(h)
	if !ok {
		return "", ErrUnauthorized
	}
	want := TokenHash(tok)
	// Every entry is compared in constant time: the time taken says
	// nothing about how close a guess came.
	for hash, acct := range b.byHash {
		if subtle.ConstantTimeCompare([]byte(hash), []byte(want)) == 1 {
			return acct, nil
		}
	}
	if acct, ok := b.keyAccount(want); ok {
		return acct, nil
	}
	return "", ErrUnauthorized
}

// Caller authenticates a read of a buyer's own data (a session, dispute
// evidence): the operator's admin token reads anyone's, a buyer's token
// its own account's.
func (b *Buyers) Caller(h http.Header) (admin bool, payer string, err error) {
	if tok, ok := bearer(h); ok && b.admin != "" &&
		subtle.ConstantTimeCompare([]byte(TokenHash(tok)), []byte(b.admin)) == 1 {
		return true, "", nil
	}
	payer, err = b.Account(h)
	return false, payer, err
}

// Auth is the check WithAuth takes: a request without a buyer's token is
// refused before its body is read.
func (b *Buyers) Auth(r *http.Request) error {
	_, err := b.Account(r.Header)
	return err
}

func bearer(h http.Header) (string, bool) {
	tok, ok := strings.CutPrefix(h.Get("Authorization"), "Bearer ")
	return tok, ok && tok != ""
}
