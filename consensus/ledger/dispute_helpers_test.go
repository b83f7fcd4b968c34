package ledger_test

import (
	"crypto/sha256"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/inference/commit"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// disputeNet is a chain with validators of given powers, a registered
// provider machine, a buyer's escrow with itself and a funded disputer.
type disputeNet struct {
	c        *chain
	model    terms.Hash32
	m        *machine
	operator *ledger.Signer
	buyer    *ledger.Signer
	disputer *ledger.Signer
	hash     func(height int64) terms.Hash32 // block hashes the chain is finalized with
	// mirror is a second node's ledger from the same genesis, fed the
	// same blocks: every block must leave both with the same state root.
	mirror *ledger.Ledger
}

const disputeBond = 1_000_000

func disputeParams() ledger.Params {
	p := ledgertest.Params()
	p.MinServingBond = 1_000_000
	p.DisputeMinBond = 500
	p.DisputeWindowBlocks = 20
	p.DisputeCommittee = 2
	p.DisputeVerdictBlocks = 4 // commits in the draw block and the next, reveals in the two after
	p.DisputeSlashBP = 1000
	p.DisputeRewardBP = 4000
	p.DisputeStandingHours = 2
	return p
}

// newDisputeNet starts a chain whose validators have the given powers
// (validator i's operator is ledgertest.SeedKey("validator", i)); operatorIsVal makes
// validator 0 also the provider's operator.
func newDisputeNet(t testing.TB, powers []int64, operatorIsVal bool) *disputeNet {
	t.Helper()
	return newDisputeNetWith(t, disputeParams(), powers, operatorIsVal)
}

func newDisputeNetWith(t testing.TB, params ledger.Params, powers []int64, operatorIsVal bool) *disputeNet {
	t.Helper()
	n := &disputeNet{model: terms.Hash32{0xd1, 0x5b}, m: newMachine(t)}
	n.hash = ledger.StandInBlockHash
	var accts []ledger.GenesisAccount
	var g ledger.GenesisAccount
	n.buyer, g = ledgertest.Signer(testChain, "dispute-buyer", 1<<40)
	accts = append(accts, g)
	n.disputer, g = ledgertest.Signer(testChain, "disputer", 1<<30)
	accts = append(accts, g)
	vals, gvals := ledgertest.Validators(testChain, powers...)
	if operatorIsVal {
		n.operator = vals[0]
		accts = append(accts, ledger.GenesisAccount{Account: vals[0].Account(), Balance: 1 << 30})
	} else {
		n.operator, g = ledgertest.Signer(testChain, "dispute-operator", 1<<30)
		accts = append(accts, g)
	}
	l, err := ledger.Open("", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	n.c = &chain{Driver: ledgertest.Driver{T: t, Now: genesisTime, Vals: vals}, l: l}
	gen := ledger.AppGenesis{Params: params, Accounts: accts, Validators: gvals}
	if _, _, err := l.InitChain(testChain, genesisTime, 1, gen); err != nil {
		t.Fatal(err)
	}
	if n.mirror, err = ledger.Open("", slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.mirror.Close() })
	if _, _, err := n.mirror.InitChain(testChain, genesisTime, 1, gen); err != nil {
		t.Fatal(err)
	}
	n.block(n.c.sign(n.operator, n.m.register(t, n.operator, 10_000_000, 0)),
		n.c.sign(n.buyer, &ledger.EscrowFund{Amount: 1 << 30}))
	return n
}

// block finalizes txs with n.hash's block hash and fails unless each applied.
func (n *disputeNet) block(txs ...[]byte) ledger.BlockResult {
	n.c.T.Helper()
	res := n.blockCodes(txs...)
	for i, r := range res.Txs {
		if r.Code != ledger.CodeOK {
			n.c.T.Fatalf("block %d tx %d: code %v: %s", n.c.l.Height(), i, r.Code, r.Log)
		}
	}
	return res
}

// blockCodes finalizes and commits txs on the chain and its mirror,
// checks both reach the same state root, and returns the outcomes.
func (n *disputeNet) blockCodes(txs ...[]byte) ledger.BlockResult {
	n.c.T.Helper()
	c := n.c
	c.Now = c.Now.Add(time.Second)
	h := c.l.Height() + 1
	var res ledger.BlockResult
	for i, l := range []*ledger.Ledger{c.l, n.mirror} {
		r, err := l.FinalizeHashed(h, c.Now, n.hash(h), txs)
		if err != nil {
			c.T.Fatal(err)
		}
		if err := l.Commit(); err != nil {
			c.T.Fatal(err)
		}
		if i == 0 {
			res = r
		} else if string(r.AppHash) != string(res.AppHash) {
			c.T.Fatalf("block %d: the mirror node's state root %x differs from %x", h, r.AppHash, res.AppHash)
		}
	}
	return res
}

// try finalizes one tx on a copy of the next block (dropped) and returns its code.
func (n *disputeNet) try(tx []byte) ledger.Code {
	n.c.T.Helper()
	h := n.c.l.Height() + 1
	res, err := n.c.l.FinalizeHashed(h, n.c.Now.Add(time.Second), n.hash(h), [][]byte{tx})
	if err != nil {
		n.c.T.Fatal(err)
	}
	return res.Txs[0].Code
}

// answer is an optimistic answer's evidence: a real receipt signed by the
// machine's session over the commitment hash of proofs of three decode
// steps, the three token IDs they are of and the request's input.
func (n *disputeNet) answer(t testing.TB, i int) ledger.DisputeEvidence {
	t.Helper()
	return n.answerOf(t, i, 3, true)
}

// answerOf is answer with steps tokens (more than commit.StepsPerChunk
// make several proofs); bindTokens false signs no TokensHash, as receipts
// did before they bound the token IDs.
func (n *disputeNet) answerOf(t testing.TB, i, steps int, bindTokens bool) ledger.DisputeEvidence {
	t.Helper()
	var tokens []uint32
	var tops [][]inference.LogProb
	for s := range steps {
		tokens = append(tokens, uint32(5+(s+i)%50))
		tops = append(tops, []inference.LogProb{{ID: s % 64, LogProb: -0.5 - float32(i)/8}, {ID: 64 + s%64, LogProb: -1}, {ID: 128 + s%64, LogProb: -2}, {ID: 192 + s%64, LogProb: -3}})
	}
	ps, err := commit.Build(tops, 256)
	if err != nil {
		t.Fatal(err)
	}
	return n.signAnswer(t, i, tokens, commit.Encode(ps), bindTokens)
}

// signAnswer signs, as the provider, a receipt over exactly these proofs
// (encoded, whatever their framing) and tokens, with request i's input.
func (n *disputeNet) signAnswer(t testing.TB, i int, tokens []uint32, proofs []byte, bindTokens bool) ledger.DisputeEvidence {
	t.Helper()
	in := receipt.EvidenceInput{Prompt: fmt.Sprintf("prompt %d", i), Sampling: terms.Sampling{MaxTokens: len(tokens), Seed: uint64(i), Temperature: 0.7}}
	input, err := receipt.EncodeEvidenceInput(in)
	if err != nil {
		t.Fatal(err)
	}
	ch, th, ic := sha256.Sum256(append([]byte("tenzro/logit-commitment/v1\x00"), proofs...)), receipt.TokensHash(tokens), in.Commitment(n.model[:])
	nonce := sha256.Sum256(fmt.Appendf(nil, "nonce-%d", i))
	mid, buyer := n.m.machineID(), n.buyer.Account()
	r := &receipt.Receipt{ModelID: n.model[:], Engine: "embedded", MachineID: mid[:], ProviderPeer: []byte(n.m.PeerID),
		Nonce: nonce[:16], InputCommitment: ic[:], OutputHash: nonce[:], Units: terms.Units{OutputTokens: uint64(len(tokens))},
		CommitmentHash: ch[:], TokensHash: th[:], FinishReason: "stop", TimeMs: genesisTime.UnixMilli(),
		Payer: buyer[:], Settler: buyer[:]}
	if !bindTokens {
		r.TokensHash = nil
	}
	env, err := receipt.Sign(n.m.Session, r)
	if err != nil {
		t.Fatal(err)
	}
	return ledger.DisputeEvidence{Receipt: env, Proofs: proofs, Tokens: tokens, Input: input}
}

// settle settles one record per evidence (the buyer is its own settler),
// each priced price, and returns the request digests.
func (n *disputeNet) settle(t testing.TB, price uint64, evs ...ledger.DisputeEvidence) []terms.Hash32 {
	t.Helper()
	var recs []receipt.PaymentRecord
	var digests []terms.Hash32
	for _, e := range evs {
		d := requestOf(t, e.Receipt)
		digests = append(digests, d)
		recs = append(recs, ledgertest.Signed(t, n.buyer, receipt.PaymentRecord{Payer: n.buyer.Account(), Provider: n.m.machineID(),
			RequestDigest: d, Price: price, ReceiptHash: sha256.Sum256(e.Receipt), Receipt: e.Receipt, Units: 3,
			ExpiryHeight: n.c.l.Height() + 50}))
	}
	wantSkipped(t, n.block(n.c.sign(n.operator, &ledger.Settlement{Records: recs})).Txs[0], len(recs), nil)
	return digests
}

func (n *disputeNet) declareAll() {
	var txs [][]byte
	for _, v := range n.c.Vals {
		txs = append(txs, n.c.sign(v, &ledger.ModelDeclare{ModelID: n.model, Holds: true}))
	}
	n.block(txs...)
}

func (n *disputeNet) open(digest terms.Hash32, ev ledger.DisputeEvidence) (terms.Hash32, []byte) {
	subj := ledger.DisputeSubject{Kind: ledger.SubjectRecord, Payer: n.buyer.Account(), RequestDigest: digest}
	return ledger.DisputeID(subj), n.c.sign(n.disputer, &ledger.DisputeOpen{Subject: subj, Evidence: ev, Bond: disputeBond})
}

// paidAnswer has every validator declare the model, the machine answer
// call 0 and the buyer settle its record at price: the answer and the
// record's request digest, what a dispute is opened over.
func (n *disputeNet) paidAnswer(t *testing.T, price uint64) (ledger.DisputeEvidence, terms.Hash32) {
	t.Helper()
	n.declareAll()
	ev := n.answer(t, 0)
	return ev, n.settle(t, price, ev)[0]
}

// openAndDraw opens the dispute of the record digest with ev and commits
// the block after the opening, whose hash seeds the committee; it returns
// the dispute's ID and the dispute, its first round drawn.
func (n *disputeNet) openAndDraw(digest terms.Hash32, ev ledger.DisputeEvidence) (terms.Hash32, ledger.Dispute) {
	n.c.T.Helper()
	id, tx := n.open(digest, ev)
	n.block(tx)
	n.block()
	return id, n.dispute(id)
}

func (n *disputeNet) dispute(id terms.Hash32) ledger.Dispute {
	n.c.T.Helper()
	var d ledger.Dispute
	if !n.c.get(ledger.KeyDispute(id), &d) {
		n.c.T.Fatalf("dispute %s not in state", id)
	}
	return d
}

func (n *disputeNet) signerOf(a terms.AccountID) *ledger.Signer {
	for _, v := range n.c.Vals {
		if v.Account() == a {
			return v
		}
	}
	n.c.T.Fatalf("no validator %s", a)
	return nil
}

func salt(a terms.AccountID) terms.Hash32 { return sha256.Sum256(append([]byte("salt"), a[:]...)) }

// vote has every member of the current round commit to its verdict in
// one block, waits for the reveal phase and reveals in another; members
// without a verdict in votes stay silent.
func (n *disputeNet) vote(id terms.Hash32, votes map[terms.AccountID]ledger.Verdict) {
	n.c.T.Helper()
	d := n.dispute(id)
	cur := d.Current()
	var commits, reveals [][]byte
	for _, m := range cur.Members {
		v, ok := votes[m.Validator]
		if !ok {
			continue
		}
		s := n.signerOf(m.Validator)
		commits = append(commits, n.c.sign(s, &ledger.DisputeVote{ID: id, Round: cur.Round,
			Commitment: ledger.VoteCommitment(id, cur.Round, m.Validator, v, salt(m.Validator))}))
	}
	n.block(commits...)
	for n.c.l.Height() < cur.CommitEnd {
		n.block()
	}
	for _, m := range cur.Members {
		if v, ok := votes[m.Validator]; ok {
			reveals = append(reveals, n.c.sign(n.signerOf(m.Validator), &ledger.DisputeVote{ID: id, Round: cur.Round,
				Reveal: &ledger.VoteReveal{Verdict: v, Salt: salt(m.Validator)}}))
		}
	}
	n.block(reveals...)
}

func everyone(d ledger.Dispute, v ledger.Verdict) map[terms.AccountID]ledger.Verdict {
	out := map[terms.AccountID]ledger.Verdict{}
	for _, m := range d.Current().Members {
		out[m.Validator] = v
	}
	return out
}
