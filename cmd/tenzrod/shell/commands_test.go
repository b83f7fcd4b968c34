package shell

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestInfoShowsKeyBackendProminently(t *testing.T) {
	for backend, label := range map[string]string{
		"software": "(software key — not hardware)",
		"tpm-sim":  "(TPM simulator)",
		"tpm":      "(TPM)",
	} {
		node := newFakeNode(t)
		info := strings.Replace(string(fixture(t, "info.json")), `"software"`, `"`+backend+`"`, 1)
		node.result("tenzro_nodeInfo", []byte(info))
		out := mustRun(t, node, "info")
		got := lineWith(t, out, "machine_id")
		want := []string{"machine_id", "3fa2c1d49b7e0a5f6c8d2e1b4a9f7c3d5e6f8a0b1c2d3e4f5a6b7c8d9e0f1a2b"}
		want = append(want, strings.Fields(label)...)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: machine_id line %q, want %q", backend, got, want)
		}
		if got := lineWith(t, out, "key_backend"); got[1] != backend {
			t.Errorf("key_backend line %q", got)
		}
	}
	out := mustRun(t, standardNode(t), "info")
	for _, want := range [][]string{
		{"peer_id", "12D3KooWQYhTNQdmr3ArTeUHRYzFg94BKyTkoWBDWez9kSCVe2Xo"},
		{"role", "provider"},
		{"network", "devnet"},
		{"version", "v0.1.0-dev"},
		{"listen_addrs", "/ip4/127.0.0.1/tcp/4001"},
		{"/ip4/127.0.0.1/udp/4001/quic-v1"},
	} {
		if got := lineWith(t, out, want[len(want)-1]); !reflect.DeepEqual(got, want) {
			t.Errorf("line %q, want %q", got, want)
		}
	}
	if a, b := columnStart(t, out, "provider"), columnStart(t, out, "/ip4/127.0.0.1/udp/4001/quic-v1"); a != b {
		t.Errorf("values not aligned (%d vs %d):\n%s", a, b, out)
	}
}

func TestPeersTable(t *testing.T) {
	out := mustRun(t, standardNode(t), "peers")
	if got := lineWith(t, out, "PEER"); !reflect.DeepEqual(got, []string{"PEER", "DIRECTION", "LATENCY", "ADDRS"}) {
		t.Errorf("header %q", got)
	}
	rows := map[string][]string{
		"12D3KooWRBhw": {"12D3KooWRBhwfeP2Y4TCx1SM6s9rUoHhR5STiGwxBhgFRcw3UERE", "outbound", "1.5ms", "/ip4/127.0.0.1/tcp/4002"},
		"12D3KooWAbzQ": {"12D3KooWAbzQ1ccmRcR4yJQ3b8pZ6hGmP9jX2Vv8kF7sDqWnErTy", "inbound", "1.2s", "/ip4/127.0.0.1/tcp/4003"},
		"12D3KooWZz9y": {"12D3KooWZz9yXw8vU7tS6rQ5pO4nM3lK2jI1hG0fEdCbA9Zy8Xw7", "inbound", "-", "-"},
		"udp/4003":     {"/ip4/127.0.0.1/udp/4003/quic-v1"},
		"peers":        {"3", "peers"},
	}
	for key, want := range rows {
		if got := lineWith(t, out, key); !reflect.DeepEqual(got, want) {
			t.Errorf("row %q, want %q", got, want)
		}
	}
	if a, b := columnStart(t, out, "ADDRS"), columnStart(t, out, "/ip4/127.0.0.1/udp/4003/quic-v1"); a != b {
		t.Errorf("addresses not aligned under ADDRS:\n%s", out)
	}
	// Sorted by peer ID.
	if strings.Index(out, "12D3KooWAbzQ") > strings.Index(out, "12D3KooWRBhw") {
		t.Errorf("peers not sorted:\n%s", out)
	}
}

func TestTopicsTable(t *testing.T) {
	out := mustRun(t, standardNode(t), "topics")
	for key, want := range map[string][]string{
		"TOPIC":      {"TOPIC", "PEERS", "ACCEPTED", "IGNORED", "REJECTED"},
		"heartbeat/": {"/tenzro/devnet/heartbeat/1", "4", "1520", "12", "3"},
		"announce/":  {"/tenzro/devnet/announce/1", "4", "8", "0", "1"},
		"price-obs/": {"/tenzro/devnet/price-obs/1", "2", "40", "2", "0"},
	} {
		if got := lineWith(t, out, key); !reflect.DeepEqual(got, want) {
			t.Errorf("row %q, want %q", got, want)
		}
	}
	if a, b := columnStart(t, out, "REJECTED"), columnStart(t, out, "1520"); b < columnStart(t, out, "ACCEPTED") || a <= b {
		t.Errorf("columns misaligned:\n%s", out)
	}
}

