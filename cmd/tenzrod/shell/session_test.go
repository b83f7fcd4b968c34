package shell

import (
	"strings"
	"testing"
)

func TestSessionCommand(t *testing.T) {
	node := newFakeNode(t)
	stream := strings.Repeat("5a", 32)
	node.result("tenzro_getSession", []byte(`{"id":"s-1","model_id":"`+strings.Repeat("4d", 32)+`","payer":"alice","continuity":"true",`+
		`"jurisdiction":"Europe","turn":4,"failovers":1,`+
		`"primary":{"peer":"12D3KooWPrimaryPrimaryPrimary","machine":"`+strings.Repeat("aa", 32)+`","operator":"`+strings.Repeat("01", 32)+`","region":"DE"},`+
		`"successor":{"peer":"12D3KooWSuccessorSuccessor","machine":"`+strings.Repeat("bb", 32)+`","region":"FR","standby_fee_per_hour":7,"stream_id":"`+stream+`"},`+
		`"stream":{"rate":7,"deposit":7,"claimed":2,"refunded":0,"closed":false},"idle_expires_ms":1000}`))
	out := mustRun(t, node, "session s-1")
	for _, want := range []string{"4 served, 1 failovers", "continuity true, jurisdiction Europe", "in DE", "standby 7 micro-units/h",
		"7 micro-units/h, 2 of 7 claimed, 0 refunded"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if calls := node.callsTo("tenzro_getSession"); len(calls) != 1 || string(calls[0].Params) != `{"id":"s-1"}` {
		t.Errorf("calls %+v", calls)
	}
	node.result("tenzro_getSession", []byte(`{"id":"s-2","continuity":"false","turn":1,"primary":{"peer":"p","machine":"m"},"successor":null,"successor_reason":"continuity_off"}`))
	if out := mustRun(t, node, "session s-2"); !strings.Contains(out, "none (continuity_off)") {
		t.Errorf("no successor:\n%s", out)
	}
	if _, err := runCmd(t, node, "session "+strings.Repeat("x", 65)); err == nil {
		t.Error("a 65-character ID was sent")
	}
}

func TestStreamCommand(t *testing.T) {
	node := newFakeNode(t)
	id := strings.Repeat("5a", 32)
	node.result("tenzro_getStream", []byte(`{"stream":{"id":"`+id+`","payer":"alice","settler":"gw","payee":"`+strings.Repeat("bb", 32)+`",`+
		`"operator":"op","rate":3600,"deposit":3600,"claimed":58,"refunded":3542,"open_height":10,"closed":true,"close_height":90},"balance":0,"height":95}`))
	out := mustRun(t, node, "stream 0x"+strings.ToUpper(id))
	for _, want := range []string{"deposit 3600 = claimed 58 + refunded 3542 + balance 0", "closed at height 90 (opened at 10)", "3600 micro-units/h"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if calls := node.callsTo("tenzro_getStream"); len(calls) != 1 || string(calls[0].Params) != `{"id":"`+id+`"}` {
		t.Errorf("calls %+v", calls)
	}
	if _, err := runCmd(t, node, "stream abc"); err == nil {
		t.Error("a short stream ID was sent")
	}
}
