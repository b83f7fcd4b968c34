package shell

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// maxSummary bounds the length of one event's message summary, in runes.
const maxSummary = 200

// summaryKeys are the message fields shown first, in this order, with the
// label each is shown under.
var summaryKeys = []struct{ key, label string }{
	{"machine_id", "machine"}, {"seq", "seq"},
	{"model_id", "model"}, {"model", "model"}, {"name", "name"}, {"engine", "engine"},
	{"provider", "provider"}, {"observer", "observer"},
	{"price", "price"}, {"latency_ms", "latency_ms"}, {"success", "ok"},
	{"region", "region"}, {"hardware_class", "hw"},
	{"queue_depth", "queue"}, {"models", "models"}, {"states", "models"},
}

// summaryHidden are fields never worth a place on a tail line.
var summaryHidden = map[string]bool{
	"signature": true, "sig": true, "cert": true, "certificate": true, "session_cert": true,
	"pubkey": true, "public_key": true, "payload": true, "envelope": true,
	"time": true, "time_ms": true, "timestamp": true, "degraded": true,
}

// summarizeMessage renders a decoded gossip message as key=value pairs:
// known fields first (machine ID prefix, seq, per-model states, load …),
// then any other scalar fields, cut to maxSummary runes.
func summarizeMessage(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		var buf strings.Builder
		if compactJSON(&buf, raw) != nil {
			return truncate(string(raw))
		}
		return truncate(buf.String())
	}
	var parts []string
	used := map[string]bool{}
	add := func(label string, v any) {
		if s := summaryValue(v); s != "" {
			parts = append(parts, label+"="+s)
		}
	}
	for _, k := range summaryKeys {
		if v, ok := m[k.key]; ok && !used[k.label] {
			used[k.label], used[k.key] = true, true
			add(k.label, v)
		}
	}
	if f, ok := m["in_flight"]; ok {
		c, ok := m["capacity"]
		if !ok {
			c = "?"
		}
		add("load", fmt.Sprintf("%v/%v", f, c))
		used["in_flight"], used["capacity"] = true, true
	}
	if d, ok := m["degraded"].(bool); ok && d {
		parts = append(parts, "DEGRADED")
	}
	var rest []string
	for k, v := range m {
		if !used[k] && !summaryHidden[k] {
			switch v.(type) {
			case string, json.Number, bool:
				rest = append(rest, k)
			}
		}
	}
	sort.Strings(rest)
	for _, k := range rest {
		add(k, m[k])
	}
	return truncate(strings.Join(parts, " "))
}

func summaryValue(v any) string {
	switch v := v.(type) {
	case string:
		switch {
		case strings.HasPrefix(v, "12D3Koo") || strings.HasPrefix(v, "Qm"):
			return shortID(v)
		case isHex(v):
			return shortHex(v)
		}
		return v
	case json.Number:
		return v.String()
	case bool:
		return fmt.Sprint(v)
	case map[string]any:
		if val, ok := v["value"]; ok {
			return summaryValue(val)
		}
		return modelStateMap(v)
	case []any:
		return modelStateList(v)
	}
	return ""
}

// modelStateMap renders {"<model>": "warm", …} as model:warm,…
func modelStateMap(m map[string]any) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, summaryValue(k)+":"+summaryValue(m[k]))
	}
	return strings.Join(parts, ",")
}

// modelStateList renders [{"model_id": …, "state": "warm"}, …] (or a list of
// scalars) as model:warm,…
func modelStateList(list []any) string {
	parts := make([]string, 0, len(list))
	for _, e := range list {
		obj, ok := e.(map[string]any)
		if !ok {
			parts = append(parts, summaryValue(e))
			continue
		}
		label := ""
		for _, k := range []string{"name", "model_id", "model", "id"} {
			if s, ok := obj[k].(string); ok && s != "" {
				label = summaryValue(s)
				break
			}
		}
		if st, ok := obj["state"]; ok {
			label += ":" + summaryValue(st)
		}
		parts = append(parts, label)
	}
	return strings.Join(parts, ",")
}

func truncate(s string) string {
	r := []rune(s)
	if len(r) <= maxSummary {
		return s
	}
	return string(r[:maxSummary-1]) + "…"
}
