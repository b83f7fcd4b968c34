package validator

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
	"github.com/tenzrod/tenzrod/consensus/testnet"
	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/inference/gguf"
	"github.com/tenzrod/tenzrod/inference/llm"
	"github.com/tenzrod/tenzrod/inference/modelgen"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// quietLog keeps test output readable; TENZRO_TEST_LOG=1 shows the duty's log.
var quietLog = func() *slog.Logger {
	if os.Getenv("TENZRO_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}()

// openGenerated generates a model shaped by o in dir and opens it.
func openGenerated(t testing.TB, dir string, o modelgen.GenOptions) *llm.Engine {
	t.Helper()
	if err := modelgen.GenerateModel(dir, o); err != nil {
		t.Fatal(err)
	}
	e, err := llm.Open(dir, llm.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// disputeNet is a 4-validator chain whose validators each run the
// committee duty holding the real weights, a registered provider machine
// and a funded buyer and disputer.
type disputeNet struct {
	t       *testing.T
	ctx     context.Context
	net     *testnet.Net
	params  ledger.Params
	model   terms.Hash32
	machine *ledgertest.Machine
	buyer   ed25519.PrivateKey
	op      ed25519.PrivateKey
	dis     ed25519.PrivateKey
	subs    map[string]*consensus.Submitter
	duties  []*Duty
	n       int // answers settled so far
}

func seeded(s string) ed25519.PrivateKey {
	h := sha256.Sum256([]byte(s))
	return ed25519.NewKeyFromSeed(h[:])
}

func acct(k ed25519.PrivateKey) terms.AccountID { return ledger.NewSigner(k, "").Account() }

// heldModels generates model o for each of the dispute chain's four
// validators, in dir/real0..3: the weights each declares and re-executes.
func heldModels(t *testing.T, dir string, o modelgen.GenOptions) []string {
	t.Helper()
	var dirs []string
	for i := range 4 {
		dirs = append(dirs, filepath.Join(dir, fmt.Sprintf("real%d", i)))
		if err := modelgen.GenerateModel(dirs[i], o); err != nil {
			t.Fatal(err)
		}
	}
	return dirs
}

// disputeNetBlockTime is the dispute chain's block interval.
const disputeNetBlockTime = 100 * time.Millisecond

// startDisputeNet starts the chain; validator i loads the model in
// dirs[i] from its [[validator.models]] config.
func startDisputeNet(t *testing.T, dirs []string, verdictBlocks uint64) *disputeNet {
	// Bounded by the chain's progress once it runs (a loaded machine makes
	// every step slower, not the chain stop); go test's -timeout bounds the rest.
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	dn := &disputeNet{t: t, ctx: ctx, buyer: seeded("duty-buyer"), op: seeded("duty-op"),
		dis: seeded("duty-disputer"), subs: map[string]*consensus.Submitter{}}
	dn.params = ledger.DefaultParams()
	dn.params.MinServingBond, dn.params.DisputeMinBond = 1000, 100
	dn.params.DisputeCommittee, dn.params.DisputeVerdictBlocks, dn.params.DisputeWindowBlocks = 3, verdictBlocks, 400
	dir := t.TempDir()
	net, err := testnet.Start(ctx, filepath.Join(dir, "net"), testnet.Options{Validators: 4, Params: &dn.params, BlockTime: disputeNetBlockTime,
		Accounts: []ledger.GenesisAccount{{Account: acct(dn.buyer), Balance: 10_000_000},
			{Account: acct(dn.op), Balance: 1_000_000}, {Account: acct(dn.dis), Balance: 1_000_000}}})
	if err != nil {
		t.Fatal(err)
	}
	dn.net = net
	t.Cleanup(func() {
		for _, d := range dn.duties {
			if err := d.Stop(context.Background()); err != nil {
				t.Error(err)
			}
		}
		if err := net.Stop(context.Background()); err != nil {
			t.Error(err)
		}
	})
	// Registered after the network's stop, so it ends (and stops reading
	// the nodes) before the network stops.
	ctx, stop := net.Progress(ctx, time.Minute)
	t.Cleanup(stop)
	dn.ctx = ctx
	dn.machine = testMachine(t, filepath.Join(dir, "machine"))
	reg, err := dn.machine.Register(net.ChainID, acct(dn.op), 100_000, 0)
	if err != nil {
		t.Fatal(err)
	}
	dn.submit(dn.op, reg)
	dn.submit(dn.buyer, &ledger.EscrowFund{Amount: 5_000_000})
	for i, k := range net.Operators {
		s := dn.sub(k)
		models, err := LoadModels([]ModelConfig{{Name: "devnet", Dir: dirs[i]}}, func(p string) string { return p })
		if err != nil {
			t.Fatal(err)
		}
		for id := range models {
			dn.model = id
		}
		d, err := NewDuty(DutyConfig{Chain: net.Nodes[i], Account: s, Models: models,
			VotesPath: filepath.Join(dir, fmt.Sprintf("v%d", i), "dispute-votes.json"), Poll: 100 * time.Millisecond, Log: quietLog})
		if err != nil {
			t.Fatal(err)
		}
		dn.duties = append(dn.duties, d)
	}
	for _, d := range dn.duties {
		if err := d.Start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// Each duty declares its model on start; committees draw from holders.
	for {
		h, err := net.Nodes[0].ModelHolders(ctx, dn.model)
		if err == nil && len(h.Validators) == len(net.Operators) {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("holders of the model: %+v %v", h, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
	return dn
}

func (dn *disputeNet) sub(k ed25519.PrivateKey) *consensus.Submitter {
	s, ok := dn.subs[string(k)]
	if !ok {
		var err error
		if s, err = consensus.NewSubmitter(dn.net.Nodes[0], k, nil); err != nil {
			dn.t.Fatal(err)
		}
		dn.subs[string(k)] = s
	}
	return s
}

func (dn *disputeNet) submit(k ed25519.PrivateKey, payload any) consensus.TxResult {
	dn.t.Helper()
	r, err := dn.sub(k).Submit(dn.ctx, payload)
	if err != nil {
		dn.t.Fatalf("%T: %v", payload, err)
	}
	return r
}

// settleAndDispute signs each answer's receipt as the provider, settles
// their payments in one settlement and disputes them all with the
// evidence a committee re-executes; it returns the disputes' IDs and the
// heights they were opened at.
func (dn *disputeNet) settleAndDispute(as ...answer) ([]terms.Hash32, []int64) {
	t := dn.t
	t.Helper()
	var recs []receipt.PaymentRecord
	var opens []any
	var ids []terms.Hash32
	for _, a := range as {
		subj, rec, ev := dn.settleable(a)
		recs = append(recs, rec)
		opens = append(opens, &ledger.DisputeOpen{Subject: subj, Bond: 1000, Evidence: ev})
		ids = append(ids, ledger.DisputeID(subj))
	}
	dn.submit(dn.op, &ledger.Settlement{Records: recs})
	res, errs := dn.sub(dn.dis).SubmitMany(dn.ctx, opens)
	heights := make([]int64, len(res))
	for i, err := range errs {
		if err != nil {
			t.Fatalf("dispute %d: %v", i, err)
		}
		heights[i] = res[i].Height
	}
	return ids, heights
}

// settleable signs a's receipt as the provider and returns its dispute
// subject, the buyer's payment record for it and the evidence.
func (dn *disputeNet) settleable(a answer) (ledger.DisputeSubject, receipt.PaymentRecord, ledger.DisputeEvidence) {
	t := dn.t
	t.Helper()
	dn.n++
	nonce := sha256.Sum256([]byte(fmt.Sprintf("duty answer %d", dn.n)))
	buyer := acct(dn.buyer)
	ev := signPaidAnswer(t, dn.machine, inference.ModelID(dn.model), nonce[:16], a, buyer[:])
	input := a.in.Commitment(dn.model[:])
	digest := terms.Hash32(receipt.RequestDigest(nonce[:16], input, dn.model[:]))
	rec := receipt.PaymentRecord{Payer: acct(dn.buyer), Provider: dn.machine.MachineID(), RequestDigest: digest, Price: 5000,
		Receipt: ev.Receipt, ReceiptHash: sha256.Sum256(ev.Receipt), ExpiryHeight: dn.net.Nodes[0].App().Height() + 200}
	if err := ledger.NewSigner(dn.buyer, dn.net.ChainID).SignRecord(&rec); err != nil {
		t.Fatal(err)
	}
	return ledger.DisputeSubject{Kind: ledger.SubjectRecord, Payer: acct(dn.buyer), RequestDigest: digest}, rec, ev
}

// verdict waits for the dispute to resolve (the duties alone vote on it).
func (dn *disputeNet) verdict(id terms.Hash32) ledger.Dispute {
	dn.t.Helper()
	for {
		d, ok, err := dn.net.Nodes[0].Dispute(dn.ctx, id)
		if err == nil && ok && d.Status.Resolved() {
			return d
		}
		select {
		case <-dn.ctx.Done():
			dn.t.Fatalf("dispute %s: no verdict: %v (%+v)", id, dn.ctx.Err(), d)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (dn *disputeNet) balance(k ed25519.PrivateKey) uint64 {
	a, _, err := dn.net.Nodes[0].Account(dn.ctx, acct(k))
	if err != nil {
		dn.t.Fatal(err)
	}
	return a.Balance
}

func (dn *disputeNet) provider() ledger.Provider {
	p, ok, err := dn.net.Nodes[0].Provider(dn.ctx, dn.machine.MachineID())
	if err != nil || !ok {
		dn.t.Fatalf("provider: %v %v", ok, err)
	}
	return p
}

// rebond puts back what the machine's conviction slashed, which lifts
// the bar on its records (one conviction per episode: until then the
// chain settles no record paying it).
func (dn *disputeNet) rebond() {
	dn.t.Helper()
	p := dn.provider()
	if !p.Barred || p.RebondDue == 0 {
		dn.t.Fatalf("a convicted machine not barred: %+v", p)
	}
	dn.submit(dn.op, &ledger.ProviderRebond{MachineID: p.MachineID, Amount: p.RebondDue})
	if q := dn.provider(); q.Barred || q.Bond != p.Bond+p.RebondDue {
		dn.t.Fatalf("after the re-bond of %d: %+v", p.RebondDue, q)
	}
}

// TestDutyConvictsPerturbedWeights: a provider answering from a Q8_0
// copy of the weights (cheaper, not the model it is paid for) signs
// proofs of them; the committee, each member re-executing on the real F32
// weights, convicts within the verdict limit: the bond is slashed by the
// governed share, the disputer is paid, the provider loses its standing.
// An honest answer disputed falsely keeps the provider's bond and costs
// the disputer its own. Both answers' bytes are invalid UTF-8.
func TestDutyConvictsPerturbedWeights(t *testing.T) {
	dir := t.TempDir()
	o := modelgen.DevnetOptions()
	dirs := heldModels(t, dir, o)
	honest := openGenerated(t, filepath.Join(dir, "provider"), o)
	cheap := o
	cheap.Quant = gguf.TypeQ8_0
	cheat := openGenerated(t, filepath.Join(dir, "q8"), cheap)
	dn := startDisputeNet(t, dirs, 20)
	if honest.Info().ID != inference.ModelID(dn.model) || cheat.Info().ID == honest.Info().ID {
		t.Fatalf("held model %s, provider's %s, perturbed copy %s", dn.model, honest.Info().ID, cheat.Info().ID)
	}

	bond, disBefore := dn.provider().Bond, dn.balance(dn.dis)
	// Answers whose tokens spell invalid UTF-8: the signed text (each
	// piece sanitised as sent) is not what the tokens spell, which once
	// acquitted every such cheat.
	lie := invalidAnswer(t, cheat, 1)
	ids, hs := dn.settleAndDispute(lie)
	id, opened := ids[0], hs[0]
	d := dn.verdict(id)
	cur := d.Current()
	wantSlash := ledger.DisputeSlash(dn.params, bond, d.Credited)
	if d.Status != ledger.DisputeGuilty || d.ResolveHeight-opened > int64(dn.params.DisputeVerdictBlocks) || d.Slashed != wantSlash {
		t.Fatalf("perturbed weights: %s at %d (opened %d, limit %d blocks), slashed %d want %d", d.Status, d.ResolveHeight, opened,
			dn.params.DisputeVerdictBlocks, d.Slashed, wantSlash)
	}
	t.Logf("guilty: opened at %d, committee at %d, verdict at %d: %d blocks from dispute to verdict (limit %d)",
		opened, cur.DrawHeight, d.ResolveHeight, d.ResolveHeight-opened, dn.params.DisputeVerdictBlocks)
	p := dn.provider()
	if p.Bond != bond-wantSlash || p.SlashedUntil == 0 {
		t.Fatalf("provider after conviction: bond %d (was %d), slashed until %d", p.Bond, bond, p.SlashedUntil)
	}
	if got := dn.balance(dn.dis); got != disBefore+d.Reward || d.Reward == 0 {
		t.Fatalf("disputer balance %d, want %d + reward %d", got, disBefore, d.Reward)
	}

	dn.rebond()
	bond, disBefore = dn.provider().Bond, dn.balance(dn.dis)
	ids, hs = dn.settleAndDispute(invalidAnswer(t, honest, 2))
	dn.acquitted(t, "answer", "provider", ids[0], hs[0], bond, disBefore)
	var guilty, innocent float64
	for _, du := range dn.duties {
		guilty += du.Votes(ledger.VerdictGuilty)
		innocent += du.Votes(ledger.VerdictInnocent)
	}
	if guilty < 2 || innocent < 2 {
		t.Fatalf("votes counted: %v guilty, %v innocent", guilty, innocent)
	}
}

// acquitted checks the verdict of dispute id, opened at height opened
// against an honest answer or batch (what) of the accused (provider or
// holder): innocent with nothing slashed, the accused's bond as it was,
// and the false disputer's 1000 bond forfeited.
func (dn *disputeNet) acquitted(t *testing.T, what, accused string, id terms.Hash32, opened int64, bond, disBefore uint64) {
	t.Helper()
	d := dn.verdict(id)
	if d.Status != ledger.DisputeInnocent || d.Slashed != 0 {
		t.Fatalf("honest %s: %+v", what, d)
	}
	t.Logf("innocent %s: %d blocks from dispute to verdict", what, d.ResolveHeight-opened)
	if p := dn.provider(); p.Bond != bond {
		t.Fatalf("honest %s's bond %d, was %d", accused, p.Bond, bond)
	}
	if got := dn.balance(dn.dis); got != disBefore-1000 {
		t.Fatalf("false disputer's balance %d, want %d less the 1000 bond", got, disBefore)
	}
}

// invalidAnswer is the first answer of generateAnswer from i on whose
// tokens spell invalid UTF-8.
func invalidAnswer(t testing.TB, eng inference.Engine, i int) answer {
	t.Helper()
	for j := i; j < i+50; j++ {
		if a := generateAnswer(t, eng, j); a.invalid() && a.text != a.raw {
			return a
		}
	}
	t.Fatal("no answer spells invalid UTF-8")
	return answer{}
}

// honestDisputes is how many honest answers TestDutyNoFalseConvictions
// disputes at once (within MaxActiveDisputes).
const honestDisputes = 50

// TestDutyNoFalseConvictions disputes honestDisputes honest answers (greedy
// and sampled at two temperatures, each its own seed, 8 to 48 tokens, so
// one or two proof chunks), all open at once: every committee acquits in
// its first round within the verdict limit, none lapses, and the
// provider's bond and standing are untouched.
func TestDutyNoFalseConvictions(t *testing.T) {
	dir := t.TempDir()
	o := modelgen.DevnetOptions()
	dirs := heldModels(t, dir, o)
	honest := openGenerated(t, filepath.Join(dir, "provider"), o)
	// The governed default verdict limit is 40 blocks of the default 1 s:
	// 40 s for every member to re-execute its share. This chain makes a
	// block every 100 ms, so the same time is 400 blocks. Every member
	// re-executes about 3/4 of the answers on a shared 2-core machine
	// under -race, which took more than 40 such blocks under load (a
	// first round lapsed, then a redraw acquitted). Reveals open once a
	// round's members all committed, so the limit is a bound, not the wait.
	dn := startDisputeNet(t, dirs, ledger.DefaultParams().DisputeVerdictBlocks*uint64(time.Second/disputeNetBlockTime))
	bond := dn.provider().Bond
	var as []answer
	for i := range honestDisputes {
		as = append(as, generateAnswer(t, honest, 100+i))
	}
	start := time.Now()
	ids, heights := dn.settleAndDispute(as...)
	var blocks []int64
	for i, id := range ids {
		d := dn.verdict(id)
		if d.Status != ledger.DisputeInnocent || len(d.Rounds) != 1 {
			t.Fatalf("honest answer %d (dispute %s): %s after %d rounds", i, id, d.Status, len(d.Rounds))
		}
		blocks = append(blocks, d.ResolveHeight-heights[i])
	}
	slices.Sort(blocks)
	worst := blocks[len(blocks)-1]
	if worst > int64(dn.params.DisputeVerdictBlocks) {
		t.Fatalf("a verdict took %d blocks, limit %d", worst, dn.params.DisputeVerdictBlocks)
	}
	if p := dn.provider(); p.Bond != bond || p.SlashedUntil != 0 {
		t.Fatalf("honest provider: bond %d (was %d), slashed until %d", p.Bond, bond, p.SlashedUntil)
	}
	t.Logf("%d honest disputes, 0 convictions; blocks from dispute to verdict: median %d, worst %d (limit %d); opened at %d..%d, %v from settling to the last verdict",
		honestDisputes, blocks[len(blocks)/2], worst, dn.params.DisputeVerdictBlocks, slices.Min(heights), slices.Max(heights), time.Since(start).Round(time.Millisecond))
}
