package buyerkeys

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
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
// for the operator (its admin token), and tenzro_getBuyerUsage for the
// operator or the key's own holder.
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

// Usage is tenzro_getBuyerUsage's result.
type Usage struct {
	Status
	Days []DayUsage `json:"days"`
}

// maxUsageDays bounds the days tenzro_getBuyerUsage returns.
const maxUsageDays = 366

// RegisterRPC contributes the methods.
func (a API) RegisterRPC(s rpc.Registry) {
	admin := func(name string, f func(json.RawMessage) (any, error)) {
		s.Register(name, func(ctx context.Context, raw json.RawMessage) (any, error) {
			if a.Store == nil {
				return nil, rpc.Unavailable("this node runs no gateway; it keeps no buyer keys")
			}
			if ok, _, err := a.Callers.Caller(rpc.Header(ctx)); err != nil || !ok {
				return nil, rpc.Unauthorized("%s: the operator's admin token is required", name)
			}
			return f(raw)
		})
	}
	admin("tenzro_createBuyerKey", func(raw json.RawMessage) (any, error) {
		p, err := rpc.Params[CreateParams](raw)
		if err != nil {
			return nil, err
		}
		k, tok, err := a.Store.Create(p.Payer, p.Settings)
		if err != nil {
			return nil, keyError(err)
		}
		return Created{Key: k, Token: tok}, nil
	})
	admin("tenzro_listBuyerKeys", func(json.RawMessage) (any, error) {
		out := []Status{}
		for _, k := range a.Store.List() {
			st, err := a.Store.Status(k.ID)
			if err != nil {
				return nil, keyError(err)
			}
			out = append(out, st)
		}
		return out, nil
	})
	admin("tenzro_updateBuyerKey", func(raw json.RawMessage) (any, error) {
		p, err := rpc.Params[UpdateParams](raw)
		if err != nil {
			return nil, err
		}
		k, err := a.Store.Update(p.ID, p.Settings)
		return k, keyError(err)
	})
	admin("tenzro_revokeBuyerKey", func(raw json.RawMessage) (any, error) {
		p, err := rpc.Params[struct {
			ID string `json:"id"`
		}](raw)
		if err != nil {
			return nil, err
		}
		k, err := a.Store.Revoke(p.ID)
		return k, keyError(err)
	})
	s.Register("tenzro_getBuyerUsage", a.usage)
}

// usage answers tenzro_getBuyerUsage {key}: the operator reads any key's,
// a key's holder its own (key may be omitted then).
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
	h := rpc.Header(ctx)
	admin, _, _ := a.Callers.Caller(h)
	if !admin {
		own, ok := a.Store.Lookup(bearerHash(h))
		if !ok || p.Key != "" && p.Key != own.ID {
			return nil, rpc.Unauthorized("tenzro_getBuyerUsage: the key's own token or the operator's admin token")
		}
		p.Key = own.ID
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
	return Usage{Status: st, Days: days}, nil
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