func TestProvidersTable(t *testing.T) {
	node := standardNode(t)
	out := mustRun(t, node, "providers")
	for key, want := range map[string][]string{
		"PEER":     {"PEER", "MACHINE", "BACKEND", "REGION", "HW", "TEE", "STATUS", "BREAKER", "AGE", "LOAD", "QUEUE", "MODELS"},
		"w3UERE":   {"12D3Ko…w3UERE", "9c0ffee1…", "tpm-sim", "EU", "cpu-avx2", "(claimed)", "sev-snp:a0a1a2a3…", "up", "-", "840ms", "1/4", "0", "tiny-llama(warm),ef998877…(cold)"},
		"WnErTy":   {"12D3Ko…WnErTy", "01234567…", "software", "US", "gpu-a100", "(claimed)", "-", "down", "open", "9.4s", "0/2", "3", "tiny-llama(warming)"},
		"Zy8Xw7":   {"12D3Ko…Zy8Xw7", "-", "tpm", "-", "-", "-", "degraded", "-", "never", "0/0", "0", "-"},
		"provider": {"3", "providers:", "1", "up,", "1", "degraded,", "1", "down"},
	} {
		if got := lineWith(t, out, key); !reflect.DeepEqual(got, want) {
			t.Errorf("row %q,\n want %q", got, want)
		}
	}
	if strings.Contains(out, "ENGINE") {
		t.Errorf("model detail shown without -v:\n%s", out)
	}
	out = mustRun(t, node, "providers -v")
	if got, want := lineWith(t, out, "upstream"), []string{"12D3Ko…w3UERE", "ef998877…", "-", "upstream", "cold", "5", "15", "2", "0", "0", "0", "none", "-"}; !reflect.DeepEqual(got, want) {
		t.Errorf("model row %q,\n want %q", got, want)
	}
	if got := lineWith(t, out, "none,receipt"); !reflect.DeepEqual(got[len(got)-2:], []string{"none,receipt", "77aa88bb…"}) {
		t.Errorf("model row %q", got)
	}
	want := []string{"12D3Ko…w3UERE", "sev-snp", "VCEK", "Milan", "a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebfc0c1c2c3c4c5c6c7c8c9cacbcccdcecf"}
	if got := lineWith(t, out, "VCEK"); !reflect.DeepEqual(got, want) {
		t.Errorf("attested row %q,\n want %q", got, want)
	}
	if strings.Count(out, "VCEK") != 1 {
		t.Errorf("providers without an attestation listed as attested:\n%s", out)
	}
}

func TestDHTProviders(t *testing.T) {
	node := standardNode(t)
	const model = "AB12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12"
	out := mustRun(t, node, "dht providers "+model)
	calls := node.callsTo("tenzro_findProviders")
	if len(calls) != 1 || string(calls[0].Params) != `{"model":"`+strings.ToLower(model)+`"}` {
		t.Fatalf("calls %+v", calls)
	}
	for key, want := range map[string][]string{
		"RBhw":     {"12D3KooWRBhwfeP2Y4TCx1SM6s9rUoHhR5STiGwxBhgFRcw3UERE", "/ip4/127.0.0.1/tcp/4002"},
		"quic-v1":  {"/ip4/127.0.0.1/udp/4002/quic-v1"},
		"AbzQ1ccm": {"12D3KooWAbzQ1ccmRcR4yJQ3b8pZ6hGmP9jX2Vv8kF7sDqWnErTy", "-"},
	} {
		if got := lineWith(t, out, key); !reflect.DeepEqual(got, want) {
			t.Errorf("row %q, want %q", got, want)
		}
	}
	if _, err := runCmd(t, node, "dht providers not-hex"); err == nil || !strings.Contains(err.Error(), `"not-hex"`) {
		t.Errorf("bad model ID: err %v", err)
	}
	if len(node.callsTo("tenzro_findProviders")) != 1 {
		t.Error("a bad model ID reached the node")
	}
	node.result("tenzro_findProviders", []byte(`[]`))
	if out := mustRun(t, node, "dht providers abcd"); !strings.Contains(out, "no providers of abcd") {
		t.Errorf("empty result: %q", out)
	}
}

func TestJSONFlagPrintsRawResult(t *testing.T) {
	node := standardNode(t)
	for _, cmd := range []string{"info --json", "peers --json", "topics -json", "providers --json", "dht providers --json abcd"} {
		out := mustRun(t, node, cmd)
		if strings.Count(out, "\n") != 1 || !json.Valid([]byte(out)) {
			t.Errorf("%q: not one line of JSON: %q", cmd, out)
		}
		if strings.Contains(out, "PEER") || strings.Contains(out, "(TPM") {
			t.Errorf("%q: printed a table: %q", cmd, out)
		}
	}
	out := mustRun(t, node, "topics --json")
	var got, want any
	_ = json.Unmarshal([]byte(out), &got)
	_ = json.Unmarshal(fixture(t, "topics.json"), &want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("--json result differs from the node's:\n%s", out)
	}
}

