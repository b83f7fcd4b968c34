package chainview

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/filecoin-project/go-clock"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/settle"
	"github.com/tenzrod/tenzrod/p2p/infer"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// Payments is a gateway's gateway.Payments on a chain: the gateway's
// account is the settler of its buyers' escrows; the outbox signs, keeps,
// delivers and (after a grace period) settles the records.
type Payments struct {
	clock   clock.Clock // the node's: escrow reads age by it
	chain   *consensus.Node
	outbox  *settle.Outbox
	key     ed25519.PrivateKey
	account terms.AccountID
	caller  []byte // this node's peer ID, which every authorization names

	mu    sync.Mutex
	auths map[terms.AccountID]*infer.PayAuth

	cacheMu  sync.Mutex
	escrows  map[terms.AccountID]escrowSeen // chain reads, at most escrowFresh old
	deposits map[terms.AccountID]uint64     // deposits on their way to the chain (ExpectDeposit)
}

type escrowSeen struct {
	avail  uint64
	at     time.Time
	height int64 // the chain height before the read
}

// escrowFresh bounds how old an escrow read admission uses. A read is
// reused only within the block it was made in too: the outbox drops a
// record from its unsettled sum only after the block that settled it, so
// a balance read before that block is never paired with the smaller sum.
const escrowFresh = time.Second

// NewPayments signs as key's account, for the gateway whose peer is
// self; escrow reads age by clk.
func NewPayments(chain *consensus.Node, outbox *settle.Outbox, key ed25519.PrivateKey, self peer.ID, clk clock.Clock) *Payments {
	return &Payments{clock: clk, chain: chain, outbox: outbox, key: key, account: terms.AccountOf(key.Public().(ed25519.PublicKey)),
		caller: []byte(self), auths: map[terms.AccountID]*infer.PayAuth{}, escrows: map[terms.AccountID]escrowSeen{},
		deposits: map[terms.AccountID]uint64{}}
}

// Warming says why payer's escrow as read here may be behind (the
// gateway's gateway.Warming): a deposit into it is on its way, or this
// node's chain is still catching up, so what it reads is an old block's.
func (p *Payments) Warming(ctx context.Context, payer terms.AccountID) (string, bool) {
	p.cacheMu.Lock()
	d, ok := p.deposits[payer]
	p.cacheMu.Unlock()
	if ok {
		return fmt.Sprintf("a deposit of %d micro-units into its escrow is on its way to the chain", d), true
	}
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if !consensus.Ready(ctx, p.chain) {
		return fmt.Sprintf("this gateway's chain node is still catching up (%s), so the escrow it reads may be behind", p.chain.SyncProgress(ctx)), true
	}
	return "", false
}

// ExpectDeposit tells the gateway that a deposit of amount into payer's
// escrow with it is on its way: until done is called, a call that escrow
// cannot cover yet is answered 503 warming_up naming the deposit, not 402.
func (p *Payments) ExpectDeposit(payer terms.AccountID, amount uint64) (done func()) {
	p.cacheMu.Lock()
	p.deposits[payer] += amount
	p.cacheMu.Unlock()
	return func() {
		p.cacheMu.Lock()
		defer p.cacheMu.Unlock()
		// The escrow read before the deposit's block must not be reused.
		if p.deposits[payer] <= amount {
			delete(p.deposits, payer)
		} else {
			p.deposits[payer] -= amount
		}
		delete(p.escrows, payer)
	}
}

// Available is the escrow's balance − pending withdrawals − this
// gateway's records not known settled. A record settled on chain but not
// yet marked in the outbox is subtracted twice for a moment: the error
// only ever refuses, never overspends.
func (p *Payments) Available(ctx context.Context, payer terms.AccountID) (uint64, error) {
	now, h := p.clock.Now(), p.chain.App().Height()
	p.cacheMu.Lock()
	seen, ok := p.escrows[payer]
	p.cacheMu.Unlock()
	if !ok || now.Sub(seen.at) >= escrowFresh || seen.height != h {
		e, exists, err := p.chain.Escrow(ctx, payer, p.account)
		if err != nil {
			return 0, err
		}
		seen = escrowSeen{at: now, height: h}
		if exists {
			seen.avail = e.Available()
		}
		p.cacheMu.Lock()
		if len(p.escrows) >= maxAuths {
			p.escrows = map[terms.AccountID]escrowSeen{}
		}
		p.escrows[payer] = seen
		p.cacheMu.Unlock()
	}
	owed := p.outbox.Unsettled(payer)
	return seen.avail - min(seen.avail, owed), nil
}

// maxAuths bounds the authorizations kept; they are re-signed on demand.
const maxAuths = 4096

// Authorize signs, once per payer, the authorization a provider checks
// before it serves a call this gateway settles.
func (p *Payments) Authorize(payer terms.AccountID) (*infer.PayAuth, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if a, ok := p.auths[payer]; ok {
		return a, nil
	}
	chainID := p.chain.App().ChainID()
	if chainID == "" {
		return nil, errors.New("chainview: pay authorization: no chain ID yet")
	}
	a := &infer.PayAuth{Payer: payer[:], Settler: p.account[:], Sig: ledger.SignPayAuth(p.key, chainID, p.caller, payer)}
	if len(p.auths) >= maxAuths {
		p.auths = map[terms.AccountID]*infer.PayAuth{}
	}
	p.auths[payer] = a
	return a, nil
}

// Sign has the outbox sign and keep rec for provider prov.
func (p *Payments) Sign(ctx context.Context, rec *receipt.PaymentRecord, prov peer.ID) error {
	return p.outbox.Sign(ctx, rec, prov)
}
