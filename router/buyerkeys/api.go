package buyerkeys

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"math/bits"
	"net/http"
	"strings"

	"github.com/tenzrod/tenzrod/node/rpc"
)

// Callers authenticates an RPC call: the operator's admin token, or a
// buyer's token (whose own key may read its usage).
type Callers interface {
	Caller(h http.Header) (admin bool, payer string, err error)
}

// API contributes the key methods: tenzro_createBuyerKey,
// tenzro_listBuyerKeys, tenzro_updateBuyerKey and tenzro_revokeBuyerKey
// for the operator (its admin token) or a payer for its own keys (its
// [[router.buyers]] token), and tenzro_getBuyerUsage for those or the
// key's own holder.
type API struct {
	Store   *Store // nil on a node with no gateway
	Callers Callers
}

// CreateParams are tenzro_createBuyerKey's params.
type CreateParams struct {
	Payer string `json:"payer"`
	Settings
}

// Created is tenzro_createBuyerKey's result: the token is shown once.
type Created struct {
	Key   *Key   `json:"key"`
	Token string `json:"token"`
}

// UpdateParams are tenzro_updateBuyerKey's params: the key's whole new
// settings (list, change, send back).
type UpdateParams struct {
	ID string `json:"id"`
	Settings
}

// Usage is tenzro_getBuyerUsage's result: the key's spend, and its billed
// calls per model and per provider over the days returned, in all and
// per UTC day.
type Usage struct {
	Status
	Models    map[string]Tally `json:"models"`
	Providers map[string]Tally `json:"providers"`
	Days      []DayUsage       `json:"days"`
}

// sum adds each day's tallies into u's totals.
func (u *Usage) sum() {
	u.Models, u.Providers = map[string]Tally{}, map[string]Tally{}
	for _, d := range u.Days {
		for _, m := range []struct{ from, to map[string]Tally }{{d.Models, u.Models}, {d.Providers, u.Providers}} {
			for name, t := range m.from {
				m.to[name] = Tally{Amount: satAdd(m.to[name].Amount, t.Amount), Calls: satAdd(m.to[name].Calls, t.Calls)}
			}
		}
	}
}

// satAdd adds, saturating: Billed checks each day's sums, but a total
// over days read back is only shown, never billed.
func satAdd(a, b uint64) uint64 {
	if s, c := bits.Add64(a, b, 0); c == 0 {
		return s
	}
	return math.MaxUint64
}

// maxUsageDays bounds the days tenzro_getBuyerUsage returns.
const maxUsageDays = 366

// manager is who manages keys in a call: the operator (payer "": every
// key) or a payer by its own [[router.buyers]] token (only keys it pays
// for). A run-time key's token manages nothing, so a key with a budget
// cannot make itself one without.
func (a API) manager(ctx context.Context, name string) (string, error) {
	if a.Store == nil {
		return "", rpc.Unavailable("this node runs no gateway; it keeps no buyer keys")
	}
	h := rpc.Header(ctx)
	admin, payer, err := a.Callers.Caller(h)
	switch {
	case err != nil:
	case admin:
		return "", nil
	default:
		if _, isKey := a.Store.Lookup(bearerHash(h)); !isKey {
			return payer, nil
		}
	}
	return "", rpc.Unauthorized("%s: the operator's admin token, or the payer's own [[router.buyers]] token for its keys", name)
}

// owned checks that the manager (payer; "" for the operator) may manage
// key id: another payer's key is answered as no key.
func (a API) owned(id, payer string) error {
	k, ok := a.Store.Get(id)
	if !ok || payer != "" && k.Payer != payer {
		return rpc.InvalidParams("%v: %q", ErrNotFound, id)
	}
	return nil
}

