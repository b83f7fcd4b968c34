package expert

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/host"
	dto "github.com/prometheus/client_model/go"

	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/inference/llm"
	"github.com/tenzrod/tenzrod/inference/modelgen"
	"github.com/tenzrod/tenzrod/receipts/identity"
)

// The acceptance tests: a small generated MoE model whose experts run at
// three holders (each expert's first choice) with two standbys gives the
// same tokens as the local engine, and every way a holder can fail is
// caught, the holder retired for the batch, and the answer unchanged.

var (
	moeOnce sync.Once
	moeDir  string
	moeErr  error
)

// moeOptions is a tiny MoE model: 2 layers of 6 experts, top-2.
func moeOptions() modelgen.GenOptions {
	o := modelgen.DevnetOptions()
	o.Layers, o.Dim, o.Heads, o.KVHeads, o.FFN, o.Vocab, o.Context = 2, 64, 4, 2, 128, 600, 512
	o.MoE, o.Experts, o.ExpertsUsed = true, 6, 2
	return o
}

func moeModel(t testing.TB) string {
	t.Helper()
	moeOnce.Do(func() {
		var tmp string
		if tmp, moeErr = os.MkdirTemp("", "expert-moe-"); moeErr == nil {
			moeDir = filepath.Join(tmp, "moe")
			moeErr = modelgen.GenerateModel(moeDir, moeOptions())
		}
	})
	if moeErr != nil {
		t.Fatal(moeErr)
	}
	return moeDir
}

func TestMain(m *testing.M) {
	slog.SetDefault(slog.New(slog.DiscardHandler)) // identity.Open announces every key it makes
	code := m.Run()
	if moeDir != "" {
		_ = os.RemoveAll(filepath.Dir(moeDir))
	}
	os.Exit(code)
}

// modelComputer runs experts of a verified model directory.
type modelComputer struct{ m *llm.Model }

func (c modelComputer) Compute(_ context.Context, _ [32]byte, layer, expert int, rows [][]float32) ([][]float32, error) {
	return c.m.ExpertForward(layer, expert, rows, 1)
}

