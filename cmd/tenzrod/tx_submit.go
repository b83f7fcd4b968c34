package main

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tenzrod/tenzrod/cmd/tenzrod/shell"
	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/chainapi"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/node"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// rpcInvalidParams is JSON-RPC's -32602: a CheckTx rejection, and
// tenzro_getTx's answer until the transaction is committed.
const rpcInvalidParams = -32602

// txOpts are the flags every `tx` command shares.
type txOpts struct {
	api     string
	keyFile string
	wait    time.Duration
	nonce   uint64
}

func (o *txOpts) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.api, "api", "http://127.0.0.1:8545", "API URL of a node running the chain")
	f.StringVar(&o.keyFile, "key", "", "account key file that signs and pays (Ed25519 PKCS #8 PEM, as tenzrod keys account new writes it) (required)")
	f.DurationVar(&o.wait, "wait", 30*time.Second, "how long to wait for the commit; 0 returns once the node accepted the transaction")
	f.Uint64Var(&o.nonce, "nonce", 0, "transaction nonce (default: the account's next nonce as the node reports it)")
}

// txSession is one signing account talking to one node.
type txSession struct {
	opts    *txOpts
	client  *shell.Client
	key     ed25519.PrivateKey
	account terms.AccountID
	chainID string
	out     io.Writer
	cmd     *cobra.Command
	sent    uint64          // the nonce of the last transaction sent
	last    chainapi.TxView // the last committed transaction's result
}

// open checks the shared flags, reads the key and asks the node for its
// chain ID.
func (o *txOpts) open(cmd *cobra.Command) (*txSession, error) {
	if o.keyFile == "" {
		return nil, errors.New("--key is required: the account key file that signs the transaction")
	}
	if o.wait < 0 {
		return nil, fmt.Errorf("--wait %s: must not be negative", o.wait)
	}
	key, err := consensus.ReadAccountKey(o.keyFile)
	if err != nil {
		return nil, fmt.Errorf("--key: %w", err)
	}
	c, err := shell.NewClient(o.api)
	if err != nil {
		return nil, fmt.Errorf("--api: %w", err)
	}
	var info node.NodeInfo
	if err := callInto(cmd.Context(), c, "tenzro_nodeInfo", nil, &info); err != nil {
		return nil, err
	}
	if info.ChainID == "" {
		return nil, fmt.Errorf("the node at %s runs no chain (its chain_id is empty); point --api at a node with [chain] enabled", c.Endpoint())
	}
	return &txSession{opts: o, client: c, key: key, account: terms.AccountOf(key.Public().(ed25519.PublicKey)),
		chainID: info.ChainID, out: cmd.OutOrStdout(), cmd: cmd}, nil
}

// submit opens a session and submits one transaction: all a command does
// once its flags parse, unless it needs the session first.
func (o *txOpts) submit(cmd *cobra.Command, what string, payload any) error {
	s, err := o.open(cmd)
	if err != nil {
		return err
	}
	return s.submit(what, payload)
}

// callInto calls method and decodes its result into v.
func callInto(ctx context.Context, c *shell.Client, method string, params, v any) error {
	raw, err := c.Call(ctx, method, params)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("%s: unexpected answer %s: %w", method, raw, err)
	}
	return nil
}

// accountView reads an account's balance and nonce at the node.
func (s *txSession) accountView(id terms.AccountID) (chainapi.AccountView, error) {
	var v chainapi.AccountView
	err := callInto(s.cmd.Context(), s.client, "tenzro_getAccount", chainapi.AccountParams{Account: id.String()}, &v)
	return v, err
}

// maxNonceRetries bounds how often submit re-signs after finding its
// nonce taken by a pending transaction of the same account (a provider's
// background settlements share HOME/account.key).
const maxNonceRetries = 5

