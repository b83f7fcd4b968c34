package chainapi

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/cmd/tenzrod/shell"
	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
	"github.com/tenzrod/tenzrod/consensus/testnet"
	"github.com/tenzrod/tenzrod/node/rpc"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// paymentsChain is an in-process chain with payment records settled by
// two payers to two registered machines.
type paymentsChain struct {
	net          *testnet.Net
	alice, bob   terms.AccountID
	p, q         *ledgertest.Machine
	hA, hB       int64                                       // heights of the two settlement rounds
	byPayer      map[terms.AccountID][]receipt.PaymentRecord // everything settled
	byProvider   map[string][]receipt.PaymentRecord
	feePerRecord uint64
}

func seededKey(name string) ed25519.PrivateKey { return ledgertest.SeedKey("api-payments-"+name, 0) }

func newPaymentsChain(t *testing.T) *paymentsChain {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	aliceKey, bobKey, opKey := seededKey("alice"), seededKey("bob"), seededKey("op")
	params := ledger.DefaultParams()
	params.MinServingBond, params.FeePerRecord = 1, 2
	dir := t.TempDir()
	net := testnet.StartT(ctx, t, filepath.Join(dir, "net"), testnet.Options{Validators: 1, Params: &params, BlockTime: 50 * time.Millisecond,
		Accounts: []ledger.GenesisAccount{{Account: ledgertest.Account(aliceKey), Balance: 1_000_000},
			{Account: ledgertest.Account(bobKey), Balance: 1_000_000}, {Account: ledgertest.Account(opKey), Balance: 10}}})
	var err error
	c := &paymentsChain{net: net, alice: ledgertest.Account(aliceKey), bob: ledgertest.Account(bobKey), feePerRecord: params.FeePerRecord,
		byPayer: map[terms.AccountID][]receipt.PaymentRecord{}, byProvider: map[string][]receipt.PaymentRecord{}}
	for i, m := range []**ledgertest.Machine{&c.p, &c.q} {
		*m, err = ledgertest.NewMachine(filepath.Join(dir, fmt.Sprint("machine", i)), time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = (*m).Close() })
	}
	nonces := map[terms.AccountID]uint64{}
	submit := func(key ed25519.PrivateKey, payload any) int64 {
		t.Helper()
		s := ledger.NewSigner(key, net.ChainID)
		raw, err := s.SignTx(nonces[s.Account()], payload)
		if err != nil {
			t.Fatal(err)
		}
		nonces[s.Account()]++
		h, err := net.Nodes[0].BroadcastTx(ctx, raw)
		if err != nil {
			t.Fatalf("broadcast %T: %v", payload, err)
		}
		r, err := net.Nodes[0].WaitTx(ctx, h)
		if err != nil || r.Code != 0 {
			t.Fatalf("%T: %v code %d %s", payload, err, r.Code, r.Log)
		}
		return r.Height
	}
	for _, m := range []*ledgertest.Machine{c.p, c.q} {
		reg, err := m.Register(net.ChainID, ledgertest.Account(opKey), 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		submit(opKey, reg)
	}
	submit(aliceKey, &ledger.EscrowFund{Amount: 100_000})
	submit(bobKey, &ledger.EscrowFund{Amount: 100_000})
	n := byte(0)
	settle := func(key ed25519.PrivateKey, prices map[*ledgertest.Machine][]uint64) int64 {
		t.Helper()
		var recs []receipt.PaymentRecord
		for _, m := range []*ledgertest.Machine{c.p, c.q} {
			for _, price := range prices[m] {
				n++
				r := receipt.PaymentRecord{Payer: ledgertest.Account(key), Provider: m.MachineID(), RequestDigest: terms.Hash32{n},
					QuoteDigest: terms.Hash32{0xcc}, Price: price, Units: price / 10, ExpiryHeight: 300}
				if r.Receipt, r.ReceiptHash, r.RequestDigest, err = m.PaidReceipt(r.RequestDigest[:], r.Payer, r.Payer, 0); err != nil {
					t.Fatal(err)
				}
				if err := ledger.NewSigner(key, net.ChainID).SignRecord(&r); err != nil {
					t.Fatal(err)
				}
				recs = append(recs, r)
				c.byPayer[r.Payer] = append(c.byPayer[r.Payer], r)
				c.byProvider[r.Provider.String()] = append(c.byProvider[r.Provider.String()], r)
			}
		}
		return submit(key, &ledger.Settlement{Records: recs})
	}
	c.hA = settle(aliceKey, map[*ledgertest.Machine][]uint64{c.p: {100, 250, 333}})
	// Another payer's records to p, and a later round of alice's.
	settle(bobKey, map[*ledgertest.Machine][]uint64{c.p: {1000}, c.q: {40}})
	c.hB = settle(aliceKey, map[*ledgertest.Machine][]uint64{c.p: {7}, c.q: {500, 60}})
	return c
}

