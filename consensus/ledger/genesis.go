package ledger

import (
	"crypto/ed25519"
	"encoding/json"
	"fmt"

	"github.com/tenzrod/tenzrod/receipts/terms"
)

// AppGenesis is the application part of the CometBFT genesis (app_state).
type AppGenesis struct {
	Params     Params             `json:"params"`
	Accounts   []GenesisAccount   `json:"accounts"`
	Validators []GenesisValidator `json:"validators"`
	Escrows    []GenesisEscrow    `json:"escrows,omitempty"`
}

// GenesisEscrow opens a spend escrow at genesis: Amount of Payer's money
// that Settler's signed records may draw (a devnet's buyer pays from one
// per gateway from the first block). It is created, not taken from a
// balance, like a genesis account's balance.
type GenesisEscrow struct {
	Payer   terms.AccountID `json:"payer"`
	Settler terms.AccountID `json:"settler"`
	Amount  uint64          `json:"amount"`
}

// GenesisAccount funds an account at genesis.
type GenesisAccount struct {
	Account terms.AccountID `json:"account"`
	Balance uint64          `json:"balance"`
}

// GenesisValidator is a validator at genesis; its stake is created, not
// taken from a balance.
type GenesisValidator struct {
	Operator   terms.AccountID `json:"operator"`
	ConsPubKey []byte          `json:"cons_pub_key"`
	Stake      uint64          `json:"stake"`
}

// ParseAppGenesis decodes and validates app_state JSON.
func ParseAppGenesis(b []byte) (AppGenesis, error) {
	var g AppGenesis
	if err := json.Unmarshal(b, &g); err != nil {
		return g, fmt.Errorf("ledger: app genesis: %w", err)
	}
	return g, g.Validate()
}

// Validate checks the genesis for duplicate entries, bad keys and bad stakes.
func (g AppGenesis) Validate() error {
	if err := g.Params.Validate(); err != nil {
		return fmt.Errorf("ledger: genesis params: %w", err)
	}
	seen := map[terms.AccountID]bool{}
	for _, a := range g.Accounts {
		if seen[a.Account] {
			return fmt.Errorf("ledger: genesis account %s listed twice", a.Account)
		}
		seen[a.Account] = true
	}
	if len(g.Validators) == 0 {
		return fmt.Errorf("ledger: genesis has no validators")
	}
	escrows := map[[64]byte]bool{}
	for _, e := range g.Escrows {
		var k [64]byte
		copy(k[:32], e.Payer[:])
		copy(k[32:], e.Settler[:])
		if escrows[k] {
			return fmt.Errorf("ledger: genesis escrow of %s with settler %s listed twice", e.Payer, e.Settler)
		}
		escrows[k] = true
		if e.Amount == 0 {
			return fmt.Errorf("ledger: genesis escrow of %s with settler %s has no amount", e.Payer, e.Settler)
		}
	}
	ops, keys := map[terms.AccountID]bool{}, map[string]bool{}
	for _, v := range g.Validators {
		if len(v.ConsPubKey) != ed25519.PublicKeySize {
			return fmt.Errorf("ledger: genesis validator %s: consensus key is %d bytes", v.Operator, len(v.ConsPubKey))
		}
		if ops[v.Operator] || keys[string(v.ConsPubKey)] {
			return fmt.Errorf("ledger: genesis validator %s listed twice", v.Operator)
		}
		ops[v.Operator], keys[string(v.ConsPubKey)] = true, true
		if v.Stake/PowerUnit == 0 || v.Stake/PowerUnit > 1<<40 {
			return fmt.Errorf("ledger: genesis validator %s: stake %d gives power outside [1, 2^40]", v.Operator, v.Stake)
		}
	}
	return nil
}

// apply writes the genesis state.
func (g AppGenesis) apply(s KV, meta ChainMeta) ([]ValChange, error) {
	if err := Save(s, keyParams, g.Params); err != nil {
		return nil, err
	}
	for _, a := range g.Accounts {
		if err := Save(s, KeyAccount(a.Account), Account{Balance: a.Balance}); err != nil {
			return nil, err
		}
	}
	for _, e := range g.Escrows {
		if err := Save(s, KeyEscrow(e.Payer, e.Settler), Escrow{Balance: e.Amount, Settler: e.Settler}); err != nil {
			return nil, err
		}
		if err := ensureAccount(s, e.Payer); err != nil {
			return nil, err
		}
	}
	var (
		tot     ValidatorTotals
		changes []ValChange
	)
	for _, v := range g.Validators {
		val := Validator{Operator: v.Operator, ConsPubKey: v.ConsPubKey, Stake: v.Stake, Power: powerOf(v.Stake)}
		if err := Save(s, KeyValidator(v.Operator), val); err != nil {
			return nil, err
		}
		s.Set(keyConsKey(v.ConsPubKey), v.Operator[:])
		if err := ensureAccount(s, v.Operator); err != nil {
			return nil, err
		}
		tot.Power += val.Power
		tot.Count++
		changes = append(changes, ValChange{PubKey: v.ConsPubKey, Power: val.Power})
	}
	if err := Save(s, keyTotals, tot); err != nil {
		return nil, err
	}
	return changes, Save(s, keyMeta, meta)
}

// ensureAccount creates a at zero balance unless it exists.
func ensureAccount(s KV, a terms.AccountID) error {
	exists, err := Load(s, KeyAccount(a), new(Account))
	if err != nil || exists {
		return err
	}
	return Save(s, KeyAccount(a), Account{})
}
