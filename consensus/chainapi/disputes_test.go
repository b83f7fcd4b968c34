package chainapi

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
	"github.com/tenzrod/tenzrod/consensus/testnet"
	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/inference/commit"
	"github.com/tenzrod/tenzrod/node/rpc"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// TestDisputeOnChain runs a dispute on a real 4-validator CometBFT chain:
// the committee is seeded by the hash of the block after the opening,
// convicts by commit-then-reveal within the verdict limit, the bond is
// slashed; tenzro_getDispute and tenzro_listDisputes show it with every
// filter.
func TestDisputeOnChain(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	buyerKey, opKey, disKey := seededKey("dispute-buyer"), seededKey("dispute-op"), seededKey("disputer")
	params := ledger.DefaultParams()
	params.MinServingBond, params.DisputeMinBond = 1000, 100
	params.FeePerRecord = 3 // a conviction refunds the price, fee included
	params.DisputeCommittee, params.DisputeVerdictBlocks, params.DisputeWindowBlocks = 3, 20, 200
	dir := t.TempDir()
	net := testnet.StartT(ctx, t, filepath.Join(dir, "net"), testnet.Options{Validators: 4, Params: &params, BlockTime: 100 * time.Millisecond,
		Accounts: []ledger.GenesisAccount{{Account: ledgertest.Account(buyerKey), Balance: 1_000_000},
			{Account: ledgertest.Account(opKey), Balance: 1_000_000}, {Account: ledgertest.Account(disKey), Balance: 1_000_000}}})
	node := net.Nodes[0]
	nonces := map[terms.AccountID]uint64{}
	type signed struct {
		key     ed25519.PrivateKey
		payload any
	}
	// sendAll broadcasts every transaction, then waits for each to commit
	// (members vote at once, as their nodes would).
	sendAll := func(txs ...signed) int64 {
		t.Helper()
		var hashes [][32]byte
		for _, tx := range txs {
			s := ledger.NewSigner(tx.key, net.ChainID)
			raw, err := s.SignTx(nonces[s.Account()], tx.payload)
			if err != nil {
				t.Fatal(err)
			}
			nonces[s.Account()]++
			h, err := node.BroadcastTx(ctx, raw)
			if err != nil {
				t.Fatalf("broadcast %T: %v", tx.payload, err)
			}
			hashes = append(hashes, h)
		}
		var height int64
		for i, h := range hashes {
			r, err := node.WaitTx(ctx, h)
			if err != nil || r.Code != 0 {
				t.Fatalf("%T: %v code %d %s", txs[i].payload, err, r.Code, r.Log)
			}
			height = max(height, r.Height)
		}
		return height
	}
	send := func(key ed25519.PrivateKey, payload any) int64 { return sendAll(signed{key, payload}) }
	m, err := ledgertest.NewMachine(filepath.Join(dir, "machine"), time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	reg, err := m.Register(net.ChainID, ledgertest.Account(opKey), 100_000, 0)
	if err != nil {
		t.Fatal(err)
	}
	send(opKey, reg)
	send(buyerKey, &ledger.EscrowFund{Amount: 100_000})
	model := terms.Hash32{0xd1}
	var declares []signed
	for _, v := range net.Operators {
		declares = append(declares, signed{v, &ledger.ModelDeclare{ModelID: model, Holds: true}})
	}
	sendAll(declares...)

	// An optimistic answer: a real receipt signing the proofs' commitment
	// hash, the two token IDs they are of and the input.
	mid, buyer := m.MachineID(), ledgertest.Account(buyerKey)
	tokens := []uint32{1, 2}
	ps, err := commit.Build([][]inference.LogProb{
		{{ID: 1, LogProb: -0.1}, {ID: 3, LogProb: -2}, {ID: 4, LogProb: -3}, {ID: 5, LogProb: -4}},
		{{ID: 2, LogProb: -0.2}, {ID: 3, LogProb: -2}, {ID: 4, LogProb: -3}, {ID: 5, LogProb: -4}}}, 16)
	if err != nil {
		t.Fatal(err)
	}
	in := receipt.EvidenceInput{Prompt: "dispute on chain", Sampling: terms.Sampling{MaxTokens: 2}}
	input, err := receipt.EncodeEvidenceInput(in)
	if err != nil {
		t.Fatal(err)
	}
	ch, th, ic := commit.Hash(ps), receipt.TokensHash(tokens), in.Commitment(model[:])
	nonce := sha256.Sum256([]byte("dispute-on-chain"))
	env, err := receipt.Sign(m.Session, &receipt.Receipt{ModelID: model[:], Engine: "embedded", MachineID: mid[:],
		ProviderPeer: []byte(m.PeerID), Nonce: nonce[:16], InputCommitment: ic[:], OutputHash: nonce[:],
		Units: terms.Units{OutputTokens: 2}, CommitmentHash: ch[:], TokensHash: th[:], FinishReason: "stop", TimeMs: time.Now().UnixMilli(),
		Payer: buyer[:], Settler: buyer[:]})
	if err != nil {
		t.Fatal(err)
	}
	rd := terms.Hash32(receipt.RequestDigest(nonce[:16], ic, model[:]))
	rec := receipt.PaymentRecord{Payer: ledgertest.Account(buyerKey), Provider: mid, RequestDigest: rd, Price: 5000,
		Receipt: env, ReceiptHash: sha256.Sum256(env), ExpiryHeight: node.App().Height() + 100}
	if err := ledger.NewSigner(buyerKey, net.ChainID).SignRecord(&rec); err != nil {
		t.Fatal(err)
	}
	settled := send(opKey, &ledger.Settlement{Records: []receipt.PaymentRecord{rec}})
	subj := ledger.DisputeSubject{Kind: ledger.SubjectRecord, Payer: ledgertest.Account(buyerKey), RequestDigest: rd}
	id := ledger.DisputeID(subj)
	opened := send(disKey, &ledger.DisputeOpen{Subject: subj, Bond: 1000,
		Evidence: ledger.DisputeEvidence{Receipt: env, Proofs: commit.Encode(ps), Tokens: tokens, Input: input}})

	var d ledger.Dispute
	waitDispute := func(what string, ok func(ledger.Dispute) bool) {
		t.Helper()
		for {
			var found bool
			if d, found, err = node.Dispute(ctx, id); err == nil && found && ok(d) {
				return
			}
			select {
			case <-ctx.Done():
				t.Fatalf("waiting for %s: %v (dispute %+v)", what, ctx.Err(), d)
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	waitDispute("the committee", func(d ledger.Dispute) bool { return d.Status == ledger.DisputeVoting })
	cur := d.Current()
	if cur.DrawHeight != opened+1 || len(cur.Members) != 3 {
		t.Fatalf("committee drawn at %d (dispute opened at %d): %+v", cur.DrawHeight, opened, cur)
	}
	// The seed is the hash of the block after the opening, as CometBFT made it.
	blk, err := node.Client().Block(ctx, &cur.DrawHeight)
	if err != nil {
		t.Fatal(err)
	}
	if string(blk.BlockID.Hash) != string(cur.Seed[:]) {
		t.Fatalf("seed %s, block %d hash %x", cur.Seed, cur.DrawHeight, blk.BlockID.Hash)
	}
	keyOf := map[terms.AccountID]ed25519.PrivateKey{}
	for _, k := range net.Operators {
		keyOf[ledgertest.Account(k)] = k
	}
	for _, mem := range cur.Members {
		ds, err := node.Duties(ctx, mem.Validator)
		if err != nil || len(ds) != 1 || ds[0].Dispute != id || ds[0].Action != ledger.DutyCommit || ds[0].Model != model || ds[0].Provider != mid {
			t.Fatalf("duties of member %s: %+v %v", mem.Validator, ds, err)
		}
	}
	var salts []terms.Hash32
	var commits []signed
	for i, mem := range cur.Members {
		salts = append(salts, sha256.Sum256([]byte{byte(i)}))
		commits = append(commits, signed{keyOf[mem.Validator], &ledger.DisputeVote{ID: id, Round: 1,
			Commitment: ledger.VoteCommitment(id, 1, mem.Validator, ledger.VerdictGuilty, salts[i])}})
	}
	sendAll(commits...)
	if err := net.WaitHeight(ctx, cur.CommitEnd+1); err != nil {
		t.Fatal(err)
	}
	// Equal stakes: two reveals of three are 2/3 and decide at once; the
	// third member's reveal comes too late.
	var reveals []signed
	for i, mem := range cur.Members[:2] {
		reveals = append(reveals, signed{keyOf[mem.Validator], &ledger.DisputeVote{ID: id, Round: 1,
			Reveal: &ledger.VoteReveal{Verdict: ledger.VerdictGuilty, Salt: salts[i]}}})
	}
	sendAll(reveals...)
	late, err := ledger.NewSigner(keyOf[cur.Members[2].Validator], net.ChainID).SignTx(nonces[cur.Members[2].Validator],
		&ledger.DisputeVote{ID: id, Round: 1, Reveal: &ledger.VoteReveal{Verdict: ledger.VerdictGuilty, Salt: salts[2]}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := node.BroadcastTx(ctx, late); ledger.CodeOf(err) != ledger.CodeWrongPhase {
		t.Fatalf("a reveal after the verdict: %v", err)
	}
	waitDispute("the verdict", func(d ledger.Dispute) bool { return d.Status.Resolved() })
	if d.Status != ledger.DisputeGuilty || d.ResolveHeight > cur.RevealEnd || d.Slashed != ledger.DisputeSlash(params, 100_000, d.Credited) {
		t.Fatalf("verdict: %+v (reveal limit %d)", d, cur.RevealEnd)
	}
	t.Logf("dispute opened at %d, committee at %d, verdict at %d: %d blocks from dispute to verdict (limit %d)",
		opened, cur.DrawHeight, d.ResolveHeight, d.ResolveHeight-opened, params.DisputeVerdictBlocks)
	if d.Reversed != rec.Price {
		t.Fatalf("the conviction reversed %d, the buyer paid %d", d.Reversed, rec.Price)
	}
	checkReversalPacks(t, ctx, net, buyer, settled, d)

	s := rpc.NewServer(nil)
	Disputes{Node: node}.RegisterRPC(s)
	srv := newTestServer(t, s)
	var got DisputeView
	if e := rpcDo(t, srv, "tenzro_getDispute", `{"id":"`+id.String()+`"}`, &got); e != nil || got.Dispute.ID != id ||
		got.Dispute.Status != ledger.DisputeGuilty || string(got.Evidence.Receipt) != string(env) {
		t.Fatalf("tenzro_getDispute: %v %+v", e, got.Dispute)
	}
	for params, want := range map[string]int{
		`{}`: 1, `{"status":"guilty"}`: 1, `{"status":"voting"}`: 0, `{"provider":"` + mid.String() + `"}`: 1,
		`{"provider":"` + strings.Repeat("01", 32) + `"}`: 0, `{"from":` + itoa(opened) + `,"to":` + itoa(opened) + `}`: 1,
		`{"from":` + itoa(opened+1) + `}`: 0,
	} {
		var v struct {
			Disputes []ledger.Dispute `json:"disputes"`
		}
		if e := rpcDo(t, srv, "tenzro_listDisputes", params, &v); e != nil || len(v.Disputes) != want {
			t.Errorf("tenzro_listDisputes %s: %v, %d disputes, want %d", params, e, len(v.Disputes), want)
		}
	}
	for method, params := range map[string]string{
		"tenzro_listDisputes": `{"status":"won"}`, "tenzro_getDispute": `{"id":"zz"}`,
	} {
		if e := rpcDo(t, srv, method, params, nil); e == nil || e.Code != rpc.CodeInvalidParams {
			t.Errorf("%s %s: %v, want invalid params", method, params, e)
		}
	}
	if e := rpcDo(t, srv, "tenzro_listDisputes", `{"from":5,"to":2}`, nil); e == nil || e.Code != rpc.CodeInvalidParams {
		t.Errorf("from after to: %v", e)
	}
	if e := rpcDo(t, srv, "tenzro_getDispute", `{"id":"`+strings.Repeat("ab", 32)+`"}`, nil); e == nil || e.Code != rpc.CodeInvalidParams {
		t.Errorf("unknown dispute: %v", e)
	}
}

func itoa(v int64) string { b, _ := json.Marshal(v); return string(b) }

func newTestServer(t *testing.T, h http.Handler) string {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// rpcDo posts one JSON-RPC call to url and decodes its result into v.
func rpcDo(t *testing.T, url, method, params string, v any) *rpc.Error {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":` + params + `}`
	resp, err := http.Post(url+"/rpc", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Result json.RawMessage `json:"result"`
		Error  *rpc.Error      `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	if out.Error == nil && v != nil {
		if err := json.Unmarshal(out.Result, v); err != nil {
			t.Fatal(err)
		}
	}
	return out.Error
}
