package receipt

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/tenzrod/tenzrod/receipts/hwkey"
	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router/pricing"
)

func TestCheckCatchesEachMismatch(t *testing.T) {
	p := newProvider(t, hwkey.BackendSoftware)
	other := newProvider(t, hwkey.BackendSoftware)
	r := newReceipt(t, p)
	if err := Check(r, observed(p)); err != nil {
		t.Fatalf("honest receipt: %v", err)
	}
	all := []error{ErrNonceMismatch, ErrInputMismatch, ErrOutputMismatch, ErrModelMismatch, ErrMachineMismatch, ErrMaxTokensMismatch}
	cases := map[string]struct {
		edit func(*Observed)
		want error
	}{
		"nonce": {func(o *Observed) { o.Nonce = []byte("fedcba9876543210") }, ErrNonceMismatch},
		"input": {func(o *Observed) {
			o.InputCommitment = InputCommitment(testModel, true, testMessages, "", "Hel", testSampling)
		}, ErrInputMismatch},
		"output": {func(o *Observed) { o.OutputText = testOutput[:len(testOutput)-1] }, ErrOutputMismatch},
		"model": {func(o *Observed) {
			o.ModelID = append([]byte{}, testModel...)
			o.ModelID[31] ^= 1
		}, ErrModelMismatch},
		"machine":    {func(o *Observed) { o.MachineID = other.machine() }, ErrMachineMismatch},
		"max_tokens": {func(o *Observed) { o.MaxTokens = 65 }, ErrMaxTokensMismatch},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o := observed(p)
			tc.edit(&o)
			err := Check(r, o)
			if !errors.Is(err, tc.want) {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
			for _, s := range all {
				if s != tc.want && errors.Is(err, s) { //nolint:errorlint // compares two sentinels, not an error returned
					t.Errorf("error %v also reports %v", err, s)
				}
			}
		})
	}
	// Several mismatches are all reported.
	o := observed(p)
	o.Nonce, o.OutputText, o.MachineID = nil, "", other.machine()
	err := Check(r, o)
	for _, want := range []error{ErrNonceMismatch, ErrOutputMismatch, ErrMachineMismatch} {
		if !errors.Is(err, want) {
			t.Errorf("joined error %v lacks %v", err, want)
		}
	}
	if errors.Is(err, ErrInputMismatch) {
		t.Errorf("joined error %v reports a matching input", err)
	}
}