// RegisterRPC contributes the methods.
func (a API) RegisterRPC(s rpc.Registry) {
	manage := func(name string, f func(payer string, raw json.RawMessage) (any, error)) {
		s.Register(name, func(ctx context.Context, raw json.RawMessage) (any, error) {
			payer, err := a.manager(ctx, name)
			if err != nil {
				return nil, err
			}
			return f(payer, raw)
		})
	}
	manage("tenzro_createBuyerKey", func(payer string, raw json.RawMessage) (any, error) {
		p, err := rpc.Params[CreateParams](raw)
		if err != nil {
			return nil, err
		}
		if payer != "" {
			if p.Payer != "" && p.Payer != payer {
				return nil, rpc.Unauthorized("tenzro_createBuyerKey: a payer's token makes keys paid by that payer only (%s)", payer)
			}
			p.Payer = payer
		}
		k, tok, err := a.Store.Create(p.Payer, p.Settings)
		if err != nil {
			return nil, keyError(err)
		}
		return Created{Key: k, Token: tok}, nil
	})
	manage("tenzro_listBuyerKeys", func(payer string, _ json.RawMessage) (any, error) {
		out := []Status{}
		for _, k := range a.Store.List() {
			if payer != "" && k.Payer != payer {
				continue
			}
			st, err := a.Store.Status(k.ID)
			if err != nil {
				return nil, keyError(err)
			}
			out = append(out, st)
		}
		return out, nil
	})
	manage("tenzro_updateBuyerKey", func(payer string, raw json.RawMessage) (any, error) {
		p, err := rpc.Params[UpdateParams](raw)
		if err != nil {
			return nil, err
		}
		if err := a.owned(p.ID, payer); err != nil {
			return nil, err
		}
		k, err := a.Store.Update(p.ID, p.Settings)
		return k, keyError(err)
	})
	manage("tenzro_revokeBuyerKey", func(payer string, raw json.RawMessage) (any, error) {
		p, err := rpc.Params[struct {
			ID string `json:"id"`
		}](raw)
		if err != nil {
			return nil, err
		}
		if err := a.owned(p.ID, payer); err != nil {
			return nil, err
		}
		k, err := a.Store.Revoke(p.ID)
		return k, keyError(err)
	})
	s.Register("tenzro_getBuyerUsage", a.usage)
}

// usage answers tenzro_getBuyerUsage {key}: the operator reads any key's,
// a payer its own keys', a key's holder its own (key may be omitted then).
func (a API) usage(ctx context.Context, raw json.RawMessage) (any, error) {
	if a.Store == nil {
		return nil, rpc.Unavailable("this node runs no gateway; it keeps no buyer keys")
	}
	p, err := rpc.Params[struct {
		Key  string `json:"key"`
		Days int    `json:"days"`
	}](raw)
	if err != nil {
		return nil, err
	}
	if own, ok := a.Store.Lookup(bearerHash(rpc.Header(ctx))); ok {
		if own.Revoked || p.Key != "" && p.Key != own.ID {
			return nil, rpc.Unauthorized("tenzro_getBuyerUsage: a key's token reads that key's usage only, while it is not revoked")
		}
		p.Key = own.ID
	} else {
		payer, err := a.manager(ctx, "tenzro_getBuyerUsage")
		if err != nil {
			return nil, err
		}
		if err := a.owned(p.Key, payer); err != nil {
			return nil, err
		}
	}
	if p.Days <= 0 || p.Days > maxUsageDays {
		p.Days = maxUsageDays
	}
	st, err := a.Store.Status(p.Key)
	if err != nil {
		return nil, keyError(err)
	}
	days, err := a.Store.Usage(p.Key, p.Days)
	if err != nil {
		return nil, keyError(err)
	}
	if days == nil {
		days = []DayUsage{}
	}
	u := Usage{Status: st, Days: days}
	u.sum()
	return u, nil
}

// bearerHash is the SHA-256 (hex) of the request's bearer token, "" for
// none.
func bearerHash(h http.Header) string {
	tok, ok := strings.CutPrefix(h.Get("Authorization"), "Bearer ")
	if !ok || tok == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(sum[:])
}

// keyError is a store error as the RPC answers it.
func keyError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrInvalid), errors.Is(err, ErrNotFound):
		return rpc.InvalidParams("%v", err)
	default:
		return err
	}
}
