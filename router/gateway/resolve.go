package gateway

import (
	"context"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router"
)

// resolve turns the request's model into exactly one catalog ID: the hex
// ID itself; a name bound by the Names resolver (the chain's records); or,
// for a name no record binds (or without a resolver), the one ID every
// offer the request may use announces under that name. Two IDs under one
// unbound name are never merged: the buyer is asked for the ID (409),
// with the candidates listed.
func (g *Gateway) resolve(ctx context.Context, req *Request) ([32]byte, error) {
	if id, ok := router.ParseModelID(strings.ToLower(req.Model)); ok {
		return id, nil
	}
	if g.names != nil {
		id, ok, err := g.names.Resolve(ctx, req.Model)
		if err != nil {
			return id, &Error{Status: http.StatusServiceUnavailable, Code: "name_unavailable", Param: "model", RetryAfter: time.Second,
				Message: fmt.Sprintf("cannot resolve model name %q now: %v", req.Model, err)}
		}
		if ok {
			return id, nil
		}
	}
	ids := g.table.IDsNamed(req.Model, func(o router.Offer) bool { return routable(o, req) })
	switch len(ids) {
	case 0:
		return [32]byte{}, g.notAnnounced(req.Model, "model")
	case 1:
		return ids[0], nil
	}
	hexes := make([]string, len(ids))
	for i, id := range ids {
		hexes[i] = hex.EncodeToString(id[:])
	}
	return [32]byte{}, &Error{Status: http.StatusConflict, Code: "ambiguous_model", Param: "model",
		Message: fmt.Sprintf("model name %q is announced with %d different catalog IDs and no record binds it; ask for one by ID: %s",
			req.Model, len(ids), strings.Join(hexes, ", "))}
}

// Resolve is the catalog ID a request for model at level would be routed
// to (see resolve); the error is an *Error naming why not.
func (g *Gateway) Resolve(ctx context.Context, model string, level terms.Verification) ([32]byte, error) {
	return g.resolve(ctx, &Request{Model: model, Verification: level})
}

// routable reports whether the request may go to o at all, its state
// aside: never a provider a conviction bars until it re-bonds; an
// unregistered provider (the chain is on and does not know it) only when
// the buyer opted in, and only at verification none, which promises
// nothing a bond would back.
func routable(o router.Offer, req *Request) bool {
	return !o.Barred && (!o.Unregistered || req.AllowUnregistered && req.Verification == terms.VerifyNone)
}

// Model is one served catalog ID and the names that resolve to it.
type Model struct {
	ID    string   // 64 hex digits
	Names []string // names a request may use for exactly this ID
}

// Models lists the catalog IDs some provider serves (up, warm), each with
// the names that resolve to it for a request at verification none: a name
// bound to another ID, or ambiguous, is not listed under this one.
func (g *Gateway) Models(ctx context.Context) []Model {
	var out []Model
	for _, s := range g.table.Models() {
		if s.Providers == 0 {
			continue
		}
		m := Model{ID: s.ID}
		for _, name := range s.Names {
			id, err := g.resolve(ctx, &Request{Model: name, Verification: terms.VerifyNone})
			if err == nil && hex.EncodeToString(id[:]) == s.ID {
				m.Names = append(m.Names, name)
			}
		}
		out = append(out, m)
	}
	return out
}

// warmUp is how long after start a gateway that knows no offer of any
// model answers "warming up" rather than "no such model": providers
// repeat their announcements (heartbeats may come first), and a restarted
// gateway hears them within this.
const warmUp = 15 * time.Second

// notAnnounced is the answer for a model no provider offers: 404, or 503
// with a retry hint while the gateway may not have heard the market yet.
func (g *Gateway) notAnnounced(model, param string) *Error {
	if len(g.table.Models()) == 0 && g.clock.Since(g.started) < warmUp {
		return &Error{Status: http.StatusServiceUnavailable, Code: "warming_up", RetryAfter: time.Second,
			Message: fmt.Sprintf("this gateway started moments ago and has heard no provider offer %s yet; retry shortly", model)}
	}
	return &Error{Status: http.StatusNotFound, Code: "model_not_found", Param: param, Message: "no provider announces model " + model}
}
