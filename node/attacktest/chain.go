package attacktest

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tenzrod/tenzrod/cmd/tenzrod/shell"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// chain talks to the gateway's chain node over JSON-RPC, as any client
// of the public API would.
type chain struct {
	rpc     *shell.Client
	chainID string
	wait    time.Duration
	mu      sync.Mutex // one transaction in flight per process: nonces are read, not tracked
}

func newChain(ctx context.Context, api string, wait time.Duration) (*chain, error) {
	c, err := shell.NewClient(api)
	if err != nil {
		return nil, fmt.Errorf("attacktest: %w", err)
	}
	var info struct {
		ChainID string `json:"chain_id"`
	}
	if err := call(ctx, c, "tenzro_nodeInfo", nil, &info); err != nil {
		return nil, err
	}
	if info.ChainID == "" {
		return nil, fmt.Errorf("attacktest: the node at %s runs no chain", api)
	}
	return &chain{rpc: c, chainID: info.ChainID, wait: wait}, nil
}

func call(ctx context.Context, c *shell.Client, method string, params, v any) error {
	raw, err := c.Call(ctx, method, params)
	if err != nil {
		return fmt.Errorf("attacktest: %s: %w", method, err)
	}
	if v == nil {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("attacktest: %s: answer %.200s: %w", method, raw, err)
	}
	return nil
}

type account struct {
	Balance uint64 `json:"balance"`
	Nonce   uint64 `json:"nonce"`
	Height  int64  `json:"height"`
}

func (c *chain) account(ctx context.Context, id terms.AccountID) (account, error) {
	var a account
	err := call(ctx, c.rpc, "tenzro_getAccount", map[string]string{"account": id.String()}, &a)
	return a, err
}

// escrow is payer's escrow with settler (zero if there is none).
func (c *chain) escrow(ctx context.Context, payer, settler terms.AccountID) (ledger.Escrow, bool, error) {
	var v struct {
		Escrows []ledger.Escrow `json:"escrows"`
	}
	if err := call(ctx, c.rpc, "tenzro_listEscrows", map[string]string{"account": payer.String()}, &v); err != nil {
		return ledger.Escrow{}, false, err
	}
	for _, e := range v.Escrows {
		if e.Settler == settler {
			return e, true, nil
		}
	}
	return ledger.Escrow{}, false, nil
}

func (c *chain) params(ctx context.Context) (ledger.Params, error) {
	var p ledger.Params
	err := call(ctx, c.rpc, "tenzro_getParams", nil, &p)
	return p, err
}

// txResult is a committed transaction's outcome.
type txResult struct {
	Hash   string `json:"hash"`
	Height int64  `json:"height"`
	Code   uint32 `json:"code"`
	Result string `json:"result"`
	Log    string `json:"log"`
	Data   string `json:"data"`
}

// submit signs payload with key at the account's next nonce, sends it and
// waits for its commit. A CheckTx rejection comes back as a txResult with
// Height 0 and the code, not as an error.
func (c *chain) submit(ctx context.Context, key ed25519.PrivateKey, payload any) (txResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := ledger.NewSigner(key, c.chainID)
	for attempt := 0; ; attempt++ {
		a, err := c.account(ctx, s.Account())
		if err != nil {
			return txResult{}, err
		}
		raw, err := s.SignTx(a.Nonce, payload)
		if err != nil {
			return txResult{}, fmt.Errorf("attacktest: sign %T: %w", payload, err)
		}
		var sent txResult
		err = call(ctx, c.rpc, "tenzro_sendTx", map[string]string{"tx": base64.StdEncoding.EncodeToString(raw)}, &sent)
		var re *shell.RPCError
		if errors.As(err, &re) && len(re.Data) > 0 {
			var d struct {
				Code uint32 `json:"code"`
			}
			if json.Unmarshal(re.Data, &d) == nil {
				// Another transaction of this account (a provider's own
				// settlement) took the nonce: sign again once it commits.
				if d.Code == uint32(ledger.CodeStaleNonce) && attempt < 5 {
					time.Sleep(500 * time.Millisecond)
					continue
				}
				return txResult{Code: d.Code, Result: ledger.Code(d.Code).String(), Log: re.Message}, nil
			}
		}
		if err != nil {
			return txResult{}, err
		}
		h := ledger.TxHash(raw)
		return c.waitTx(ctx, hex.EncodeToString(h[:]))
	}
}

func (c *chain) waitTx(ctx context.Context, hash string) (txResult, error) {
	ctx, cancel := context.WithTimeout(ctx, c.wait)
	defer cancel()
	for {
		var r txResult
		err := call(ctx, c.rpc, "tenzro_getTx", map[string]string{"hash": hash}, &r)
		if err == nil && r.Height > 0 {
			return r, nil
		}
		select {
		case <-ctx.Done():
			return txResult{}, fmt.Errorf("attacktest: transaction %s not committed within %s (last: %w)", hash, c.wait, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// settle submits records in one Settlement signed by key and returns its
// report.
func (c *chain) settle(ctx context.Context, key ed25519.PrivateKey, recs []receipt.PaymentRecord) (ledger.SettleReport, txResult, error) {
	r, err := c.submit(ctx, key, &ledger.Settlement{Records: recs})
	if err != nil {
		return ledger.SettleReport{}, r, err
	}
	if r.Code != uint32(ledger.CodeOK) {
		return ledger.SettleReport{}, r, fmt.Errorf("attacktest: settlement refused whole: %s: %s", r.Result, r.Log)
	}
	data, err := hex.DecodeString(r.Data)
	if err != nil {
		return ledger.SettleReport{}, r, fmt.Errorf("attacktest: settle report: %w", err)
	}
	rep, err := ledger.DecodeSettleReport(data)
	return rep, r, err
}

// payment is a settled record as tenzro_getPayments shows it.
type payment struct {
	Provider      string `json:"provider"`
	RequestDigest string `json:"request_digest"`
	Price         uint64 `json:"price"`
	Settler       string `json:"settler"`
}

// settled finds payer's settled record for request rd, if any.
func (c *chain) settled(ctx context.Context, payer terms.AccountID, rd terms.Hash32) (payment, bool, error) {
	var v struct {
		Records []payment `json:"records"`
	}
	if err := call(ctx, c.rpc, "tenzro_getPayments", map[string]any{"payer": payer.String()}, &v); err != nil {
		return payment{}, false, err
	}
	want := hex.EncodeToString(rd[:])
	for _, p := range v.Records {
		if p.RequestDigest == want || p.RequestDigest == rd.String() {
			return p, true, nil
		}
	}
	return payment{}, false, nil
}

// until polls cond every 250 ms until it holds or the chain wait runs out.
func (c *chain) until(ctx context.Context, what string, cond func() (bool, error)) error {
	return c.untilFor(ctx, c.wait, what, cond)
}

// untilFor is until with its own bound.
func (c *chain) untilFor(ctx context.Context, wait time.Duration, what string, cond func() (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for {
		ok, err := cond()
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("attacktest: %s: not within %s (last error: %w)", what, wait, err)
		case <-time.After(250 * time.Millisecond):
		}
	}
}
