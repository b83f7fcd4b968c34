package shell

import (
	"reflect"
	"sort"
	"testing"
	"time"
)

func complete(c *completer, line string) ([]string, int) {
	cands, n := c.Do([]rune(line), len([]rune(line)))
	out := make([]string, len(cands))
	for i, r := range cands {
		out[i] = string(r)
	}
	sort.Strings(out)
	return out, n
}

func TestCompletion(t *testing.T) {
	node := standardNode(t)
	s, err := newSession(Config{API: node.srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	c := newCompleter(s)
	for line, want := range map[string][]string{
		"":                      {"account ", "dht ", "dispute ", "disputes ", "exit ", "help ", "info ", "metrics ", "payments ", "peers ", "pricefeed ", "providers ", "quote ", "rpc ", "session ", "standing ", "stream ", "tail ", "topics ", "validators "},
		"p":                     {"ayments ", "eers ", "ricefeed ", "roviders "},
		"payments ":             {"payer ", "provider "},
		"rpc tenzro_getPay":     {"ments "},
		"  ta":                  {"il "},
		"dht ":                  {"providers "},
		"dht p":                 {"roviders "},
		"help d":                {"ht ", "ispute ", "isputes "},
		"help dht ":             {"providers "},
		"tail ":                 {"/tenzro/devnet/announce/1 ", "/tenzro/devnet/heartbeat/1 ", "/tenzro/devnet/price-obs/1 ", "announce ", "heartbeat ", "price-obs "},
		"tail h":                {"eartbeat "},
		"tail /tenzro/devnet/p": {"rice-obs/1 "},
		"tail heartbeat ":       nil,
		"tail -n 5 ":            {"/tenzro/devnet/announce/1 ", "/tenzro/devnet/heartbeat/1 ", "/tenzro/devnet/price-obs/1 ", "announce ", "heartbeat ", "price-obs "},
		"tail heartbeat -":      {"-json ", "n "},
		"dht providers ":        {"ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12 ", "ef99887766554433221100ffeeddccbbaa99887766554433221100ffeeddccbb "},
		"dht providers e":       {"f99887766554433221100ffeeddccbbaa99887766554433221100ffeeddccbb "},
		"rpc tenzro_getRo":      {"uterMetrics "},
		"info ":                 nil,
		"zzz":                   nil,
	} {
		got, _ := complete(c, line)
		if len(got) == 0 {
			got = nil
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("complete %q = %q, want %q", line, got, want)
		}
	}
	if _, n := complete(c, "tail hea"); n != 3 {
		t.Errorf("completed length %d, want 3", n)
	}
	// Topics and models are fetched once per TTL.
	if n := len(node.callsTo("tenzro_listTopics")); n != 1 {
		t.Errorf("listTopics called %d times", n)
	}
	c.now = func() time.Time { return time.Now().Add(completionTTL + time.Second) }
	complete(c, "tail ")
	if n := len(node.callsTo("tenzro_listTopics")); n != 2 {
		t.Errorf("listTopics called %d times after the TTL", n)
	}
}

func TestCompletionWithoutNode(t *testing.T) {
	s, err := newSession(Config{API: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	c := newCompleter(s)
	if got, _ := complete(c, "tail "); !reflect.DeepEqual(got, []string{"announce ", "heartbeat ", "price-obs "}) {
		t.Errorf("topics without a node: %q", got)
	}
	if got, _ := complete(c, "dht providers "); len(got) != 0 {
		t.Errorf("models without a node: %q", got)
	}
}
