package node

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"time"

	"github.com/tenzrod/tenzrod/consensus"
)

// AccountKeyFile is the operator's chain account key inside the node home
// (the devnet funds it at genesis).
const AccountKeyFile = "account.key"

// chainAccount signs and submits this node's own transactions, one at a
// time, from the operator account HOME/account.key.
type chainAccount struct {
	chain  *consensus.Node
	signer *consensus.Signer
}

func newChainAccount(n *Node) (*chainAccount, error) {
	priv, err := consensus.LoadOrCreateAccountKey(n.cfg.Path(AccountKeyFile))
	if err != nil {
		return nil, err
	}
	id := n.chain.App().ChainID()
	if id == "" {
		return nil, fmt.Errorf("chain: no chain ID yet")
	}
	return &chainAccount{chain: n.chain, signer: consensus.NewSigner(ed25519.PrivateKey(priv), id)}, nil
}

// ready reports whether the chain has a committed block and is not
// catching up, so transactions are accepted.
func chainReady(ctx context.Context, c *consensus.Node) bool {
	if c.App().Height() < 1 || c.App().ChainID() == "" {
		return false
	}
	catching, err := c.CatchingUp(ctx)
	return err == nil && !catching
}

// submit signs payload with the account's next nonce, broadcasts it and
// waits until it commits; a rejected transaction is an error with its code.
func (a *chainAccount) submit(ctx context.Context, payload any) (consensus.TxResult, error) {
	acct, _, err := a.chain.Account(ctx, a.signer.Account())
	if err != nil {
		return consensus.TxResult{}, err
	}
	raw, err := a.signer.SignTx(acct.Nonce, payload)
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
