package expert

import (
	"bytes"
	"crypto/rand"
	"math"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/identity"
)

// syntheticReceipts makes n receipt envelopes of 4 batches each, as a
// holder signs them: its receipt payload and a signature. One envelope is
// really signed; the others carry its certificate-free form with their
// own payload and a random signature (what a signature looks like to
// anyone without the key), so 16,384 batches take no time to make.
func syntheticReceipts(t *testing.T, n int, t0 time.Time) (receipts [][]byte, experts [][]uint32) {
	t.Helper()
	h := newHolderIdentity(t)
	row := make([]byte, 16)
	var base *identity.Envelope
	for i := range n {
		req := &Request{Network: testNetwork, Model: [32]byte{9}, Layer: uint32(i % 3), Dim: 4}
		var ex []uint32
		for j := range 4 {
			row[0] = byte(i)
			e := uint32(j*2 + i%2)
			req.Batches = append(req.Batches, WireBatch{Expert: e, Positions: []uint32{uint32(i)}, Rows: bytes.Clone(row)})
			ex = append(ex, e)
		}
		outs := make([][]byte, 4)
		for j := range outs {
			outs[j] = req.Batches[j].Rows
		}
		rc := NewReceipt(h.sess, req, outs, t0.Add(time.Duration(i)*time.Millisecond))
		if base == nil {
			env, err := Seal(h.sess, rc)
			if err != nil {
				t.Fatal(err)
			}
			env.Cert = identity.Certificate{}
			base = env
		}
		env := *base
		var err error
		if env.Payload, err = cborx.Marshal(rc); err != nil {
			t.Fatal(err)
		}
		env.Sig = make([]byte, len(base.Sig))
		_, _ = rand.Read(env.Sig)
		b, err := env.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		receipts = append(receipts, b)
		experts = append(experts, ex)
	}
	return receipts, experts
}