func openModel(t testing.TB, opts llm.Options) *llm.Engine {
	t.Helper()
	e, err := llm.Open(moeModel(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// layerFunc adapts a Caller to the engine's hook.
func layerFunc(c *Caller) llm.ExpertLayerFunc {
	return func(ctx context.Context, layer int, in []llm.ExpertBatch) ([][][]float32, error) {
		bs := make([]Batch, len(in))
		for i, b := range in {
			bs[i] = Batch{Expert: b.Expert, Positions: b.Positions, Rows: b.Rows}
		}
		return c.Layer(ctx, layer, bs)
	}
}

// moeNet is a serving node's host and caller, three first-choice holders
// and two standbys.
type moeNet struct {
	caller  host.Host
	c       *Caller
	holders []*holder // 0..2 first choices, 3..4 standbys
	comp    modelComputer
	engine  *llm.Engine
	metrics *Metrics
}

func newMoENet(t *testing.T, timeout time.Duration) *moeNet {
	t.Helper()
	return newMoENetWith(t, timeout, nil)
}

// newMoENetWith is newMoENet with tune changing the caller's config.
func newMoENetWith(t *testing.T, timeout time.Duration, tune func(*CallerConfig)) *moeNet {
	t.Helper()
	local := openModel(t, llm.Options{Threads: 1})
	n := &moeNet{caller: newHost(t, nil), comp: modelComputer{local.Model()}}
	for range 5 {
		n.holders = append(n.holders, startHolder(t, n.caller, n.comp))
	}
	table := &staticTable{by: map[[2]int][]Holder{}}
	o := moeOptions()
	for l := range o.Layers {
		for e := range o.Experts {
			first := n.holders[e%3]
			table.by[[2]int{l, e}] = []Holder{first.entry(10 + uint64(e%3)), n.holders[3+e%2].entry(20), n.holders[4-e%2].entry(20)}
		}
	}
	var id [32]byte = local.Info().ID
	n.metrics = NewMetrics(nil)
	cfg := CallerConfig{Network: testNetwork, Model: id, Dim: o.Dim, Timeout: timeout, Metrics: n.metrics}
	if tune != nil {
		tune(&cfg)
	}
	c, err := NewCaller(n.caller, cfg, table, nil)
	if err != nil {
		t.Fatal(err)
	}
	n.c = c
	n.engine = openModel(t, llm.Options{Threads: 1, ExpertLayer: layerFunc(c), CacheBytes: -1})
	return n
}

var moeRequest = inference.GenerateRequest{
	Messages: []inference.Message{{Role: "user", Content: "Tell me about open markets"}},
	Sampling: inference.Sampling{Temperature: 0.8, Seed: 11, MaxTokens: 12},
}

// run generates req, returning the streamed tokens and the final result.
func run(t *testing.T, e *llm.Engine, ctx context.Context) ([]inference.Token, inference.Result) {
	t.Helper()
	var toks []inference.Token
	res, err := e.Generate(ctx, moeRequest, func(tok inference.Token) error {
		toks = append(toks, tok)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return toks, res
}

var (
	localOnce sync.Once
	localToks []inference.Token
	localRes  inference.Result
)

func localRun(t *testing.T) ([]inference.Token, inference.Result) {
	localOnce.Do(func() { localToks, localRes = run(t, openModel(t, llm.Options{Threads: 1}), context.Background()) })
	return localToks, localRes
}

func sameAnswer(t *testing.T, toks []inference.Token, res inference.Result) {
	t.Helper()
	wantToks, wantRes := localRun(t)
	if !reflect.DeepEqual(toks, wantToks) {
		t.Fatalf("streamed tokens differ from the local run")
	}
	if !reflect.DeepEqual(res.Tokens, wantRes.Tokens) || res.Text != wantRes.Text {
		t.Fatalf("result %q differs from the local run's %q", res.Text, wantRes.Text)
	}
}

func TestRemoteExpertsMatchLocal(t *testing.T) {
	n := newMoENet(t, 5*time.Second)
	tally := new(Tally)
	toks, res := run(t, n.engine, WithTally(context.Background(), tally))
	sameAnswer(t, toks, res)
	st := n.c.Stats()
	if len(st.Failures) != 0 || st.NoHolder != 0 {
		t.Fatalf("honest holders failed: %+v", st)
	}
	// Every expert's first choice is one of the three primaries; the
	// standbys did nothing; at most one exchange per holder per layer.
	used := tally.Holders()
	if len(used) != 3 {
		t.Fatalf("%d holders used, want the 3 first choices", len(used))
	}
	var tokens uint64
	for _, u := range used {
		if u.Retired != 0 || u.Batches == 0 || len(u.Receipts) != u.Batches {
			t.Fatalf("holder usage %+v", u)
		}
		if u.Batches > int(st.Layers) {
			t.Fatalf("holder had %d exchanges in %d layer calls", u.Batches, st.Layers)
		}
		tokens += u.ExpertTokens
	}
	// Each position of each layer is computed at ExpertsUsed experts.
	o := moeOptions()
	positions := uint64(len(res.Prompt) + len(res.Tokens) - 1)
	if want := positions * uint64(o.Layers*o.ExpertsUsed); tokens != want || st.ExpertTokens != want {
		t.Fatalf("%d expert-tokens tallied (%d counted), want %d", tokens, st.ExpertTokens, want)
	}
	for _, h := range n.holders[3:] {
		if h.srv.Stats().Exchanges != 0 {
			t.Fatal("a standby served while every first choice was honest")
		}
	}
}

// TestFaultyHolderCaught makes the first choice of experts 0 and 3 fail
// in one way each and checks that it is caught, retired for every batch
// it was sent, and that the answer still matches the local run.
func TestFaultyHolderCaught(t *testing.T) {
	other := newHolderIdentity(t)
	cases := []struct {
		name   string
		reason string
		tamper func(sess *identity.Session, req *Request, resp *Response) *Response
	}{
		{"rows not matching the commitment", ReasonOutput, func(_ *identity.Session, _ *Request, r *Response) *Response {
			r.Outputs[0][5] ^= 0x01
			return r
		}},
		{"wrong input hash", ReasonInput, func(own *identity.Session, _ *Request, r *Response) *Response {
			_, rc, _ := DecodeReceipt(r.Receipt)
			rc.Entries[0].InputHash[0] ^= 0xff
			r.Receipt, _ = Sign(own, rc, false) // the holder's own key: only the hash is wrong
			return r
		}},
		{"bad signature", ReasonSignature, func(_ *identity.Session, _ *Request, r *Response) *Response {
			env, _, _ := DecodeReceipt(r.Receipt)
			env.Sig[len(env.Sig)/2] ^= 0x01
			r.Receipt, _ = env.Marshal()
			return r
		}},
		{"receipt by another machine", ReasonSigner, func(_ *identity.Session, req *Request, r *Response) *Response {
			r.Receipt, _ = Sign(other.sess, NewReceipt(other.sess, req, r.Outputs, time.Now()), false)
			return r
		}},
		{"no receipt", ReasonMalformed, func(_ *identity.Session, _ *Request, r *Response) *Response {
			r.Receipt = nil
			return r
		}},
		{"nothing before the deadline", ReasonTimeout, func(*identity.Session, *Request, *Response) *Response { return nil }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := newMoENet(t, 300*time.Millisecond)
			bad := n.holders[0]
			bad.rogue(t, n.comp, tc.tamper)
			tally := new(Tally)
			toks, res := run(t, n.engine, WithTally(context.Background(), tally))
			sameAnswer(t, toks, res)
			st := n.c.Stats()
			if st.Failures[tc.reason] == 0 {
				t.Fatalf("failures %v, want %s counted", st.Failures, tc.reason)
			}
			if got := counterValue(t, n.metrics, tc.reason); got != float64(st.Failures[tc.reason]) {
				t.Fatalf("metric counts %v retired for %s, stats %d", got, tc.reason, st.Failures[tc.reason])
			}
			var standby uint64
			for _, u := range tally.Holders() {
				switch {
				case u.Holder == bad.peer:
					if u.Retired == 0 || u.Batches != 0 || u.ExpertTokens != 0 {
						t.Fatalf("faulty holder's usage %+v: want retired, nothing credited", u)
					}
				case u.Holder == n.holders[3].peer || u.Holder == n.holders[4].peer:
					standby += u.ExpertTokens
				}
			}
			if standby == 0 {
				t.Fatal("no standby took over the faulty holder's batches")
			}
			if !n.c.Open(bad.peer) {
				t.Fatal("the faulty holder's breaker did not open")
			}
			if n.c.Forgive(bad.peer); n.c.Open(bad.peer) {
				t.Fatal("the faulty holder's breaker is still open after Forgive")
			}
		})
	}
}

func TestNoHolderIsAnError(t *testing.T) {
	n := newMoENet(t, 300*time.Millisecond)
	for _, h := range n.holders {
		h.srv.Stop() // every holder refuses the protocol
	}
	_, err := n.engine.Generate(context.Background(), moeRequest, func(inference.Token) error { return nil })
	if !errors.Is(err, ErrNoHolder) {
		t.Fatalf("generation with no holder: %v, want ErrNoHolder", err)
	}
	if n.c.Stats().NoHolder == 0 {
		t.Fatal("no-holder batch not counted")
	}
}

// counterValue reads the retired counter of reason.
func counterValue(t *testing.T, m *Metrics, reason string) float64 {
	t.Helper()
	var d dto.Metric
	if err := m.Retired.WithLabelValues(reason).Write(&d); err != nil {
		t.Fatal(err)
	}
	return d.GetCounter().GetValue()
}

// TestCanceledCallBlamesNobody: a call that ends while a holder computes
// (the buyer left) fails without counting against the holder.
func TestCanceledCallBlamesNobody(t *testing.T) {
	n := newMoENet(t, 5*time.Second)
	for _, h := range n.holders {
		h.rogue(t, n.comp, func(*identity.Session, *Request, *Response) *Response { return nil }) // silent
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := n.engine.Generate(ctx, moeRequest, func(inference.Token) error { return nil }); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("generation cut short: %v", err)
	}
	if st := n.c.Stats(); len(st.Failures) != 0 {
		t.Fatalf("holders blamed for the caller's own deadline: %v", st.Failures)
	}
	for _, h := range n.holders {
		if n.c.Open(h.peer) {
			t.Fatal("a holder's breaker opened")
		}
	}
}
