package main

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const tenzroChunk = `{"choices":[{"delta":{},"finish_reason":"length"}],"tenzro":{"provider":{"peer_id":"P","machine_id":"M"},` +
	`"receipt":{"receipt":{"nonce":"abcd"}},"payment":{"signed":{"payer":"B","settler":"G","provider_machine":"M","request_digest":"D","price":7}},"attempts":2,"continued":true}}`

func sse(events ...string) string {
	var b strings.Builder
	for _, e := range events {
		b.WriteString("data: " + e + "\n\n")
	}
	return b.String()
}

func TestParseStream(t *testing.T) {
	role := `{"choices":[{"delta":{"role":"assistant","content":""}}]}`
	hello, world := `{"choices":[{"delta":{"content":"Hel"}}]}`, `{"choices":[{"delta":{"content":"lo"}}]}`
	cases := []struct {
		name, body string
		done       bool
		text, err  string
	}{
		{"complete", sse(role, hello, world, tenzroChunk, "[DONE]"), true, "Hello", ""},
		{"truncated", sse(role, hello), false, "Hel", ""},
		{"error event", sse(role, hello, `{"error":{"message":"provider gone"}}`), false, "Hel", "provider gone"},
		{"event after done", sse(hello, tenzroChunk, "[DONE]", world), false, "Hel", "after [DONE]"},
		{"done without finish", sse(hello, "[DONE]"), false, "Hel", "without a finish reason"},
		{"garbage", sse(hello, "{not json"), false, "Hel", "undecodable"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			texts := 0
			a, err := parseStream(strings.NewReader(c.body), func() { texts++ })
			if err != nil {
				t.Fatal(err)
			}
			if a.Done != c.done || a.Text != c.text || !strings.Contains(a.Err, c.err) {
				t.Fatalf("got done %v text %q err %q; want done %v text %q err containing %q", a.Done, a.Text, a.Err, c.done, c.text, c.err)
			}
			if texts != 1 {
				t.Fatalf("onText called %d times, want once", texts)
			}
		})
	}
	a, _ := parseStream(strings.NewReader(sse(hello, tenzroChunk, "[DONE]")), nil)
	r := (&callRecord{Answer: a}).record()
	if r == nil || r.RequestDigest != "D" || r.Price != 7 || !a.Tenzro.Continued || a.Tenzro.Attempts != 2 || a.Tenzro.Receipt.Receipt.Nonce != "abcd" {
		t.Fatalf("tenzro object not kept: %+v %+v", a.Tenzro, r)
	}
	if _, err := parseStream(strings.NewReader(": keepalive\n\n"), nil); !errors.Is(err, errNoFrames) {
		t.Fatalf("a stream of no events: err %v, want errNoFrames", err)
	}
}

func TestParseBody(t *testing.T) {
	a, err := parseBody([]byte(`{"choices":[{"message":{"content":"Hi"},"finish_reason":"stop"}],"tenzro":{"attempts":1}}`))
	if err != nil || !a.Done || a.Text != "Hi" || a.Finish != "stop" || a.Tenzro == nil {
		t.Fatalf("got %+v, %v", a, err)
	}
	for _, bad := range []string{`{}`, `{"choices":[{},{}]}`, `[`} {
		if _, err := parseBody([]byte(bad)); err == nil {
			t.Errorf("parseBody(%s): no error", bad)
		}
	}
}

func TestParseFlags(t *testing.T) {
	c, err := parseFlags([]string{"--duration", "45s", "--seed", "3", "--rate", "2.5"}, io.Discard)
	if err != nil || c.duration != 45*time.Second || c.seed != 3 || c.rate != 2.5 || c.providers != 4 || c.gateways != 2 {
		t.Fatalf("got %+v, %v", c, err)
	}
	for args, want := range map[string]string{
		"--duration 1s":   "--duration 1s",
		"--rate 0":        "--rate 0",
		"--validators 3":  "needs exactly 4",
		"--providers 1":   "--providers 1",
		"--settle 1s":     "--settle",
		"--duration soon": "invalid value",
		"extra":           "unexpected arguments",
	} {
		_, err := parseFlags(strings.Fields(args), io.Discard)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("parseFlags(%s): %v, want an error containing %q", args, err, want)
		}
	}
}

