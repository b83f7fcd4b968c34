package node

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/node/nodetest"
	"github.com/tenzrod/tenzrod/node/provider"
	"github.com/tenzrod/tenzrod/node/validator"
)

// TestServingProviderDisputesWrongExpert: a holder that signs wrong rows
// for the devnet MoE model's experts (computed, then shifted: other
// weights under the model's ID) passes every call-time check. The serving
// provider samples its batches, re-executes them at the honest holder
// and, once the record paying the liar for the call has settled, opens the
// dispute itself from its operator's account. The validator holding the
// MoE weights sits on the committee and convicts: the liar's bond is
// slashed by the governed share, its payment for the call goes back to
// the serving provider's escrow, and the serving operator is paid the
// reward.
func TestServingProviderDisputesWrongExpert(t *testing.T) {
	m := newDevnetMoE(t)
	mid, o := m.mid, m.opts
	var experts []uint32
	for e := range o.Experts {
		experts = append(experts, uint32(e))
	}
	params := testChainParams(3600)
	// A committee member polls its duties once a second: the default 40
	// blocks of 100 ms leave a loaded machine (CI) 2 s a phase, and a
	// missed phase lapses the dispute.
	params.DisputeMinBond, params.DisputeVerdictBlocks = 100, 400
	n := 0
	roles := func(c *Config) {
		if n == 0 { // the serving provider
			m.serve(c)
			c.Provider.RemoteExperts.DisputeInterval = 200 * time.Millisecond
		} else { // 1: the liar, 2: the honest holder; each holds every expert
			m.hold(c, experts, uint64(n))
		}
		n++
	}
	shift := func(_ [32]byte, _, _ int, rows [][]float32) {
		for _, r := range rows {
			for k := range r {
				r[k] += 0.5
			}
		}
	}
	net := newChainNetWith(t, 1, 3, 0, params, chainExtra{provOpts: []func(*Config){roles}, selfEscrow: true,
		provNode: func(i int) Options {
			o := Options{Logger: testLogger()}
			if i == 1 {
				o.ExpertFault = shift
			}
			return o
		}},
		func(c *Config) {
			c.Router.ProbeInterval = 0
			c.Validator.Models = append(c.Validator.Models, validator.ModelConfig{Name: provider.DevnetMoEModelName, Dir: m.dir})
		})
	c := net.validators[0].Chain()
	serving, liar := net.registered[0], net.registered[1]
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	m.waitReady(t, net, serving, 2)
	nodetest.Eventually(t, 30*time.Second, "the validator holding the MoE weights", func() bool {
		h, err := c.ModelHolders(ctx, mid)
		return err == nil && len(h.Validators) == 1
	})
	liarBond := providerRecord(t, c, liar).Bond
	payer := accountKey(t, serving.Config())
	before := accountBalance(t, c, payer)

	// Calls until a batch of the liar's has been sampled and found wrong,
	// and one of the honest holder's re-checked and found right (one
	// batch in 64 is sampled).
	for i := 0; ; i++ {
		rs := serving.Provider().ExpertRecheckStats()[mid]
		if rs.Mismatched > 0 && rs.Matched > 0 {
			break
		}
		if i == 80 {
			t.Fatalf("in %d calls, no wrong batch of the liar's and a right one of the honest holder's: %+v", i, rs)
		}
		moeAnswer(t, ctx, serving, false, openai.ChatCompletionNewParams{
			Model:     provider.DevnetMoEModelName,
			Messages:  []openai.ChatCompletionMessageParamUnion{openai.UserMessage(fmt.Sprintf("Question %d about markets", i))},
			MaxTokens: openai.Int(8),
		})
		time.Sleep(50 * time.Millisecond) // the rechecker runs beside the calls
	}
	ds := convicted(t, ctx, c, liar, payer)
	// The serving node re-executes with its own weights: the honest
	// holder's batches are never evidence (re-executed at the liar they
	// would be, and disputing them would cost the bond).
	evs, err := serving.Provider().ExpertEvidence(mid)
	if err != nil || len(evs) == 0 {
		t.Fatalf("%d evidence (%v)", len(evs), err)
	}
	for _, ev := range evs {
		if ev.Ref().Holder != liar.id.MachineID() || len(ev.RecomputeReceipt) != 0 {
			t.Fatalf("evidence against machine %s recomputed by %x: want only the liar's, recomputed here", ev.Ref().Holder, ev.RecomputedBy)
		}
	}
	st := serving.Provider().ExpertDisputeStats()[mid]
	if st.Opened == 0 || st.Refused != 0 {
		t.Fatalf("disputer stats %+v", st)
	}
	// Each wrong batch sampled is its own dispute, all guilty. The first
	// conviction slashes the governed share of the bond, each later one
	// that share of what is left (so the first slash is the largest), and
	// the liar's payment for a call is reversed once.
	var first ledger.Dispute
	var slashed, reversed uint64
	for _, x := range ds {
		if x.Status != ledger.DisputeGuilty || x.Reward == 0 || x.Subject.Kind != ledger.SubjectExpertBatch {
			t.Fatalf("dispute %+v: want guilty, with a reward, over an expert batch", x)
		}
		if x.Slashed > first.Slashed {
			first = x
		}
		slashed, reversed = slashed+x.Slashed, reversed+x.Reversed
	}
	// A slash is the governed share of the bond left, at most
	// dispute_slash_price_x times what the batch's record paid.
	if want := ledger.DisputeSlash(params, liarBond, first.Credited); first.Slashed == 0 || first.Slashed > want || reversed == 0 {
		t.Fatalf("%d disputes: largest slash %d, want 1..%d; %d reversed", len(ds), first.Slashed, want, reversed)
	}
	if r := providerRecord(t, c, liar); r.Bond > liarBond-slashed || r.SlashedUntil == 0 {
		t.Fatalf("liar after %d convictions: bond %d, want at most %d; slashed until %d", len(ds), r.Bond, liarBond-slashed, r.SlashedUntil)
	}
	t.Logf("serving provider: %+v; %d disputes; the first opened at %d, verdict at %d (%d blocks); slashed %d in all, reversed %d; operator balance %d -> %d",
		st, len(ds), first.OpenHeight, first.ResolveHeight, first.ResolveHeight-first.OpenHeight, slashed, reversed, before, accountBalance(t, c, payer))
}

