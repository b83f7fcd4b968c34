package shell

import (
	"reflect"
	"strings"
	"testing"
)

func TestChainCommands(t *testing.T) {
	node := newFakeNode(t)
	acct := strings.Repeat("ab", 32)
	node.result("tenzro_getAccount", []byte(`{"account":"`+acct+`","exists":true,"balance":1000000,"nonce":3,"height":42,`+
		`"escrows":[{"balance":700,"settler":"`+strings.Repeat("cd", 32)+`","pending":200,"unlock_height":99}],`+
		`"streams":[{"id":"`+strings.Repeat("ee", 32)+`","payee":"`+strings.Repeat("ff", 32)+`","rate":3600,"deposit":500,"claimed":20}],`+
		`"plans":[{"id":"`+strings.Repeat("aa", 32)+`","total":900,"legs":[{},{}],"deadline":77,"status":"open"}]}`))
	node.result("tenzro_listValidators", []byte(`[{"operator":"`+strings.Repeat("01", 32)+`","cons_pub_key":"AAEC","stake":300000000,"power":300},`+
		`{"operator":"`+strings.Repeat("02", 32)+`","cons_pub_key":"AwQF","stake":100000000,"power":100}]`))
	node.result("tenzro_getStanding", []byte(`{"machine_id":"beef","height":9,"standing_bp":7550,"bond_live":true,"bond":500,`+
		`"min_serving_bond":100,"bonded_bp":5000,"avail_bp":2550,"window_hours":24,"available_hours":12}`))

	node.result("tenzro_nodeInfo", []byte(`{"peer_id":"p","role":"gateway","chain_id":"tenzro-devnet","height":17}`))
	if got := lineWith(t, mustRun(t, node, "info"), "chain"); !reflect.DeepEqual(got, []string{"chain", "tenzro-devnet", "at", "height", "17"}) {
		t.Errorf("info chain line %q", got)
	}

	out := mustRun(t, node, "account 0x"+strings.ToUpper(acct))
	if got := lineWith(t, out, "balance"); !reflect.DeepEqual(got, []string{"balance", "1000000", "micro-units"}) {
		t.Errorf("balance line %q", got)
	}
	if got := lineWith(t, out, "nonce"); !reflect.DeepEqual(got, []string{"nonce", "3"}) {
		t.Errorf("nonce line %q", got)
	}
	if got := strings.Join(lineWith(t, out, "escrow"), " "); got != "escrow 700 micro-units with settler "+strings.Repeat("cd", 32)+" (200 withdrawing, unlocks at height 99)" {
		t.Errorf("escrow line %q", got)
	}
	if got := strings.Join(lineWith(t, out, "stream"), " "); !strings.Contains(got, "3600 micro-units/h, 20 of 500 claimed") {
		t.Errorf("stream line %q", got)
	}
	if got := strings.Join(lineWith(t, out, "plan"), " "); !strings.Contains(got, "900 micro-units to 2 legs, undecided (payer may abort after height 77)") {
		t.Errorf("plan line %q", got)
	}
	if calls := node.callsTo("tenzro_getAccount"); len(calls) != 1 || !strings.Contains(string(calls[0].Params), `"account":"`+acct+`"`) {
		t.Errorf("getAccount calls %+v", calls)
	}
	if _, err := runCmd(t, node, "account xyz"); err == nil || !strings.Contains(err.Error(), "64-hex-digit") {
		t.Errorf("bad account: %v", err)
	}

	out = mustRun(t, node, "validators")
	if got := lineWith(t, out, "010101"); !reflect.DeepEqual(got, []string{"010101…010101", "000102", "300000000", "300", "75.0%"}) {
		t.Errorf("validator row %q", got)
	}
	if got := lineWith(t, out, "total power"); !reflect.DeepEqual(got, []string{"2", "validators,", "total", "power", "400;", ">", "2/3", "is", "267"}) {
		t.Errorf("summary %q", got)
	}

	out = mustRun(t, node, "standing beef")
	if got := lineWith(t, out, "standing"); !reflect.DeepEqual(got[:2], []string{"standing", "75.50%"}) {
		t.Errorf("standing line %q", got)
	}
	if got := lineWith(t, out, "availability"); !reflect.DeepEqual(got[2], "25.50%") || !strings.Contains(out, "12 of the last 24 hours") {
		t.Errorf("availability line %q", got)
	}
	if calls := node.callsTo("tenzro_getStanding"); len(calls) != 1 || string(calls[0].Params) != `{"machine_id":"beef"}` {
		t.Errorf("getStanding calls %+v", calls)
	}
	if strings.Contains(out, "barred") {
		t.Errorf("a machine not barred shown barred: %q", out)
	}
	node.result("tenzro_getStanding", []byte(`{"machine_id":"beef","height":9,"standing_bp":0,"bond_live":true,"bond":450,`+
		`"min_serving_bond":100,"barred":true,"convicted_at":7,"rebond_due":50}`))
	out = mustRun(t, node, "standing beef")
	if got := lineWith(t, out, "barred"); !strings.Contains(strings.Join(got, " "), "convicted at height 7") || got[len(got)-4] != "50" {
		t.Errorf("barred line %q", got)
	}
}
