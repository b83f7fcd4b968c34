package main

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"
)

// windowStats are the figures of the load calls in one kind of window.
type windowStats struct {
	calls, ok int
	lat       []time.Duration // of the successful calls
}

func (w *windowStats) add(c *callRecord) {
	w.calls++
	if c.ok() {
		w.ok++
		w.lat = append(w.lat, c.End.Sub(c.Start))
	}
}

func (w windowStats) String() string {
	if w.calls == 0 {
		return "no calls"
	}
	slices.Sort(w.lat)
	return fmt.Sprintf("%d calls, success %.1f%%, latency p50 %s p99 %s", w.calls, 100*float64(w.ok)/float64(w.calls),
		quantile(w.lat, 0.50), quantile(w.lat, 0.99))
}

// quantile is the q-quantile of sorted durations (nearest rank).
func quantile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	i := int(q*float64(len(d))+0.999999) - 1
	return d[min(max(i, 0), len(d)-1)].Round(time.Millisecond)
}

// failureKind shortens a call's error to a class for counting.
func failureKind(c *callRecord) string {
	s := c.Err
	switch {
	case c.Status != 0:
		if i := strings.Index(s, `"code":"`); i >= 0 {
			rest := s[i+len(`"code":"`):]
			if j := strings.IndexByte(rest, '"'); j >= 0 {
				return fmt.Sprintf("status %d %s", c.Status, rest[:j])
			}
		}
		if strings.HasPrefix(s, "incomplete") {
			return "incomplete stream"
		}
		return fmt.Sprintf("status %d", c.Status)
	case strings.Contains(s, "connection refused"):
		return "connection refused"
	case strings.Contains(s, "EOF"), strings.Contains(s, "reset by peer"):
		return "connection broken"
	case strings.Contains(s, "Timeout"), strings.Contains(s, "deadline"):
		return "client timeout"
	}
	return s[:min(len(s), 50)]
}

// report prints the run's figures (issue #18 item 4).
func report(w io.Writer, cfg config, loadTime time.Duration, offered int64, calls []*callRecord, faults []*faultRecord) {
	var inside, outside windowStats
	var okLoad, cont, failover int
	kinds := map[string]int{}
	byKind := map[string]*windowStats{}
	for _, c := range calls {
		if c.Kind == "load" {
			if inFault(faults, c.Start, c.End) {
				inside.add(c)
			} else {
				outside.add(c)
			}
			if c.ok() {
				okLoad++
			}
		}
		if byKind[c.Kind] == nil {
			byKind[c.Kind] = &windowStats{}
		}
		byKind[c.Kind].add(c)
		if t := c.Answer.Tenzro; t != nil && c.ok() {
			if t.Continued {
				cont++
			}
			if t.Attempts > 1 {
				failover++
			}
		}
		if !c.ok() {
			kinds[c.Kind+": "+failureKind(c)]++
		}
	}
	secs := loadTime.Seconds()
	fmt.Fprintf(w, "\n== chaos report: seed %d, load %s at %.1f calls/s, %d validators, %d providers, %d gateways + join ==\n",
		cfg.seed, loadTime.Round(time.Second), cfg.rate, cfg.validators, cfg.providers, cfg.gateways)
	fmt.Fprintf(w, "offered %.2f calls/s (%d), achieved %.2f calls/s (%d complete)\n", float64(offered)/secs, offered, float64(okLoad)/secs, okLoad)
	fmt.Fprintf(w, "outside fault windows: %s\n", outside)
	fmt.Fprintf(w, "inside fault windows:  %s\n", inside)
	for _, k := range []string{"long", "flood", "probe"} {
		if s := byKind[k]; s != nil {
			fmt.Fprintf(w, "%-6s calls: %s\n", k, *s)
		}
	}
	fmt.Fprintf(w, "complete answers that were continued on another provider: %d; served after more than one attempt (failover/hedge): %d\n", cont, failover)
	if len(kinds) > 0 {
		var ks []string
		for k, n := range kinds {
			ks = append(ks, fmt.Sprintf("%s ×%d", k, n))
		}
		sort.Strings(ks)
		fmt.Fprintf(w, "failures: %s\n", strings.Join(ks, "; "))
	}
	fmt.Fprintf(w, "faults (time to recover after the fault's action):\n")
	rec := map[string][]time.Duration{}
	for _, f := range faults {
		rec[f.Kind] = append(rec[f.Kind], f.Recovered)
	}
	for _, k := range faultKinds {
		d := rec[k]
		slices.Sort(d)
		if len(d) == 0 {
			fmt.Fprintf(w, "  %-17s none injected\n", k)
			continue
		}
		fmt.Fprintf(w, "  %-17s ×%d  median %s  max %s\n", k, len(d), quantile(d, 0.5), d[len(d)-1].Round(time.Millisecond))
	}
}