// rpcServer serves Payments on c's node over HTTP.
func rpcServer(t *testing.T, chain *consensus.Node) *httptest.Server {
	s := rpc.NewServer(nil)
	Payments{Node: chain}.RegisterRPC(s)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv
}

// call posts one JSON-RPC call and decodes its result or error.
func call(t *testing.T, srv *httptest.Server, params string) (*PaymentsView, *rpc.Error) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"tenzro_getPayments","params":` + params + `}`
	resp, err := http.Post(srv.URL+"/rpc", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Result *PaymentsView `json:"result"`
		Error  *rpc.Error    `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out.Result, out.Error
}

// wantRecords asserts v lists exactly want (by request digest), each with
// its fields, in height order, and their sums.
func wantRecords(t *testing.T, what string, v *PaymentsView, want []receipt.PaymentRecord, fee uint64) {
	t.Helper()
	if v == nil {
		t.Fatalf("%s: no result", what)
	}
	byDigest := map[string]receipt.PaymentRecord{}
	var total uint64
	for _, r := range want {
		byDigest[r.RequestDigest.String()] = r
		total += r.Price
	}
	if v.Count != len(want) || len(v.Records) != len(want) {
		t.Fatalf("%s: %d records (count %d), want %d", what, len(v.Records), v.Count, len(want))
	}
	for i, got := range v.Records {
		r, ok := byDigest[got.RequestDigest]
		if !ok {
			t.Fatalf("%s: record %s was not settled for it", what, got.RequestDigest)
		}
		delete(byDigest, got.RequestDigest)
		if got.Payer != r.Payer.String() || got.Provider != r.Provider.String() || got.Price != r.Price ||
			got.Units != r.Units || got.Settler != r.Settler.String() || got.Fee != fee || got.Height < v.From || got.Height > v.To {
			t.Fatalf("%s: record %d = %+v, want %+v at heights %d..%d", what, i, got, r, v.From, v.To)
		}
	}
	if !sort.SliceIsSorted(v.Records, func(i, j int) bool { return v.Records[i].Height < v.Records[j].Height }) {
		t.Errorf("%s: records not in height order", what)
	}
	if v.Total != total || v.Fees != fee*uint64(len(want)) {
		t.Fatalf("%s: total %d fees %d, want %d and %d", what, v.Total, v.Fees, total, fee*uint64(len(want)))
	}
}

