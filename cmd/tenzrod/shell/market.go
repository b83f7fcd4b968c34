package shell

import (
	"fmt"
	"io"
	"sort"
	"strconv"

	"github.com/tenzrod/tenzrod/router/gateway"
)

// quoteParams builds tenzro_quoteInference's params from
// `quote MODEL [-in N] [-out N] [-level L]`.
func quoteParams(inv *invocation) (any, error) {
	units := map[string]uint64{}
	for flag, key := range map[string]string{"in": "input_tokens", "out": "output_tokens"} {
		if v, ok := inv.flags[flag]; ok {
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("-%s %q: want a token count", flag, v)
			}
			units[key] = n
		}
	}
	if len(units) == 0 {
		units["input_tokens"], units["output_tokens"] = 100, 100
	}
	level := inv.flags["level"]
	if level == "" {
		level = "none"
	}
	return map[string]any{"model": inv.arg(0), "units": units, "verification": level}, nil
}

type quoteLine struct {
	Provider   string `json:"provider"`
	KeyBackend string `json:"key_backend"`
	Region     string `json:"region"`
	Model      string `json:"model"`
	InFlight   uint32 `json:"in_flight"`
	Capacity   uint32 `json:"capacity"`
	Breakdown  struct {
		Usage   uint64 `json:"usage"`
		Minimum uint64 `json:"minimum"`
	} `json:"breakdown"`
	Surcharge uint64        `json:"surcharge"`
	Price     uint64        `json:"price"`
	Digest    string        `json:"quote_digest"`
	Attested  *attestedInfo `json:"attested"`
}

func renderQuotes(w io.Writer, lines []quoteLine, _ *invocation) error {
	if len(lines) == 0 {
		_, err := fmt.Fprintln(w, "(no provider is up with the model warm at that verification level)")
		return err
	}
	tw := newTable(w)
	fmt.Fprintln(tw, "#\tPROVIDER\tBACKEND\tREGION\tTEE\tLOAD\tUSAGE\tMINIMUM\tSURCHARGE\tPRICE\tQUOTE")
	for i, l := range lines {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%d/%d\t%d\t%d\t%d\t%d\t%s\n", i+1, shortID(l.Provider), l.KeyBackend, l.Region,
			teeLabel(l.Attested), l.InFlight, l.Capacity, l.Breakdown.Usage, l.Breakdown.Minimum, l.Surcharge, l.Price, shortID(l.Digest))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "prices in micro-units, cheapest first")
	return err
}

// breaker shows a provider's breaker: its state, until when an open one
// refuses, and how often it opened.
func breakerLine(c *gateway.ProviderCounts) string {
	b := c.Breaker
	if b == nil {
		return "-"
	}
	s := b.State
	if b.State == "open" && !b.OpenUntil.IsZero() {
		s += " until " + b.OpenUntil.Local().Format("15:04:05")
	}
	if b.Opens > 0 {
		s += fmt.Sprintf(" (opened %d×)", b.Opens)
	}
	return s
}

func renderMetrics(w io.Writer, m gateway.Snapshot, _ *invocation) error {
	fmt.Fprintf(w, "requests routed %d   hedges dispatched %d (won %d)   failovers %d   continuations %d   deadline misses %d   bad receipts %d\n",
		m.RequestsRouted, m.HedgesDispatched, m.HedgesWon, m.Failovers, m.Continuations, m.DeadlineMisses, m.BadReceipts)
	if len(m.Providers) == 0 {
		return nil
	}
	ids := make([]string, 0, len(m.Providers))
	for id := range m.Providers {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	tw := newTable(w)
	fmt.Fprintln(tw, "PROVIDER\tATTEMPTS\tWON\tHEDGES WON\tFAILED\tCANCELLED\tPAID\tP95 (SAMPLES)\tBREAKER")
	for _, id := range ids {
		c := m.Providers[id]
		p95 := "-"
		if c.LatencySamples > 0 {
			p95 = fmt.Sprintf("%.1f ms (%d)", c.P95Ms, c.LatencySamples)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\n", shortID(id), c.Attempts, c.Won, c.HedgeWon, c.Failures, c.Cancelled, c.Paid, p95, breakerLine(c))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, id := range ids {
		if b := m.Providers[id].Breaker; b != nil && b.LastFailure != "" && b.State != "closed" {
			fmt.Fprintf(w, "%s breaker %s after: %s\n", shortID(id), b.State, b.LastFailure)
		}
	}
	return nil
}