func mustSampler(t *testing.T, key byte) *Sampler {
	t.Helper()
	k := bytes.Repeat([]byte{key}, SampleKeySize)
	s, err := NewSampler(k)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// selection is which of the batches of receipts s samples.
func selection(s *Sampler, receipts [][]byte) []bool {
	var out []bool
	for _, r := range receipts {
		for j := range 4 {
			out = append(out, s.Sampled(r, j))
		}
	}
	return out
}

// within4Sigma reports whether k successes of n are a binomial(n, p)
// draw within 4 standard deviations of its mean.
func within4Sigma(k, n int, p float64) bool {
	mean, sd := float64(n)*p, math.Sqrt(float64(n)*p*(1-p))
	return math.Abs(float64(k)-mean) <= 4*sd
}

// chi2Critical is the χ² value with df degrees of freedom exceeded with
// the one-sided normal tail probability of z (Wilson–Hilferty).
func chi2Critical(df int, z float64) float64 {
	k := float64(df)
	a := 2 / (9 * k)
	return k * math.Pow(1-a+z*math.Sqrt(a), 3)
}

func count(sel []bool) int {
	k := 0
	for _, v := range sel {
		if v {
			k++
		}
	}
	return k
}

// phi is the correlation coefficient of two indicator vectors.
func phi(a, b []bool) float64 {
	var n11, n1x, nx1 float64
	for i := range a {
		if a[i] {
			n1x++
		}
		if b[i] {
			nx1++
		}
		if a[i] && b[i] {
			n11++
		}
	}
	n := float64(len(a))
	return (n*n11 - n1x*nx1) / math.Sqrt(n1x*(n-n1x)*nx1*(n-nx1))
}

var receiptsOnce struct {
	r  [][]byte
	ex [][]uint32
}

func sharedReceipts(t *testing.T) ([][]byte, [][]uint32) {
	if receiptsOnce.r == nil {
		receiptsOnce.r, receiptsOnce.ex = syntheticReceipts(t, 4096, time.Unix(1_800_000_000, 0)) // 16,384 batches
	}
	return receiptsOnce.r, receiptsOnce.ex
}

func TestSampleFraction(t *testing.T) {
	receipts, _ := sharedReceipts(t)
	for _, key := range []byte{1} {
		sel := selection(mustSampler(t, key), receipts)
		k := count(sel)
		t.Logf("sampled %d of %d batches (expected %d)", k, len(sel), len(sel)/SampleRate)
		if !within4Sigma(k, len(sel), 1.0/SampleRate) {
			t.Fatalf("key %d sampled %d of %d batches, want %d within 4 sigma", key, k, len(sel), len(sel)/SampleRate)
		}
	}
}

// TestSampleUnpredictableByHolder: the decision is a function of the
// caller's secret. Two secrets sample the same receipts independently
// (different sets, correlation ~0); a holder computing the same function
// under any key it might guess learns nothing about the caller's choice;
// and within every group the holder can tell apart at signing time (its
// layer, its expert) the rate is the same 1/64.
func TestSampleUnpredictableByHolder(t *testing.T) {
	receipts, experts := sharedReceipts(t)
	caller := selection(mustSampler(t, 1), receipts)
	n := len(caller)
	bound := 4 / math.Sqrt(float64(n)) // |phi| of independent vectors is ~N(0, 1/n)
	for _, guess := range []byte{0, 2} {
		other := selection(mustSampler(t, guess), receipts)
		if equal(caller, other) {
			t.Fatalf("secret %d samples the same set as the caller's", guess)
		}
		c := phi(caller, other)
		t.Logf("correlation with key %d: %.4f (bound %.4f)", guess, c, bound)
		if math.Abs(c) > bound {
			t.Fatalf("selection under key %d correlates %.4f with the caller's (bound %.4f)", guess, c, bound)
		}
	}
	// Groups by what the holder knows when it signs: the layer of the
	// request and the expert of the batch.
	type key struct{ layer, expert int }
	hit, all := map[key]int{}, map[key]int{}
	for i := range receipts {
		for j := range 4 {
			k := key{i % 3, int(experts[i][j])}
			all[k]++
			if caller[i*4+j] {
				hit[k]++
			}
		}
	}
	// One χ² test over the groups (α = 1e-4): with 24 groups a 4σ bound
	// on each alone fails about one run in a hundred by chance (CI saw 24
	// of 683 in one group, 4.1σ), while a rate that follows the layer or
	// the expert moves every group it touches. A group far off on its own
	// (6σ) still fails.
	p := 1.0 / SampleRate
	chi2 := 0.0
	for k, m := range all {
		mean, v := float64(m)*p, float64(m)*p*(1-p)
		d := float64(hit[k]) - mean
		chi2 += d * d / v
		if math.Abs(d) > 6*math.Sqrt(v) {
			t.Fatalf("layer %d expert %d: %d of %d sampled, not 1/%d", k.layer, k.expert, hit[k], m, SampleRate)
		}
	}
	if crit := chi2Critical(len(all), 3.719); chi2 > crit {
		t.Fatalf("sampling rate differs across (layer, expert) groups: χ² %.1f over %d groups, critical %.1f at α = 1e-4", chi2, len(all), crit)
	}
	t.Logf("χ² %.1f over %d (layer, expert) groups (critical %.1f)", chi2, len(all), chi2Critical(len(all), 3.719))
	// The same batch signed again (a new timestamp, so new receipt bytes)
	// is decided afresh: the decision follows the signed bytes, which
	// exist only once the holder has answered.
	first := selection(mustSampler(t, 1), receipts[:512])
	again, _ := syntheticReceipts(t, 512, time.Unix(1_800_000_001, 0))
	if equal(first, selection(mustSampler(t, 1), again)) {
		t.Fatal("re-signed receipts were sampled exactly as before: the decision ignores the receipt")
	}
}

func equal(a, b []bool) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}

func TestSampleKeyKeptInHome(t *testing.T) {
	path := t.TempDir() + "/keys/expert-sample.key"
	k1, err := LoadSampleKey(path)
	if err != nil {
		t.Fatal(err)
	}
	k2, err := LoadSampleKey(path)
	if err != nil || !bytes.Equal(k1, k2) || len(k1) != SampleKeySize {
		t.Fatalf("key not kept: %x then %x (%v)", k1, k2, err)
	}
	other, err := LoadSampleKey(t.TempDir() + "/k")
	if err != nil || bytes.Equal(other, k1) {
		t.Fatalf("two homes share a sampling key (%v)", err)
	}
	if _, err := NewSampler(k1[:5]); err == nil {
		t.Fatal("a short key was accepted")
	}
}
