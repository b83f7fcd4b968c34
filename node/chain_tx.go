package node

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"sync"
	"time"

	"github.com/tenzrod/tenzrod/consensus"
)

// AccountKeyFile is the operator's chain account key inside the node home
// (the devnet funds it at genesis).
const AccountKeyFile = "account.key"

// chainAccount signs and submits this node's own transactions, one at a
// time, from the operator account HOME/account.key. The chain ID is read
// at each submission: it is known only once the chain has started.
type chainAccount struct {
	chain *consensus.Node
	key   ed25519.PrivateKey
	mu    sync.Mutex // one transaction in flight: nonces in order
}

func newChainAccount(chain *consensus.Node, keyFile string) (*chainAccount, error) {
	priv, err := consensus.LoadOrCreateAccountKey(keyFile)
	if err != nil {
		return nil, err
	}
	return &chainAccount{chain: chain, key: ed25519.PrivateKey(priv)}, nil
}

// Account is the operator account's ID.
func (a *chainAccount) Account() consensus.AccountID {
	return consensus.AccountOf(a.key.Public().(ed25519.PublicKey))
}

// Submit signs payload with the account's next nonce, broadcasts it and
// waits until it commits; a rejected transaction is an error with its code.
func (a *chainAccount) Submit(ctx context.Context, payload any) (consensus.TxResult, error) {
	id := a.chain.App().ChainID()
	if id == "" {
		return consensus.TxResult{}, fmt.Errorf("chain: no chain ID yet")
	}
	signer := consensus.NewSigner(a.key, id)
	a.mu.Lock()
	defer a.mu.Unlock()
	acct, _, err := a.chain.Account(ctx, signer.Account())
	if err != nil {
		return consensus.TxResult{}, err
	}
	raw, err := signer.SignTx(acct.Nonce, payload)
	if err != nil {
		return consensus.TxResult{}, err
	}
	hash, err := a.chain.BroadcastTx(ctx, raw)
	if err != nil {
		return consensus.TxResult{}, err
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	res, err := a.chain.WaitTx(wctx, hash)
	if err != nil {
		return res, err
	}
	if res.Code != 0 {
		return res, &consensus.TxError{Code: res.Code, Msg: res.Log}
	}
	return res, nil
}
