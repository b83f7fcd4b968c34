package consensus

import (
	"errors"
	"strconv"

	abci "github.com/cometbft/cometbft/abci/types"
	"github.com/ethereum/go-ethereum/trie"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// route is one query path: the segments after its name and how they are
// answered.
type route struct {
	args  int
	serve func(t *trie.Trie, at ledger.Stamp, args []string) (*abci.QueryResponse, error)
}

// keyed is a raw route: key names the state key from the segments, and
// its error, whatever it is, is the path's fault (CodeMalformed).
func keyed(args int, key func(a []string) ([]byte, error)) route {
	return route{args, func(t *trie.Trie, _ ledger.Stamp, a []string) (*abci.QueryResponse, error) {
		k, err := key(a)
		if err != nil {
			return nil, badPath(err)
		}
		return rawKey(t, k)
	}}
}

// derived is a computed route: parse reads the segments into P (its error
// is the path's fault) and f computes the answer over a recording view of
// the state committed at the block r.at.
func derived[P any](args int, parse func(a []string) (P, error), f func(t *trie.Trie, r *recorder, p P) (any, error)) route {
	return route{args, func(t *trie.Trie, at ledger.Stamp, a []string) (*abci.QueryResponse, error) {
		p, err := parse(a)
		if err != nil {
			return nil, badPath(err)
		}
		return computed(t, at, func(r *recorder) (any, error) { return f(t, r, p) })
	}}
}

// ranged is a range-proven route over the index of the segments' first
// part from height from to height to.
func ranged[P any](parse func(string) (P, error), f func(t *trie.Trie, p P, from, to int64) (*abci.QueryResponse, error)) route {
	return route{3, func(t *trie.Trie, _ ledger.Stamp, a []string) (*abci.QueryResponse, error) {
		p, err := parse(a[0])
		if err != nil {
			return nil, badPath(err)
		}
		from, err1 := strconv.ParseInt(a[1], 10, 64)
		to, err2 := strconv.ParseInt(a[2], 10, 64)
		if err1 != nil || err2 != nil || from < 1 || to < from {
			return nil, reject(ledger.CodeMalformed, "query path: range %q..%q: want 1 <= from <= to", a[1], a[2])
		}
		return f(t, p, from, to)
	}}
}

// fixed is a route without segments over a key that is always the same.
func fixed(key func() []byte) route {
	return keyed(0, func([]string) ([]byte, error) { return key(), nil })
}

// none is the parse of a route without segments.
func none([]string) (struct{}, error) { return struct{}{}, nil }

func account(a []string) (terms.AccountID, error)    { return terms.ParseAccountID(a[0]) }
func machine(a []string) (identity.MachineID, error) { return identity.ParseMachineID(a[0]) }
func hash(a []string) (terms.Hash32, error)          { return terms.ParseHash(a[0]) }

// hashKey is a raw route keyed by one hash segment.
func hashKey(key func(terms.Hash32) []byte) route {
	return keyed(1, func(a []string) ([]byte, error) { h, err := hash(a); return key(h), err })
}

// routes is every query path by its first segment (see MaxListed's doc).
var routes = map[string]route{
	"account":   keyed(1, func(a []string) ([]byte, error) { p, err := account(a); return ledger.KeyAccount(p), err }),
	"validator": keyed(1, func(a []string) ([]byte, error) { p, err := account(a); return ledger.KeyValidator(p), err }),
	"provider":  keyed(1, func(a []string) ([]byte, error) { m, err := machine(a); return ledger.KeyProvider(m), err }),
	"peer":      keyed(1, func(a []string) ([]byte, error) { return ledger.KeyPeer(a[0]), nil }),
	"escrow": keyed(2, func(a []string) ([]byte, error) {
		p, err := terms.ParseAccountID(a[0])
		s, err2 := terms.ParseAccountID(a[1])
		return ledger.KeyEscrow(p, s), errors.Join(err, err2)
	}),
	"record": keyed(2, func(a []string) ([]byte, error) {
		p, err := terms.ParseAccountID(a[0])
		d, err2 := terms.ParseHash(a[1])
		return ledger.KeyRecord(p, d), errors.Join(err, err2)
	}),
	"proposal": keyed(1, func(a []string) ([]byte, error) {
		id, err := strconv.ParseUint(a[0], 10, 64)
		return ledger.KeyProposal(id), err
	}),
	"tally": keyed(2, func(a []string) ([]byte, error) {
		m, err := identity.ParseMachineID(a[0])
		h, err2 := strconv.ParseUint(a[1], 10, 64)
		return ledger.KeyHourTally(m, h), errors.Join(err, err2)
	}),
	"name":            keyed(1, func(a []string) ([]byte, error) { return ledger.KeyName(a[0]), ledger.CheckName(a[0]) }),
	"params":          fixed(ledger.KeyParams),
	"meta":            {0, blockMeta},
	"supply":          fixed(ledger.KeySupply),
	"stream":          hashKey(ledger.KeyStream),
	"plan":            hashKey(ledger.KeyPlan),
	"dispute":         hashKey(ledger.KeyDispute),
	"disputeevidence": hashKey(ledger.KeyDisputeEvidence),
	"modelholders":    hashKey(ledger.KeyModelHolders),
	"standing": derived(1, machine, func(_ *trie.Trie, r *recorder, m identity.MachineID) (any, error) {
		return ledger.ComputeStanding(r, m, r.at)
	}),
	"names": derived(0, none, func(t *trie.Trie, r *recorder, _ struct{}) (any, error) {
		return list[ledger.NameRecord](t, r, ledger.NamePrefix())
	}),
	"validators": derived(0, none, func(t *trie.Trie, r *recorder, _ struct{}) (any, error) {
		return list[ledger.Validator](t, r, []byte("v/"))
	}),
	"records": derived(1, account, func(t *trie.Trie, r *recorder, p terms.AccountID) (any, error) {
		return list[ledger.SettledRecord](t, r, ledger.KeyRecord(p, terms.Hash32{})[:34])
	}),
	"escrows": derived(1, account, func(t *trie.Trie, r *recorder, p terms.AccountID) (any, error) {
		first, _ := ledger.EscrowRange(p)
		return list[ledger.Escrow](t, r, first[:34])
	}),
	"streams": derived(1, account, func(t *trie.Trie, r *recorder, p terms.AccountID) (any, error) { return openStreams(t, r, p) }),
	"plans":   derived(1, account, func(t *trie.Trie, r *recorder, p terms.AccountID) (any, error) { return openPlans(t, r, p) }),
	"disputes": derived(0, none, func(t *trie.Trie, r *recorder, _ struct{}) (any, error) {
		return list[ledger.Dispute](t, r, ledger.DisputePrefix())
	}),
	"activedisputes": derived(0, none, func(_ *trie.Trie, r *recorder, _ struct{}) (any, error) { return activeDisputes(r) }),
	"recordrange":    ranged(terms.ParseAccountID, payerIndex.serve),
	"providerrange":  ranged(identity.ParseMachineID, providerIndex.serve),
}
