package provider

import (
	"context"
	"crypto/x509"
	"fmt"
	"sync"
	"time"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/ledger"
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
	p      *Provider
	cancel context.CancelFunc
	wg     sync.WaitGroup
	done   chan struct{} // closed once registered
}

func newRegistrar(p *Provider) *registrar { return &registrar{p: p, done: make(chan struct{})} }

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
			r.bindNames(ctx, r.p.loop.loaded)
			return
		}
		if err != nil && err.Error() != lastErr {
			r.p.d.Log.Warn("chain: provider registration pending; retrying", "err", err)
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
	d := r.p.d
	if !consensus.Ready(ctx, d.Chain) {
		return false, fmt.Errorf("chain not synced yet")
	}
	me, peerID := d.Identity.MachineID(), d.Host.ID()
	if m, ok, err := d.Chain.ProviderByPeer(ctx, peerID.String()); err != nil {
		return false, err
	} else if ok && m == me {
		d.Log.Info("chain: provider already registered", "machine", me, "peer", peerID)
		d.ForgetPin(peerID)
		return true, nil
	} else if ok {
		d.Log.Error("chain: this peer ID is registered to another machine; not registering", "peer", peerID, "registered", m, "machine", me)
		return true, nil
	}
	if p, ok, err := d.Chain.Provider(ctx, me); err != nil {
		return false, err
	} else if ok {
		d.Log.Error("chain: this machine is registered with another peer ID; not registering", "machine", me, "registered_peer", p.PeerID, "peer", peerID)
		return true, nil
	}
	params, err := d.Chain.Params(ctx)
	if err != nil {
		return false, err
	}
	der, err := x509.MarshalPKIXPublicKey(d.Identity.HWPublicKey())
	if err != nil {
		return false, fmt.Errorf("hardware key: %w", err)
	}
	reg := &ledger.ProviderRegister{MachineID: me, HWPubDER: der, PQPub: d.Identity.PQPublicKey().Bytes(),
		PeerID: peerID.String(), Bond: params.MinServingBond, UnbondingSecs: registerUnbondingSecs}
	if err := r.sign(reg, d.Chain.App().ChainID()); err != nil {
		return false, err
	}
	res, err := d.Account.Submit(ctx, reg)
	if err != nil {
		return false, fmt.Errorf("register machine %s from account %s (bond %d): %w", me, d.Account.Account(), reg.Bond, err)
	}
	d.ForgetPin(peerID)
	d.Log.Info("chain: provider registered", "machine", me, "peer", peerID, "operator", d.Account.Account(),
		"bond", reg.Bond, "height", res.Height)
	return true, nil
}

// sign has the machine's hardware and ML-DSA-65 keys and the host's peer
// key sign reg for the operator account on chainID: proof that whoever
// registers the machine and the peer holds their keys.
func (r *registrar) sign(reg *ledger.ProviderRegister, chainID string) error {
	d := r.p.d
	payload, err := reg.SigningPayload(chainID, d.Account.Account())
	if err != nil {
		return fmt.Errorf("registration payload: %w", err)
	}
	if reg.HWSig, reg.PQSig, err = d.Identity.SignRegistration(payload); err != nil {
		return err
	}
	reg.PeerSig, err = identity.SignRegistrationPeer(d.Host.Host().Peerstore().PrivKey(d.Host.ID()), payload)
	return err
}