// convicted waits until the disputes by disputer against p include a
// guilty one and are all resolved, and returns them; it fails naming
// each one's status if that does not happen in time.
func convicted(t *testing.T, ctx context.Context, c *consensus.Node, p *Node, disputer consensus.AccountID) []ledger.Dispute {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	var seen []string
	for time.Now().Before(deadline) {
		all, err := c.Disputes(ctx)
		var ours []ledger.Dispute
		guilty, open := false, false
		seen = seen[:0]
		for _, x := range all {
			if x.Provider != p.id.MachineID() || x.Disputer != disputer {
				continue
			}
			ours = append(ours, x)
			guilty = guilty || x.Status == ledger.DisputeGuilty
			open = open || !x.Status.Resolved()
			seen = append(seen, fmt.Sprintf("%s opened at %d: %s", x.ID, x.OpenHeight, x.Status))
		}
		if err == nil && guilty && !open {
			return ours
		}
		if err != nil {
			seen = append(seen, err.Error())
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("the serving provider's disputes were not all resolved with a conviction in 2 min (chain at %d): %v", c.App().Height(), seen)
	return nil
}

// providerRecord is p's registration on chain.
func providerRecord(t *testing.T, c *consensus.Node, p *Node) consensus.Provider {
	t.Helper()
	r, ok, err := c.Provider(context.Background(), p.id.MachineID())
	if err != nil || !ok {
		t.Fatalf("provider %s: %v %v", p.Host().ID(), ok, err)
	}
	return r
}
