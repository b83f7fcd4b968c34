package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"unicode/utf8"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/router/hedge"
	"github.com/tenzrod/tenzrod/router/strategy"
)

// maxFallbackModels bounds `models`: each is a full quote and race.
const maxFallbackModels = 8

// checkRouting is intake's check of the fallback models and the region
// pin (a country code or a continent, any case).
func checkRouting(req *Request) error {
	if req.PinRegion != "" {
		if err := gossip.CheckRegion(canonRegion(req.PinRegion)); err != nil {
			return &Error{Status: http.StatusBadRequest, Code: "invalid_request", Param: "tenzro.region",
				Message: fmt.Sprintf("region pin: %v (a country code such as DE or a continent such as Europe)", err)}
		}
	}
	if len(req.Models) > maxFallbackModels {
		return &Error{Status: http.StatusBadRequest, Code: "invalid_request", Param: "models",
			Message: fmt.Sprintf("%d fallback models, limit %d", len(req.Models), maxFallbackModels)}
	}
	for i, m := range req.Models {
		if m == "" || len(m) > maxModelLen || !utf8.ValidString(m) {
			return &Error{Status: http.StatusBadRequest, Code: "invalid_request", Param: fmt.Sprintf("models[%d]", i),
				Message: fmt.Sprintf("a model must be 1..%d bytes of UTF-8", maxModelLen)}
		}
	}
	if len(req.Models) > 0 && req.Session != nil {
		return &Error{Status: http.StatusBadRequest, Code: "invalid_request", Param: "models",
			Message: "a session turn stays on its session's model; models is not allowed with tenzro.session"}
	}
	return nil
}

// raceModels races req's model and, when no provider of it could serve
// (none announces it, the preferences or pins left none, or every one
// failed before answering), each fallback in turn. req.Model is left
// naming the model that served, or the last one tried.
func (g *Gateway) raceModels(ctx context.Context, req *Request) ([]strategy.Candidate, map[peer.ID]choice, *stream, hedge.Report, error) {
	models := append([]string{req.Model}, req.Models...)
	for i := 0; ; i++ {
		req.Model = models[i]
		cands, choices, s, rep, err := g.raceModel(ctx, req)
		if err == nil || i == len(models)-1 || ctx.Err() != nil || !fallsThrough(err) {
			return cands, choices, s, rep, err
		}
		g.log.Info("no provider of the model served; trying the next of models", "model", models[i], "next", models[i+1], "err", oneLine(err))
	}
}

// fallsThrough reports whether a failed model lets the next be tried: the
// model is not served, or none of its providers could take the request.
// A provider's 429 passes too (this provider is busy, another model's
// may not be); the buyer's own faults (400s, funds) stand for every model.
func fallsThrough(err error) bool {
	var ge *Error
	if !errors.As(err, &ge) {
		return false
	}
	return !ge.Partial && (ge.Status == http.StatusNotFound || ge.Status == http.StatusTooManyRequests || ge.Status >= http.StatusInternalServerError)
}
