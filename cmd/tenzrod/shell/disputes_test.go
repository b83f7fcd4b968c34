package shell

import (
	"strings"
	"testing"
)

func TestDisputeCommands(t *testing.T) {
	node := newFakeNode(t)
	id, prov := strings.Repeat("d1", 32), strings.Repeat("be", 32)
	dispute := `{"id":"` + id + `","provider":"` + prov + `","operator":"` + strings.Repeat("0a", 32) + `","disputer":"` +
		strings.Repeat("0b", 32) + `","model":"` + strings.Repeat("0c", 32) + `","bond":1000,"status":"guilty","open_height":10,` +
		`"resolve_height":18,"slashed":100,"reward":50,"burned":50,"reversed":5000,"rounds":[{"round":1,"draw_height":11,` +
		`"commit_end":15,"reveal_end":20,"members":[{"validator":"` + strings.Repeat("01", 32) + `","power":100,"vote":"guilty"},` +
		`{"validator":"` + strings.Repeat("02", 32) + `","power":100,"vote":"innocent","against":true}]}]}`
	node.result("tenzro_listDisputes", []byte(`{"disputes":[`+dispute+`],"height":30}`))
	node.result("tenzro_getDispute", []byte(`{"dispute":`+dispute+`,"evidence":{},"height":30}`))

	out := mustRun(t, node, "disputes -status guilty -provider 0x"+prov+" -from 5 -to 40")
	if got := strings.Join(lineWith(t, out, "guilty"), " "); !strings.Contains(got, "guilty 10 1 1000 100") {
		t.Errorf("disputes row %q", got)
	}
	calls := node.callsTo("tenzro_listDisputes")
	if len(calls) != 1 || string(calls[0].Params) != `{"from":5,"provider":"`+prov+`","status":"guilty","to":40}` {
		t.Errorf("listDisputes calls %+v", calls)
	}
	mustRun(t, node, "disputes")
	if calls := node.callsTo("tenzro_listDisputes"); len(calls) != 2 || string(calls[1].Params) != `{}` {
		t.Errorf("plain disputes sends %+v, want {}", calls)
	}
	if _, err := runCmd(t, node, "disputes -from x"); err == nil || !strings.Contains(err.Error(), "block height") {
		t.Errorf("bad -from: %v", err)
	}

	out = mustRun(t, node, "dispute "+id)
	if got := strings.Join(lineWith(t, out, "resolved"), " "); got != "resolved height 18: slashed 100 (reward 50, burned 50), payment reversed 5000" {
		t.Errorf("resolved line %q", got)
	}
	if !strings.Contains(out, "innocent (against the verdict)") || !strings.Contains(out, "drawn at 11, commits to 15, reveals to 20") {
		t.Errorf("rounds not shown:\n%s", out)
	}
	if _, err := runCmd(t, node, "dispute 12"); err == nil || !strings.Contains(err.Error(), "64-hex-digit") {
		t.Errorf("bad dispute ID: %v", err)
	}
}
