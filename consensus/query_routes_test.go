package consensus_test

import (
	"context"
	"strings"
	"testing"

	abci "github.com/cometbft/cometbft/abci/types"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/ledger"
)

// TestQueryRoutesMalformed: over every route, a path whose segments do not
// parse (or are too few or too many) is answered CodeMalformed, never
// internal; a well-formed path of every route is answered code 0.
func TestQueryRoutesMalformed(t *testing.T) {
	c, p, op := newProviderChain(t)
	acc, m, h := op.Account().String(), p.MachineID.String(), strings.Repeat("ab", 32)
	const bad = "zz"
	cases := map[string]struct{ good, malformed []string }{
		"account":         {[]string{"account/" + acc}, []string{"account/" + bad, "account", "account/" + acc + "/1"}},
		"validator":       {[]string{"validator/" + acc}, []string{"validator/" + bad}},
		"provider":        {[]string{"provider/" + m}, []string{"provider/" + bad}},
		"peer":            {[]string{"peer/" + p.PeerID.String()}, []string{"peer", "peer/a/b"}},
		"escrow":          {[]string{"escrow/" + acc + "/" + acc}, []string{"escrow/" + bad + "/" + acc, "escrow/" + acc + "/" + bad}},
		"record":          {[]string{"record/" + acc + "/" + h}, []string{"record/" + bad + "/" + h, "record/" + acc + "/" + bad}},
		"proposal":        {[]string{"proposal/1"}, []string{"proposal/x", "proposal/-1"}},
		"tally":           {[]string{"tally/" + m + "/1"}, []string{"tally/" + bad + "/1", "tally/" + m + "/x"}},
		"name":            {[]string{"name/unbound"}, []string{"name/has space"}},
		"params":          {[]string{"params"}, []string{"params/x"}},
		"meta":            {[]string{"meta"}, []string{"meta/x"}},
		"supply":          {[]string{"supply"}, []string{"supply/x"}},
		"stream":          {[]string{"stream/" + h}, []string{"stream/" + bad}},
		"plan":            {[]string{"plan/" + h}, []string{"plan/" + bad}},
		"dispute":         {[]string{"dispute/" + h}, []string{"dispute/" + bad}},
		"disputeevidence": {[]string{"disputeevidence/" + h}, []string{"disputeevidence/" + bad}},
		"modelholders":    {[]string{"modelholders/" + h}, []string{"modelholders/" + bad}},
		"standing":        {[]string{"standing/" + m}, []string{"standing/" + bad}},
		"names":           {[]string{"names"}, []string{"names/x"}},
		"validators":      {[]string{"validators"}, []string{"validators/x"}},
		"records":         {[]string{"records/" + acc}, []string{"records/" + bad}},
		"escrows":         {[]string{"escrows/" + acc}, []string{"escrows/" + bad}},
		"streams":         {[]string{"streams/" + acc}, []string{"streams/" + bad}},
		"plans":           {[]string{"plans/" + acc}, []string{"plans/" + bad}},
		"disputes":        {[]string{"disputes"}, []string{"disputes/x"}},
		"activedisputes":  {[]string{"activedisputes"}, []string{"activedisputes/x"}},
		"recordrange":     {[]string{"recordrange/" + acc + "/1/2"}, []string{"recordrange/" + bad + "/1/2", "recordrange/" + acc + "/2/1", "recordrange/" + acc + "/0/1", "recordrange/" + acc + "/x/1"}},
		"providerrange":   {[]string{"providerrange/" + m + "/1/2"}, []string{"providerrange/" + bad + "/1/2", "providerrange/" + m + "/1/x"}},
	}
	for _, name := range consensus.RouteNames() {
		if _, ok := cases[name]; !ok {
			t.Errorf("route %q has no case", name)
		}
	}
	cases["unknown"] = struct{ good, malformed []string }{nil, []string{"nope/1", "", "/"}}
	for name, cs := range cases {
		for _, path := range cs.good {
			res, err := c.app.Query(context.Background(), &abci.QueryRequest{Path: path})
			if err != nil || res.Code != 0 {
				t.Errorf("%s: %q: %v code %d %s, want 0", name, path, err, res.GetCode(), res.GetLog())
			}
		}
		for _, path := range cs.malformed {
			res, err := c.app.Query(context.Background(), &abci.QueryRequest{Path: path})
			if err != nil || ledger.Code(res.Code) != ledger.CodeMalformed {
				t.Errorf("%s: %q: %v code %d %s, want malformed", name, path, err, res.GetCode(), res.GetLog())
			}
		}
	}
}
