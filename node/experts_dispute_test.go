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
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// TestServingProviderDisputesWrongExpert: a holder that signs wrong rows
// for the devnet MoE model's experts (computed, then shifted: other
// weights under the model's ID) passes every call-time check. The serving
// provider samples its batches, re-executes them at the honest holder
// and, once the record paying the liar for the call has settled, opens the
// dispute itself from its operator's account. The validator holding the
// MoE weights sits on the committee and convicts: the liar's bond is
// slashed by the governed share once for the whole episode however many
// of its batches are convicted, its payment for each call goes back to
// the serving provider's escrow, and the serving operator is paid the
// reward. The liar is barred: the serving provider's next calls give it
// no batch, and no record pays it after the conviction height.
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
	// The disputer's Submit returns once the serving node's own chain
	// (a follower, which may lag the validator on a loaded machine) has
	// the dispute's block.
	var st provider.DisputeStats
	nodetest.Eventually(t, time.Minute, "the serving provider's disputer counting its opening", func() bool {
		st = serving.Provider().ExpertDisputeStats()[mid]
		return st.Opened > 0
	})
	if st.Refused != 0 {
		t.Fatalf("disputer stats %+v", st)
	}
	// Each wrong batch sampled is its own dispute, all guilty, and all
	// one lying episode: the first conviction slashes the governed share
	// of the bond and bars the liar; the others reverse their records
	// but slash nothing.
	episode := func(ds []ledger.Dispute) (first ledger.Dispute, slashed, reversed uint64) {
		t.Helper()
		slashes := 0
		for _, x := range ds {
			if x.Status != ledger.DisputeGuilty || x.Subject.Kind != ledger.SubjectExpertBatch || (x.Slashed > 0) != (x.Reward > 0) {
				t.Fatalf("dispute %+v: want guilty over an expert batch, a reward only with a slash", x)
			}
			if x.Slashed > 0 {
				first, slashes = x, slashes+1
			}
			slashed, reversed = slashed+x.Slashed, reversed+x.Reversed
		}
		// The slash is the governed share of the bond, at most
		// dispute_slash_price_x times what the batch's record paid.
		if want := ledger.DisputeSlash(params, liarBond, first.Credited); slashes != 1 || first.Slashed != want || reversed == 0 {
			t.Fatalf("%d disputes: %d slashed (want 1), the slash %d, want %d; %d reversed", len(ds), slashes, first.Slashed, want, reversed)
		}
		return first, slashed, reversed
	}
	first, _, _ := episode(ds)
	want := first.Slashed
	r := providerRecord(t, c, liar)
	if r.Bond != liarBond-want || r.SlashedUntil == 0 || !r.Barred || r.ConvictedAt != first.ResolveHeight {
		t.Fatalf("liar after %d convictions of one episode: %+v, want bond %d, barred since %d", len(ds), r, liarBond-want, first.ResolveHeight)
	}

	// Out of rotation: once the serving node's chain shows the bar, its
	// calls give the liar no batch, the honest holder all of them.
	nodetest.Eventually(t, 30*time.Second, "the serving provider's chain showing the bar", func() bool {
		p, ok, err := serving.Chain().Provider(ctx, liar.id.MachineID())
		return err == nil && ok && p.Barred
	})
	liarMachine := liar.id.MachineID().String()
	for i := range 3 {
		a := moeAnswer(t, ctx, serving, false, openai.ChatCompletionNewParams{
			Model:     provider.DevnetMoEModelName,
			Messages:  []openai.ChatCompletionMessageParamUnion{openai.UserMessage(fmt.Sprintf("After the verdict, question %d", i))},
			MaxTokens: openai.Int(8),
		})
		var honest uint64
		for _, e := range a.Experts {
			if e.Machine == liarMachine && e.Batches != 0 {
				t.Fatalf("call %d after the conviction gave the barred holder %d batches: %+v", i, e.Batches, a.Experts)
			}
			if e.Machine != liarMachine {
				honest += e.Batches
			}
		}
		if honest == 0 {
			t.Fatalf("call %d after the conviction: no batches at the honest holder: %+v", i, a.Experts)
		}
	}
	// Unpaid after the conviction height: no record paying the liar
	// settled since (its records still owed from before are refused,
	// CodeConvicted), and no second slash came with later verdicts.
	nodetest.Eventually(t, 30*time.Second, "a block after the conviction", func() bool { return c.App().Height() > first.ResolveHeight })
	now := c.App().Height()
	after, err := c.ProviderRecordRange(ctx, liar.id.MachineID(), first.ResolveHeight+1, now, 0)
	if err != nil || len(after.Records) != 0 {
		t.Fatalf("records paying the barred liar at heights %d..%d: %d (%v)", first.ResolveHeight+1, now, len(after.Records), err)
	}
	// Every dispute of the episode, those opened since the first verdict
	// included, resolved: still one slash.
	ds = convicted(t, ctx, c, liar, payer)
	first, slashed, reversed := episode(ds)
	if b := providerRecord(t, c, liar).Bond; b != liarBond-want {
		t.Fatalf("liar's bond %d at the end, want %d: slashed more than once", b, liarBond-want)
	}
	t.Logf("serving provider: %+v; %d disputes; the slashing one opened at %d, verdict at %d (%d blocks); slashed %d, reversed %d; operator balance %d -> %d",
		st, len(ds), first.OpenHeight, first.ResolveHeight, first.ResolveHeight-first.OpenHeight, slashed, reversed, before, accountBalance(t, c, payer))
}

// convicted waits until the disputes by disputer against p include a
// guilty one and are all resolved, and returns them; it fails naming
// each one's status if that does not happen in time.
func convicted(t *testing.T, ctx context.Context, c *consensus.Node, p *Node, disputer terms.AccountID) []ledger.Dispute {
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
func providerRecord(t *testing.T, c *consensus.Node, p *Node) ledger.Provider {
	t.Helper()
	r, ok, err := c.Provider(context.Background(), p.id.MachineID())
	if err != nil || !ok {
		t.Fatalf("provider %s: %v %v", p.Host().ID(), ok, err)
	}
	return r
}
