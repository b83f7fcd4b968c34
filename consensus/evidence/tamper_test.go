package evidence_test

import (
	"errors"
	"testing"
	"time"

	"github.com/cometbft/cometbft/crypto/ed25519"
	cmttypes "github.com/cometbft/cometbft/types"

	"github.com/tenzrod/tenzrod/consensus/evidence"
)

var sentinels = []error{evidence.ErrFormat, evidence.ErrChainID, evidence.ErrHeader, evidence.ErrValidatorSet,
	evidence.ErrSignature, evidence.ErrInsufficientPower, evidence.ErrUntrusted, evidence.ErrAppHash,
	evidence.ErrProof, evidence.ErrRecord, evidence.ErrForeignRecord}

// tamperCases alters a fresh copy of the pack (or the trusted set) per case
// and wants exactly the case's error.
func tamperCases(t *testing.T, read func() *evidence.Pack, trusted evidence.ValidatorSet) {
	t.Helper()
	stranger := make([]*cmttypes.Validator, 4)
	for i := range stranger {
		stranger[i] = cmttypes.NewValidator(ed25519.GenPrivKey().PubKey(), 100)
	}
	firstSigned := func(c *cmttypes.Commit) *cmttypes.CommitSig {
		for i := range c.Signatures {
			if c.Signatures[i].BlockIDFlag == cmttypes.BlockIDFlagCommit {
				return &c.Signatures[i]
			}
		}
		t.Fatal("commit has no signature")
		return nil
	}
	cases := []struct {
		name   string
		alter  func(*evidence.Pack, *evidence.ValidatorSet)
		target error
	}{
		{"format", func(p *evidence.Pack, _ *evidence.ValidatorSet) { p.Format = "x" }, evidence.ErrFormat},
		{"record price", func(p *evidence.Pack, _ *evidence.ValidatorSet) { p.Records[0].Record.Price-- }, evidence.ErrRecord},
		{"record height", func(p *evidence.Pack, _ *evidence.ValidatorSet) { p.Records[2].Height-- }, evidence.ErrRecord},
		{"record dropped", func(p *evidence.Pack, _ *evidence.ValidatorSet) { p.Records = p.Records[1:] }, evidence.ErrRecord},
		{"record of another payer", func(p *evidence.Pack, _ *evidence.ValidatorSet) { p.Records[1].Record.Payer = account("carol") }, evidence.ErrForeignRecord},
		{"proof node", func(p *evidence.Pack, _ *evidence.ValidatorSet) { p.Proof.Nodes[0][3] ^= 1 }, evidence.ErrProof},
		{"proof entry", func(p *evidence.Pack, _ *evidence.ValidatorSet) { p.Proof.Values[0][0] ^= 1 }, evidence.ErrProof},
		{"successor dropped", func(p *evidence.Pack, _ *evidence.ValidatorSet) {
			n := len(p.Proof.Keys) - 1
			p.Proof.Keys, p.Proof.Values = p.Proof.Keys[:n], p.Proof.Values[:n]
		}, evidence.ErrProof},
		{"header app hash", func(p *evidence.Pack, _ *evidence.ValidatorSet) {
			p.SignedHeader.AppHash[0] ^= 1
			p.AppHash[0] ^= 1
		}, evidence.ErrHeader},
		{"header time", func(p *evidence.Pack, _ *evidence.ValidatorSet) {
			p.SignedHeader.Time = p.SignedHeader.Time.Add(time.Second)
		}, evidence.ErrHeader},
		{"pack app hash", func(p *evidence.Pack, _ *evidence.ValidatorSet) { p.AppHash[31] ^= 1 }, evidence.ErrAppHash},
		{"forged signature", func(p *evidence.Pack, _ *evidence.ValidatorSet) { firstSigned(p.SignedHeader.Commit).Signature[5] ^= 1 }, evidence.ErrSignature},
		{"signatures removed", func(p *evidence.Pack, _ *evidence.ValidatorSet) {
			c := p.SignedHeader.Commit
			for i, left := range countSigned(c) {
				if left > 2 { // keep two of four: power 1/2 <= 2/3
					c.Signatures[i] = cmttypes.NewCommitSigAbsent()
				}
			}
		}, evidence.ErrInsufficientPower},
		{"validator set swapped", func(p *evidence.Pack, _ *evidence.ValidatorSet) { p.Validators = cmttypes.NewValidatorSet(stranger) }, evidence.ErrValidatorSet},
		{"untrusted validators", func(_ *evidence.Pack, v *evidence.ValidatorSet) { v.Set = cmttypes.NewValidatorSet(stranger) }, evidence.ErrUntrusted},
		{"other chain", func(_ *evidence.Pack, v *evidence.ValidatorSet) { v.ChainID = "other-chain" }, evidence.ErrChainID},
	}
	for _, tc := range cases {
		p, v := read(), trusted
		tc.alter(p, &v)
		_, err := evidence.Verify(p, v)
		if !errors.Is(err, tc.target) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.target)
			continue
		}
		for _, other := range sentinels {
			if other != tc.target && errors.Is(err, other) { //nolint:errorlint // compares two sentinels, not an error returned
				t.Errorf("%s: error also matches %v", tc.name, other)
			}
		}
	}
	// Every proof node matters.
	for i := range read().Proof.Nodes {
		p := read()
		p.Proof.Nodes[i][len(p.Proof.Nodes[i])-1] ^= 1
		if _, err := evidence.Verify(p, trusted); !errors.Is(err, evidence.ErrProof) {
			t.Errorf("proof node %d altered: %v", i, err)
		}
	}
}

// countSigned maps each signature index with a block signature to how
// many block signatures remain from it on (so left > 2 keeps the last two).
func countSigned(c *cmttypes.Commit) map[int]int {
	out := map[int]int{}
	left := 0
	for i := len(c.Signatures) - 1; i >= 0; i-- {
		if c.Signatures[i].BlockIDFlag == cmttypes.BlockIDFlagCommit {
			left++
			out[i] = left
		}
	}
	return out
}

// oneSignatureLess removes signatures until three of four validators'
// remain: that is still > 2/3, and the report says 3/4.
func oneSignatureLess(t *testing.T, p *evidence.Pack, trusted evidence.ValidatorSet) {
	t.Helper()
	for i, left := range countSigned(p.SignedHeader.Commit) {
		if left > 3 {
			p.SignedHeader.Commit.Signatures[i] = cmttypes.NewCommitSigAbsent()
		}
	}
	rep, err := evidence.Verify(p, trusted)
	if err != nil {
		t.Fatal(err)
	}
	if rep.SignedPower != 300 || rep.Signers != 3 || rep.SigningFraction() != 0.75 || rep.TrustedSignedPower != 300 {
		t.Fatalf("3 of 4 signatures: power %d, %d signers, fraction %v", rep.SignedPower, rep.Signers, rep.SigningFraction())
	}
}
