package attacktest

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/p2p"
	"github.com/tenzrod/tenzrod/p2p/infer"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router/gateway"
)

// freeCalls is the number of calls the unregistered peer tries.
const freeCalls = 10

// unregisteredFreeCalls is #19's fourth probe: a fresh libp2p peer, no
// registration, no payment, asked a provider directly for completions and
// got 4 of them free. Now unknown callers share one small budget (6 a
// minute by default) and pay nothing only within it: of freeCalls calls
// in a burst, at most the budget may be served, the rest refused with a
// typed answer, and honest calls through the gateway go on (Run's honest
// call).
func unregisteredFreeCalls(ctx context.Context, e *env) (Verdict, string, error) {
	if len(e.t.ProviderAddrs) == 0 || e.t.Network == "" {
		return NA, "needs a provider's p2p address and the network name", nil
	}
	_, _, rc, err := e.paidReceipt(ctx, "whose model is this")
	if err != nil {
		return Failed, "", err
	}
	info, err := peer.AddrInfoFromString(e.t.ProviderAddrs[0])
	if err != nil {
		return Failed, "", fmt.Errorf("attacktest: provider address: %w", err)
	}
	dir, err := os.MkdirTemp("", "attacktest-peer-")
	if err != nil {
		return Failed, "", fmt.Errorf("attacktest: %w", err)
	}
	defer func() {
		if err := os.RemoveAll(dir); err != nil {
			e.log.Warn("attacktest: temporary peer key left behind", "dir", dir, "err", err)
		}
	}()
	pc := p2p.DefaultConfig()
	pc.Network, pc.Listen, pc.KeyFile = e.t.Network, []string{"/ip4/127.0.0.1/tcp/0"}, filepath.Join(dir, "p2p.key")
	h, err := p2p.New(ctx, pc)
	if err != nil {
		return Failed, "", fmt.Errorf("attacktest: libp2p host: %w", err)
	}
	if err := h.Start(ctx); err != nil {
		return Failed, "", fmt.Errorf("attacktest: libp2p host: %w", err)
	}
	defer func() { _ = h.Stop(context.Background()) }()
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := h.Host().Connect(cctx, *info); err != nil {
		return Failed, "", fmt.Errorf("attacktest: connect to the provider: %w", err)
	}
	tr := gateway.HostTransport(h.Host(), e.t.Network)
	served, tokens := 0, 0
	refused := map[string]int{}
	for i := 0; i < freeCalls; i++ {
		nonce := make([]byte, infer.NonceSize)
		_, _ = rand.Read(nonce)
		req := &infer.Request{Nonce: nonce, ModelID: rc.ModelID, Model: e.t.Model, Chat: true,
			Messages: []terms.Message{{Role: "user", Content: fmt.Sprint("free call ", i)}}, Sampling: terms.Sampling{MaxTokens: 8},
			Verification: terms.VerifyReceipt}
		f, _, err := tr.Call(cctx, info.ID, req, infer.ClientConfig{FirstTokenTimeout: 20 * time.Second, StallTimeout: 10 * time.Second},
			func(*infer.TokenFrame) error { return nil })
		var ef *infer.ErrorFrame
		switch {
		case err == nil && f != nil:
			served++
			if _, r, perr := receipt.Parse(f.Receipt); perr == nil {
				tokens += int(r.Units.OutputTokens)
			}
		case errors.As(err, &ef):
			refused[fmt.Sprintf("%d %s", ef.Status, ef.Code)]++
		default:
			return Failed, "", fmt.Errorf("attacktest: call %d: %w", i, err)
		}
	}
	detail := fmt.Sprintf("%d calls from an unregistered, unpaying peer: %d served (%d tokens), refused %v", freeCalls, served, tokens, refused)
	if served > e.t.UnknownBudget {
		return Broke, detail + fmt.Sprintf("; more than the unknown callers' budget of %d", e.t.UnknownBudget), nil
	}
	return Held, detail, nil
}
