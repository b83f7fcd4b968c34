package shell

import (
	"context"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func TestPaymentsCommands(t *testing.T) {
	node := newFakeNode(t)
	payer, prov, settler := strings.Repeat("ab", 32), strings.Repeat("cd", 32), strings.Repeat("ef", 32)
	rec := func(h, price, units, fee int, digest string) string {
		return `{"payer":"` + payer + `","provider":"` + prov + `","request_digest":"` + strings.Repeat(digest, 32) +
			`","price":` + itoa(price) + `,"units":` + itoa(units) + `,"settler":"` + settler + `","height":` + itoa(h) +
			`,"fee":` + itoa(fee) + `,"tx_hash":"00"}`
	}
	node.result("tenzro_getPayments", []byte(`{"payer":"`+payer+`","from":3,"to":9,"height":9,"records":[`+
		rec(4, 300, 30, 2, "01")+`,`+rec(7, 150, 15, 2, "02")+`],"count":2,"total":450,"fees":4}`))

	out := mustRun(t, node, "payments payer 0x"+strings.ToUpper(payer)+" 3 9")
	if got := lineWith(t, out, "HEIGHT"); !reflect.DeepEqual(got, []string{"HEIGHT", "REQUEST", "PROVIDER", "SETTLER", "UNITS", "PRICE", "FEE"}) {
		t.Errorf("header %q", got)
	}
	if got := lineWith(t, out, "020202"); !reflect.DeepEqual(got, []string{"7", "020202…020202", "cdcdcd…cdcdcd", "efefef…efefef", "15", "150", "2"}) {
		t.Errorf("second row %q", got)
	}
	if !strings.Contains(out, "2 records settled at heights 3..9, total 450 micro-units, fees 4") {
		t.Errorf("no total line in:\n%s", out)
	}
	calls := node.callsTo("tenzro_getPayments")
	if len(calls) != 1 || string(calls[0].Params) != `{"from":3,"payer":"`+payer+`","to":9}` {
		t.Fatalf("getPayments calls %+v", calls)
	}

	// A provider's view names the payers; heights are optional.
	node.result("tenzro_getPayments", []byte(`{"provider":"`+prov+`","from":1,"to":9,"height":9,"records":[`+
		rec(4, 300, 30, 2, "01")+`],"count":1,"total":300,"fees":2}`))
	out = mustRun(t, node, "payments provider "+prov)
	if got := lineWith(t, out, "HEIGHT"); got[2] != "PAYER" {
		t.Errorf("provider header %q", got)
	}
	if !strings.Contains(out, "provider "+prov+": 1 record settled at heights 1..9, total 300 micro-units") {
		t.Errorf("provider total line in:\n%s", out)
	}
	if calls := node.callsTo("tenzro_getPayments"); string(calls[1].Params) != `{"provider":"`+prov+`"}` {
		t.Errorf("provider params %s", calls[1].Params)
	}

	for cmd, want := range map[string]string{
		"payments payer xyz":                 "64-hex-digit",
		"payments provider zz":               "hex machine ID",
		"payments payer " + payer + " x":     "FROM",
		"payments payer " + payer + " 1 0":   "TO",
		"payments payer " + payer + " 1 2 3": "usage",
		"payments":                           "payer, provider",
	} {
		if _, err := runCmd(t, node, cmd); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error with %q", cmd, err, want)
		}
	}
	if n := len(node.callsTo("tenzro_getPayments")); n != 2 {
		t.Errorf("bad commands reached the node: %d calls", n)
	}

	// The node's refusal is shown as it came.
	node.handle("tenzro_getPayments", func(_ context.Context, _ json.RawMessage) (any, *RPCError) {
		return nil, &RPCError{Code: -32602, Message: "to: height 99 is beyond the latest committed height 9"}
	})
	if _, err := runCmd(t, node, "payments payer "+payer+" 1 99"); err == nil || !strings.Contains(err.Error(), "to: height 99") {
		t.Errorf("node refusal: %v", err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