func TestRPCCommand(t *testing.T) {
	node := standardNode(t)
	node.result("tenzro_getRouterMetrics", []byte(`{"requests_routed":12,"hedges":{"dispatched":3,"won":1}}`))
	cases := map[string]string{
		`rpc tenzro_getRouterMetrics {"window": "1m", "n": [1, -2]}`:      `{"window": "1m", "n": [1, -2]}`,
		`rpc tenzro_getRouterMetrics '{"window":"1m"}'`:                   `{"window":"1m"}`,
		`rpc tenzro_getRouterMetrics`:                                     ``,
		`rpc --json tenzro_getRouterMetrics ["a b"]`:                      `["a b"]`,
		`rpc tenzro_getRouterMetrics {"flag": "--json"} --json`:           `{"flag": "--json"}`,
		`rpc tenzro_getRouterMetrics {"s": "it's \"quoted\"", "x": null}`: `{"s": "it's \"quoted\"", "x": null}`,
	}
	for line, params := range cases {
		out := mustRun(t, node, line)
		calls := node.callsTo("tenzro_getRouterMetrics")
		if params != "" {
			var buf bytes.Buffer
			_ = json.Compact(&buf, []byte(params))
			params = buf.String()
		}
		if got := string(calls[len(calls)-1].Params); got != params {
			t.Errorf("%s: sent params %s, want %s", line, got, params)
		}
		if strings.Contains(line, "--json") && !strings.HasSuffix(line, `"--json"}`) {
			if out != `{"requests_routed":12,"hedges":{"dispatched":3,"won":1}}`+"\n" {
				t.Errorf("%s: %q", line, out)
			}
		} else if !strings.Contains(out, "  \"hedges\": {\n    \"dispatched\": 3,") {
			t.Errorf("%s: result not pretty-printed: %q", line, out)
		}
	}
	for line, want := range map[string]string{
		`rpc tenzro_getRouterMetrics {"window":`: "not valid JSON",
		`rpc tenzro_getRouterMetrics 42`:         "must be an object or an array",
		`rpc`:                                    "usage: rpc METHOD [JSON-PARAMS]",
	} {
		if _, err := runCmd(t, node, line); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err %v, want %q", line, err, want)
		}
	}
}

func TestHelp(t *testing.T) {
	node := newFakeNode(t)
	out := mustRun(t, node, "help")
	for _, c := range commandTable().cmds {
		if c.hidden {
			continue
		}
		if got := lineWith(t, out, c.summary); got[0] != strings.Fields(c.name)[0] {
			t.Errorf("help line %q for %q", got, c.name)
		}
	}
	out = mustRun(t, node, "help tail")
	for _, want := range []string{"usage: tail TOPIC [-n N] [--json]", "-n N", "stop after N events", "--json"} {
		if !strings.Contains(out, want) {
			t.Errorf("help tail lacks %q:\n%s", want, out)
		}
	}
	if out := mustRun(t, node, "help dht"); !strings.Contains(out, "dht providers MODEL [--json]") {
		t.Errorf("help dht: %q", out)
	}
	if out := mustRun(t, node, "help dht providers"); !strings.Contains(out, "JSON-RPC method: tenzro_findProviders") {
		t.Errorf("help dht providers: %q", out)
	}
	if _, err := runCmd(t, node, "help nope"); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("help nope: %v", err)
	}
	if len(node.calls) != 0 {
		t.Errorf("help called the node: %+v", node.calls)
	}
}

func TestParseErrors(t *testing.T) {
	reg := commandTable()
	for line, want := range map[string]string{
		"frobnicate":          `unknown command "frobnicate"`,
		"dht":                 `unknown command "dht": "dht" has providers`,
		"dht lookup x":        `unknown command "dht lookup": "dht" has providers`,
		"peers extra":         "usage: peers [--json]",
		"tail":                "usage: tail TOPIC [-n N] [--json]",
		"tail heartbeat -x":   `unknown flag "-x" for "tail"`,
		"tail heartbeat -n":   "flag -n needs a value N",
		`tail "heartbeat`:     "unterminated",
		"help --json":         `unknown flag "--json" for "help"`,
		"exit --json":         `unknown flag "--json" for "exit"`,
		"providers -v -n 3":   `unknown flag "-n" for "providers"`,
		"dht providers a b c": "usage: dht providers MODEL [--json]",
	} {
		_, err := reg.parse(line)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err %v, want %q", line, err, want)
		}
	}
	inv, err := reg.parse(`tail  "/tenzro/devnet/heartbeat/1" --n=5 --json`)
	if err != nil || inv.cmd.name != "tail" || inv.arg(0) != "/tenzro/devnet/heartbeat/1" || !inv.json || inv.flags["n"] != "5" {
		t.Errorf("parse: %+v, %v", inv, err)
	}
	if inv, err := reg.parse("   "); inv != nil || err != nil {
		t.Errorf("blank line: %+v, %v", inv, err)
	}
}

func TestTokenize(t *testing.T) {
	toks, err := tokenize(`a 'b c' "d \"e\" \\" f\ g {"k":"v"}`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tk := range toks {
		got = append(got, tk.text)
	}
	want := []string{"a", "b c", `d "e" \`, "f g", `{k:v}`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("tokens %q, want %q", got, want)
	}
	if last := toks[len(toks)-1]; last.start != 26 || last.end != 35 {
		t.Errorf("span of %q: [%d,%d)", last.text, last.start, last.end)
	}
}