func TestCap(t *testing.T) {
	obs := func(edit func(*Observed)) Observed {
		o := Observed{OutputText: strings.Repeat("x", 100), BytesSent: 500, BytesReceived: 400,
			MaxTokens: 64, ExactOutputTokens: -1, ExactInputTokens: -1}
		if edit != nil {
			edit(&o)
		}
		return o
	}
	const huge = math.MaxUint64
	cases := []struct {
		name    string
		claimed terms.Units
		o       Observed
		want    terms.Units
		rep     CapReport // flags only; Claimed is checked separately
	}{
		{"honest claim passes", terms.Units{InputTokens: 30, CachedTokens: 10, OutputTokens: 20}, obs(nil),
			terms.Units{InputTokens: 30, CachedTokens: 10, OutputTokens: 20}, CapReport{}},
		{"output above max_tokens", terms.Units{OutputTokens: 65}, obs(nil),
			terms.Units{OutputTokens: 64}, CapReport{OutputMaxTokens: true}},
		{"no max_tokens: output above text bytes + end token", terms.Units{OutputTokens: 500}, obs(func(o *Observed) { o.MaxTokens = 0 }),
			terms.Units{OutputTokens: 101}, CapReport{OutputText: true}},
		{"output above bytes received", terms.Units{OutputTokens: 60}, obs(func(o *Observed) { o.BytesReceived = 50 }),
			terms.Units{OutputTokens: 50}, CapReport{OutputWire: true}},
		{"empty answer bills only the end token", terms.Units{OutputTokens: 9}, obs(func(o *Observed) { o.OutputText = "" }),
			terms.Units{OutputTokens: 1}, CapReport{OutputText: true}},
		{"negative byte counts bill nothing", terms.Units{InputTokens: 5, OutputTokens: 5},
			obs(func(o *Observed) { o.BytesSent, o.BytesReceived = -1, math.MinInt64 }),
			terms.Units{}, CapReport{OutputWire: true, InputWire: true}},
		{"input above bytes sent, input cut before cached", terms.Units{InputTokens: 600, CachedTokens: 100}, obs(nil),
			terms.Units{InputTokens: 400, CachedTokens: 100}, CapReport{InputWire: true}},
		{"cached alone above bytes sent", terms.Units{InputTokens: 10, CachedTokens: 900}, obs(nil),
			terms.Units{InputTokens: 0, CachedTokens: 500}, CapReport{InputWire: true}},
		{"exact counts replace claims, lower", terms.Units{InputTokens: 300, OutputTokens: 60},
			obs(func(o *Observed) { o.ExactInputTokens, o.ExactOutputTokens = 40, 25 }),
			terms.Units{InputTokens: 40, OutputTokens: 25}, CapReport{InputExact: true, OutputExact: true}},
		{"exact counts replace claims, higher", terms.Units{InputTokens: 3, OutputTokens: 2},
			obs(func(o *Observed) { o.ExactInputTokens, o.ExactOutputTokens = 40, 25 }),
			terms.Units{InputTokens: 40, OutputTokens: 25}, CapReport{InputExact: true, OutputExact: true}},
		{"exact zero replaces the claim", terms.Units{InputTokens: 30, OutputTokens: 20},
			obs(func(o *Observed) { o.ExactInputTokens, o.ExactOutputTokens = 0, 0 }),
			terms.Units{}, CapReport{InputExact: true, OutputExact: true}},
		{"exact input keeps the claimed cached share", terms.Units{InputTokens: 100, CachedTokens: 30},
			obs(func(o *Observed) { o.ExactInputTokens = 50 }),
			terms.Units{InputTokens: 20, CachedTokens: 30}, CapReport{InputExact: true}},
		{"exact input below the cached claim", terms.Units{InputTokens: 100, CachedTokens: 80},
			obs(func(o *Observed) { o.ExactInputTokens = 50 }),
			terms.Units{InputTokens: 0, CachedTokens: 50}, CapReport{InputExact: true}},
		{"exact output still capped by max_tokens", terms.Units{OutputTokens: 10},
			obs(func(o *Observed) { o.ExactOutputTokens = 70 }),
			terms.Units{OutputTokens: 64}, CapReport{OutputExact: true, OutputMaxTokens: true}},
		{"pixel steps and audio are unbacked", terms.Units{OutputTokens: 5, PixelSteps: 10, AudioMs: 3}, obs(nil),
			terms.Units{OutputTokens: 5}, CapReport{Unbacked: true}},
		{"max uint64 claims do not overflow", terms.Units{InputTokens: huge, OutputTokens: huge, CachedTokens: huge, PixelSteps: huge, AudioMs: huge},
			obs(func(o *Observed) {
				o.BytesSent, o.BytesReceived, o.MaxTokens = math.MaxInt64, math.MaxInt64, math.MaxInt
			}),
			terms.Units{InputTokens: 0, CachedTokens: math.MaxInt64, OutputTokens: 101},
			CapReport{OutputMaxTokens: true, OutputText: true, InputWire: true, Unbacked: true}},
		{"max int exact counts do not overflow", terms.Units{},
			obs(func(o *Observed) {
				o.ExactInputTokens, o.ExactOutputTokens, o.MaxTokens = math.MaxInt, math.MaxInt, 0
				o.BytesSent, o.BytesReceived = math.MaxInt64, math.MaxInt64
			}),
			terms.Units{InputTokens: math.MaxInt64, OutputTokens: 101}, CapReport{InputExact: true, OutputExact: true, OutputText: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, rep := Cap(tc.claimed, tc.o)
			if got != tc.want {
				t.Errorf("billed %+v, want %+v", got, tc.want)
			}
			if rep.Claimed != tc.claimed {
				t.Errorf("report claims %+v, want %+v", rep.Claimed, tc.claimed)
			}
			rep.Claimed = terms.Units{}
			if rep != tc.rep {
				t.Errorf("report %+v, want %+v", rep, tc.rep)
			}
			if capped(rep) != (tc.rep != CapReport{}) {
				t.Errorf("capped = %v for %+v", capped(rep), rep)
			}
		})
	}
}

// TestCapPricesWithoutOverflow feeds capped units to pricing.Price: a claim
// of 2^64-1 tokens would overflow; the capped units price normally.
func TestCapPricesWithoutOverflow(t *testing.T) {
	card := pricingCard()
	claim := terms.Units{InputTokens: math.MaxUint64, OutputTokens: math.MaxUint64}
	if _, err := pricing.Price(card, claim, "receipt", pricing.Surcharges{}); !errors.Is(err, pricing.ErrOverflow) {
		t.Fatalf("the raw claim priced: %v", err)
	}
	o := Observed{OutputText: "four", BytesSent: 200, BytesReceived: 100, MaxTokens: 16, ExactInputTokens: -1, ExactOutputTokens: -1}
	u, _ := Cap(claim, o)
	b, err := pricing.Price(card, u, "receipt", pricing.Surcharges{Receipt: 5})
	if err != nil {
		t.Fatal(err)
	}
	if want := uint64(200*card.InputTokens + 5*card.OutputTokens + 5); b.Total != want {
		t.Fatalf("total %d, want %d", b.Total, want)
	}
}

// capped reports whether any dimension of c was billed below the claim,
// or replaced by an exact count: the report's fields must each say so.
func capped(c CapReport) bool {
	return c.OutputExact || c.OutputMaxTokens || c.OutputText || c.OutputWire ||
		c.InputExact || c.InputWire || c.Unbacked
}