// submit signs payload as the session account's next transaction, sends
// it, waits for its commit and prints the outcome. A rejection, in CheckTx
// or in the block, is an error carrying the code, its name and the reason.
func (s *txSession) submit(what string, payload any) error {
	fmt.Fprintf(s.out, "%-10s %s\n%-10s %s on chain %s\n", "tx", what, "from", s.account, s.chainID)
	explicit := s.cmd.Flags().Changed("nonce")
	for attempt := 0; ; attempt++ {
		nonce := s.opts.nonce
		if !explicit {
			acct, err := s.accountView(s.account)
			if err != nil {
				return err
			}
			nonce = acct.Nonce
		}
		hash, rej, err := s.send(nonce, payload)
		if err != nil {
			return err
		}
		if rej != nil && rej.code == uint32(ledger.CodeStaleNonce) && !explicit && attempt < maxNonceRetries {
			fmt.Fprintf(s.out, "%-10s nonce %d is taken by a pending transaction of this account; signing again once it commits\n", "retry", nonce)
			if err := s.waitNonceAbove(nonce); err != nil {
				return err
			}
			continue
		}
		if rej != nil {
			fmt.Fprintf(s.out, "%-10s rejected by the node (CheckTx)\n%-10s %d (%s)\n%-10s %s\n", "status", "code", rej.code, rej.result, "reason", rej.reason)
			return fmt.Errorf("tx: %s rejected: code %d (%s): %s", what, rej.code, rej.result, rej.reason)
		}
		if s.opts.wait == 0 {
			fmt.Fprintf(s.out, "%-10s accepted into the mempool (not waiting for the commit; check with tenzro_getTx)\n", "status")
			return nil
		}
		res, err := s.waitCommit(hash)
		if err != nil {
			return err
		}
		s.last = res
		if err := printCommitted(s.out, what, res); err != nil {
			return err
		}
		// The balance after the commit saves a second command; failing to
		// read it does not undo the transaction, so it is only reported.
		if v, err := s.accountView(s.account); err == nil {
			fmt.Fprintf(s.out, "%-10s %d micro-units (at height %d)\n", "balance", v.Balance, v.Height)
		}
		return nil
	}
}

// send signs payload with nonce and submits it; a CheckTx rejection is
// returned as rej, any other failure as err.
func (s *txSession) send(nonce uint64, payload any) (hash string, rej *rejection, err error) {
	raw, err := ledger.NewSigner(s.key, s.chainID).SignTx(nonce, payload)
	if err != nil {
		return "", nil, fmt.Errorf("tx: sign: %w", err)
	}
	sum := ledger.TxHash(raw)
	hash, s.sent = hex.EncodeToString(sum[:]), nonce
	fmt.Fprintf(s.out, "%-10s %d\n%-10s %s\n", "nonce", nonce, "hash", hash)
	var sent chainapi.TxView
	err = callInto(s.cmd.Context(), s.client, "tenzro_sendTx", chainapi.SendTxParams{Tx: base64.StdEncoding.EncodeToString(raw)}, &sent)
	if r, ok := checkTxRejection(err); ok {
		return hash, &r, nil
	}
	if err != nil {
		return "", nil, fmt.Errorf("tx: send: %w", err)
	}
	if sent.Hash != hash {
		return "", nil, fmt.Errorf("tx: the node reports hash %s for the transaction hashing to %s", sent.Hash, hash)
	}
	return hash, nil, nil
}

// printCommitted prints a committed transaction's result; a failure in the
// block is an error with its code, the code's name and the log.
func printCommitted(out io.Writer, what string, res chainapi.TxView) error {
	code := ledger.Code(res.Code)
	fmt.Fprintf(out, "%-10s %d\n%-10s %d (%s)\n", "height", res.Height, "code", res.Code, code)
	if res.Log != "" {
		fmt.Fprintf(out, "%-10s %s\n", "log", res.Log)
	}
	if code != ledger.CodeOK {
		return fmt.Errorf("tx: %s failed in block %d: code %d (%s): %s (its nonce is spent)",
			what, res.Height, res.Code, code, trimCode(res.Log, code.String()))
	}
	return nil
}

// trimCode drops the "ledger: <code name>: " prefix of a rejection
// message, which the code and name printed beside it already say.
func trimCode(msg, name string) string { return strings.TrimPrefix(msg, "ledger: "+name+": ") }

// rejection is a CheckTx rejection as tenzro_sendTx reports it.
type rejection struct {
	code   uint32
	result string
	reason string
}

// checkTxRejection recognizes -32602 with data {code, result}.
func checkTxRejection(err error) (rejection, bool) {
	var re *shell.RPCError
	if !errors.As(err, &re) || re.Code != rpcInvalidParams || len(re.Data) == 0 {
		return rejection{}, false
	}
	var d struct {
		Code   *uint32 `json:"code"`
		Result string  `json:"result"`
	}
	if json.Unmarshal(re.Data, &d) != nil || d.Code == nil {
		return rejection{}, false
	}
	if d.Result == "" {
		d.Result = ledger.Code(*d.Code).String()
	}
	return rejection{code: *d.Code, result: d.Result, reason: trimCode(re.Message, d.Result)}, true
}