// TestGetPayments: tenzro_getPayments answers exactly the records settled
// for a payer or to a provider in the height range, with their totals;
// bad params are -32602 naming the param; the shell prints the same.
func TestGetPayments(t *testing.T) {
	c := newPaymentsChain(t)
	srv := rpcServer(t, c.net.Nodes[0])
	latest := c.net.Nodes[0].App().Height()
	p, q := c.p.MachineID().String(), c.q.MachineID().String()
	alice := c.byPayer[c.alice]
	fee := c.feePerRecord

	v, e := call(t, srv, fmt.Sprintf(`{"payer":%q}`, c.alice))
	if e != nil {
		t.Fatal(e)
	}
	wantRecords(t, "alice, default range", v, alice, fee)
	if v.From != 1 || v.To < latest || v.Height < v.To || v.Payer != c.alice.String() {
		t.Fatalf("default range %d..%d at %d, want 1..latest (%d)", v.From, v.To, v.Height, latest)
	}
	v, _ = call(t, srv, fmt.Sprintf(`{"payer":%q,"from":%d,"to":%d}`, c.alice, c.hB, c.hB))
	wantRecords(t, "alice, last round", v, alice[3:], fee)
	v, _ = call(t, srv, fmt.Sprintf(`{"payer":%q,"from":1,"to":%d}`, c.alice, c.hA))
	wantRecords(t, "alice, first round", v, alice[:3], fee)
	v, _ = call(t, srv, fmt.Sprintf(`{"payer":%q,"from":%d}`, c.bob, c.hA))
	wantRecords(t, "bob from the first round on", v, c.byPayer[c.bob], fee)
	v, _ = call(t, srv, fmt.Sprintf(`{"provider":%q,"to":%d}`, p, c.hB))
	wantRecords(t, "provider p", v, c.byProvider[p], fee)
	if v.Provider != p || v.Payer != "" {
		t.Fatalf("provider view names %q / %q", v.Provider, v.Payer)
	}
	v, _ = call(t, srv, fmt.Sprintf(`{"provider":%q,"from":%d,"to":%d}`, q, c.hB, c.hB))
	wantRecords(t, "provider q, last round", v, c.byProvider[q][1:], fee)
	v, _ = call(t, srv, fmt.Sprintf(`{"payer":%q}`, strings.Repeat("0f", 32)))
	wantRecords(t, "a payer with nothing settled", v, nil, fee)

	for params, name := range map[string]string{
		`{}`: "payer, provider",
		fmt.Sprintf(`{"payer":%q,"provider":%q}`, c.alice, p): "payer, provider",
		`{"payer":"xyz"}`:   "payer",
		`{"provider":"zz"}`: "provider",
		fmt.Sprintf(`{"payer":%q,"from":-1}`, c.alice):                     "from",
		fmt.Sprintf(`{"payer":%q,"to":-3}`, c.alice):                       "to",
		fmt.Sprintf(`{"payer":%q,"to":%d}`, c.alice, latest+1000):          "to",
		fmt.Sprintf(`{"payer":%q,"from":%d,"to":%d}`, c.alice, c.hB, c.hA): "from",
		fmt.Sprintf(`{"payer":%q,"account":"x"}`, c.alice):                 "params",
		`[1,2]`: "params",
	} {
		_, e := call(t, srv, params)
		if e == nil || e.Code != rpc.CodeInvalidParams || !strings.HasPrefix(e.Message, name+":") {
			t.Errorf("%s: %+v, want -32602 naming %s", params, e, name)
		}
	}

	// The shell is a client of the same method.
	var out bytes.Buffer
	if err := shell.Run(t.Context(), shell.Config{API: srv.URL, Out: &out, Err: &out},
		fmt.Sprintf("payments provider %s 1 %d", q, c.hB)); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("provider %s: 3 records settled at heights 1..%d, total 600 micro-units, fees 6", q, c.hB)
	if !strings.Contains(out.String(), want) || strings.Count(out.String(), "\n") != 5 {
		t.Fatalf("shell printed:\n%s\nwant a header, 3 rows and %q", out.String(), want)
	}

	// Without a chain the method is unavailable.
	if _, e := call(t, rpcServer(t, nil), fmt.Sprintf(`{"payer":%q}`, c.alice)); e == nil || e.Code != rpc.CodeUnavailable {
		t.Fatalf("no chain: %+v, want %d", e, rpc.CodeUnavailable)
	}
}

func TestPaymentRange(t *testing.T) {
	for _, c := range []struct {
		from, to, latest int64
		wantFrom, wantTo int64
		bad              string
	}{
		{0, 0, 5000, 4001, 5000, ""},
		{0, 0, 10, 1, 10, ""},
		{0, 1500, 5000, 501, 1500, ""},
		{20, 0, 5000, 20, 5000, ""},
		{0, 0, 0, 1, 0, ""}, // no block yet: the empty range
		{1, 0, 200_000, 0, 0, "from, to"},
		{5, 4, 10, 0, 0, "from"},
		{0, 11, 10, 0, 0, "to"},
	} {
		from, to, err := paymentRange(c.from, c.to, c.latest)
		if c.bad != "" {
			var re *rpc.Error
			if !errors.As(err, &re) || re.Code != rpc.CodeInvalidParams || !strings.HasPrefix(re.Message, c.bad+":") {
				t.Errorf("%+v: %v, want -32602 naming %s", c, err, c.bad)
			}
			continue
		}
		if err != nil || from != c.wantFrom || to != c.wantTo {
			t.Errorf("%+v: %d..%d %v", c, from, to, err)
		}
	}
}
