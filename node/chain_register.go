package node

import (
	"context"
	"crypto/x509"
	"fmt"
	"sync"
	"time"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/receipts/identity"
)

// registerUnbondingSecs is the unbonding delay a provider registers with.
const registerUnbondingSecs = 86400

// registerRetry is the pause between registration attempts.
const registerRetry = 2 * time.Second

// registrar registers a provider on chain at start: its machine's keys and
// peer ID, bonded with the chain's minimum serving bond from the operator
// account HOME/account.key. It retries in the background until the
// registration is committed (or found already there).
type registrar struct {
	n      *Node
	cancel context.CancelFunc
	wg     sync.WaitGroup
	done   chan struct{} // closed once registered
}

func newRegistrar(n *Node) *registrar { return &registrar{n: n, done: make(chan struct{})} }

func (r *registrar) Start(ctx context.Context) error {
	ctx, r.cancel = context.WithCancel(context.WithoutCancel(ctx))
	r.wg.Add(1)
	go r.run(ctx)
	return nil
}

func (r *registrar) Stop(context.Context) error {
	r.cancel()
	r.wg.Wait()
	return nil
}

func (r *registrar) run(ctx context.Context) {
	defer r.wg.Done()
	lastErr := ""
	for {
		done, err := r.attempt(ctx)
		if done {
			close(r.done)
			return
		}
		if err != nil && err.Error() != lastErr {
			r.n.log.Warn("chain: provider registration pending; retrying", "err", err)
			lastErr = err.Error()
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(registerRetry):
		}
	}
}

// attempt registers once; done is true when the machine is registered for
// this peer, or when retrying cannot help (the peer or machine is
// registered to something else).
func (r *registrar) attempt(ctx context.Context) (done bool, err error) {
	n := r.n
	if !chainReady(ctx, n.chain) {
		return false, fmt.Errorf("chain not synced yet")
	}
	me, peerID := n.id.MachineID(), n.host.ID()
	if m, ok, err := n.chain.ProviderByPeer(ctx, peerID.String()); err != nil {
		return false, err
	} else if ok && m == me {
		n.log.Info("chain: provider already registered", "machine", me, "peer", peerID)
		n.registry.pins.Forget(peerID)
		return true, nil
	} else if ok {
		n.log.Error("chain: this peer ID is registered to another machine; not registering", "peer", peerID, "registered", m, "machine", me)
		return true, nil
	}
	if p, ok, err := n.chain.Provider(ctx, me); err != nil {
		return false, err
	} else if ok {
		n.log.Error("chain: this machine is registered with another peer ID; not registering", "machine", me, "registered_peer", p.PeerID, "peer", peerID)
		return true, nil
	}
	acct, err := newChainAccount(n)
	if err != nil {
		return false, err
	}
	params, err := n.chain.Params(ctx)
	if err != nil {
		return false, err
	}
	der, err := x509.MarshalPKIXPublicKey(n.id.HWPublicKey())
	if err != nil {
		return false, fmt.Errorf("hardware key: %w", err)
	}
	reg := &consensus.ProviderRegister{MachineID: me, HWPubDER: der, PQPub: n.id.PQPublicKey().Bytes(),
		PeerID: peerID.String(), Bond: params.MinServingBond, UnbondingSecs: registerUnbondingSecs}
	if err := signRegistration(n, reg, acct.signer); err != nil {
		return false, err
	}
	res, err := acct.submit(ctx, reg)
	if err != nil {
		return false, fmt.Errorf("register machine %s from account %s (bond %d): %w", me, acct.signer.Account(), reg.Bond, err)
	}
	n.registry.pins.Forget(peerID)
	n.log.Info("chain: provider registered", "machine", me, "peer", peerID, "operator", acct.signer.Account(),
		"bond", reg.Bond, "height", res.Height)
	return true, nil
}

// signRegistration has the machine's hardware and ML-DSA-65 keys and the
// host's peer key sign reg for the operator account on its chain.
func signRegistration(n *Node, reg *consensus.ProviderRegister, op *consensus.Signer) error {
	payload, err := reg.SigningPayload(op.ChainID(), op.Account())
	if err != nil {
		return fmt.Errorf("registration payload: %w", err)
	}
	if reg.HWSig, reg.PQSig, err = n.id.SignRegistration(payload); err != nil {
		return err
	}
	reg.PeerSig, err = identity.SignRegistrationPeer(n.host.Host().Peerstore().PrivKey(n.host.ID()), payload)
	return err
}