func TestWindows(t *testing.T) {
	t0 := time.Now()
	faults := []*faultRecord{{Start: t0.Add(10 * time.Second), End: t0.Add(20 * time.Second)}}
	if inFault(faults, t0, t0.Add(9*time.Second)) || !inFault(faults, t0, t0.Add(10*time.Second)) || !inFault(faults, t0.Add(15*time.Second), t0.Add(30*time.Second)) {
		t.Fatal("inFault misjudges overlap")
	}
	if quantile(nil, 0.5) != 0 {
		t.Fatal("quantile of nothing is not 0")
	}
	ms := []time.Duration{time.Millisecond, 2 * time.Millisecond, 100 * time.Millisecond}
	if quantile(ms, 0.5) != 2*time.Millisecond || quantile(ms, 0.99) != 100*time.Millisecond {
		t.Fatalf("quantiles %s %s", quantile(ms, 0.5), quantile(ms, 0.99))
	}
}

func FuzzParseStream(f *testing.F) {
	f.Add(sse(`{"choices":[{"delta":{"content":"x"}}]}`, tenzroChunk, "[DONE]"))
	f.Add(sse(`{"error":{}}`))
	f.Add("data: [DONE]\n\ndata: {}\n")
	f.Fuzz(func(t *testing.T, body string) {
		a, err := parseStream(strings.NewReader(body), func() {})
		if err != nil {
			return
		}
		// A complete answer has a finish reason and no error.
		if a.Done && (a.Finish == "" || a.Err != "") {
			t.Fatalf("done with finish %q, err %q", a.Finish, a.Err)
		}
	})
}

func FuzzParseBody(f *testing.F) {
	f.Add([]byte(`{"choices":[{"message":{"content":"Hi"},"finish_reason":"stop"}]}`))
	f.Add([]byte(`{"choices":[{"message":{"content":""}}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := parseBody(b)
		if err == nil && a.Done && a.Finish == "" {
			t.Fatal("done without a finish reason")
		}
	})
}

func TestKnownBugClassification(t *testing.T) {
	cont := &callRecord{Answer: answer{Tenzro: &tenzroObject{Continued: true}}}
	plain := &callRecord{Answer: answer{Tenzro: &tenzroObject{}}}
	at, got, want := divergence("others\uFFFD blue", "othersڧ worked")
	if at != 6 || !strings.HasPrefix(got, "\uFFFD") || !strings.HasPrefix(want, "ڧ") {
		t.Fatalf("divergence: %d %q %q", at, got, want)
	}
	if !splitCharacter(cont, got, want) || splitCharacter(plain, got, want) {
		t.Fatal("the split-character signature needs a continued call departing at a multi-byte rune")
	}
	if _, got, want = divergence("op every", "\uFFFD\uFFFDoually"); !splitCharacter(cont, got, want) {
		t.Fatal("bytes held back that end as U+FFFD are a split character too")
	}
	if _, got, want = divergence("others blue", "others worked"); splitCharacter(cont, got, want) {
		t.Fatal("departing at an ASCII character is not a split character")
	}
	known := "violations:\n  - call 9 (long via g, stream true, continued true, provider P): " + splitContinuation + ": complete answer differs from the referee's\nhistory"
	other := known + "\n" // same, plus another violation below
	other = strings.Replace(other, "\nhistory", "\n  - record D settled 2 times\nhistory", 1)
	dial := "violations:\n  - provider-kill of provider-1: chaos: " + unreachableProvider + ": not recovered within 1m0s: gateway-0 cannot dial it\nhistory"
	if !onlyKnown("x\n"+known) || !onlyKnown("x\n"+dial) || onlyKnown("x\n"+other) || onlyKnown("x\nchaos: PASS") {
		t.Fatal("onlyKnown misjudges the violation list")
	}
}

func TestCannotDial(t *testing.T) {
	home := t.TempDir()
	log := "time=2026-12-01T15:05:51.541Z level=WARN msg=\"circuit breaker opened\" last_failure=\"infer: open stream to P1: failed to dial: failed to dial P1: no addresses\"\n"
	if err := os.WriteFile(filepath.Join(home, "node.log"), []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	r := &proc{home: home}
	before, _ := time.Parse(time.RFC3339, "2026-12-01T15:05:00Z")
	after, _ := time.Parse(time.RFC3339, "2026-12-01T15:06:00Z")
	if !cannotDial(r, "P1", before) || cannotDial(r, "P2", before) || cannotDial(r, "P1", after) {
		t.Fatal("cannotDial misreads the log")
	}
}
