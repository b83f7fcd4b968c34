package scale

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// Print writes the results as one Markdown table, a column per size, a
// row per figure (per-node figures are averages over gateways and
// validators).
func Print(w io.Writer, rs []Result) {
	if len(rs) == 0 {
		return
	}
	head := []string{"figure"}
	for _, r := range rs {
		h := fmt.Sprintf("%d providers", r.Providers)
		if r.LibraryQueues {
			h += " (library queues)"
		}
		head = append(head, h)
	}
	rows := [][]string{head, make([]string, len(head))}
	for i := range rows[1] {
		rows[1][i] = "---"
	}
	add := func(name string, f func(Result) string) {
		row := []string{name}
		for _, r := range rs {
			row = append(row, f(r))
		}
		rows = append(rows, row)
	}
	add("gateways / validators / provider hosts", func(r Result) string {
		return fmt.Sprintf("%d / %d / %d", r.Gateways, r.Validators, r.Publishers)
	})
	add("converge (all nodes see all up)", func(r Result) string {
		if r.NotConverged != "" {
			return "no: " + strings.TrimPrefix(r.NotConverged, "scale: ")
		}
		return dur(r.Converge)
	})
	for _, topic := range topicsOf(rs) {
		add(topic+" msgs/s per node (dups)", func(r Result) string {
			x := r.PerNode[topic]
			return fmt.Sprintf("%.0f (%.0f)", x.Msgs, x.Duplicates)
		})
		add(topic+" bytes/s per node", func(r Result) string { return bytes(r.PerNode[topic].Bytes) + "/s" })
		if topic != controlTopic {
			add(topic+" validation, % of a core", func(r Result) string { return fmt.Sprintf("%.2f%%", 100*r.PerNode[topic].ValidationCPU) })
		}
	}
	add("all gossip bytes/s per node", func(r Result) string {
		var b float64
		for _, x := range r.PerNode {
			b += x.Bytes
		}
		return bytes(b) + "/s"
	})
	add("router drops before window", func(r Result) string { return drops(r.DropsBefore) })
	add("router drops in window", func(r Result) string { return drops(r.Drops) })
	add("down at end of window (node×provider)", func(r Result) string { return fmt.Sprint(r.Down) })
	add("process CPU, cores (whole simulation)", func(r Result) string { return fmt.Sprintf("%.2f", r.ProcessCPU) })
	add("heartbeat validation, one core", func(r Result) string {
		return fmt.Sprintf("%s (%.0f allocs)", dur(r.Heartbeat), r.HeartbeatAllocs)
	})
	add("heartbeat validation CPU est. (rate × one-core cost)", func(r Result) string {
		return fmt.Sprintf("%.2f%% of a core", 100*r.PerNode["heartbeat"].Validated*r.Heartbeat.Seconds())
	})
	add("admit a provider (cold cert)", func(r Result) string { return dur(r.Admit) })
	add("provider table memory", func(r Result) string { return bytes(float64(r.TableBytes)) })
	add("validator caches memory", func(r Result) string { return bytes(float64(r.ValidatorStateBytes)) })
	add("newcomer sees every provider", func(r Result) string {
		if r.NewcomerErr != "" {
			return "no: " + strings.TrimPrefix(r.NewcomerErr, "scale: newcomer: scale: ")
		}
		return dur(r.Newcomer)
	})
	add("newcomer validation time", func(r Result) string { return dur(r.NewcomerValidation) })
	add("quote per request (mean / p99)", func(r Result) string {
		return fmt.Sprintf("%s / %s over %d offers", dur(r.QuoteMean), dur(r.QuoteP99), r.Candidates)
	})
	add("rank per request (weighted)", func(r Result) string { return dur(r.RankMean) })
	add("DHT lookup, unseen model", func(r Result) string {
		if r.DHTErr != "" {
			return "failed: " + r.DHTErr
		}
		if r.DHTPeers == 0 {
			return "-"
		}
		return fmt.Sprintf("%s (%d servers)", dur(r.DHTFirst), r.DHTPeers)
	})
	add("price-obs published/s (network)", func(r Result) string { return fmt.Sprintf("%.1f", r.ObsPublished) })
	add("price feed add / entries", func(r Result) string { return fmt.Sprintf("%s / %d", dur(r.FeedAdd), r.FeedBuckets) })
	for _, row := range rows {
		fmt.Fprintln(w, "| "+strings.Join(row, " | ")+" |")
	}
}

func topicsOf(rs []Result) []string {
	var out []string
	for _, r := range rs {
		for t := range r.PerNode {
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	slices.Sort(out)
	return out
}

func dur(d time.Duration) string {
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	default:
		return d.Round(100 * time.Nanosecond).String()
	}
}

func bytes(b float64) string {
	switch {
	case b >= 1<<20:
		return fmt.Sprintf("%.2f MiB", b/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1f KiB", b/(1<<10))
	default:
		return fmt.Sprintf("%.0f B", b)
	}
}

func drops(m map[string]uint64) string {
	var parts []string
	for k, v := range m {
		if v > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, v))
		}
	}
	if len(parts) == 0 {
		return "0"
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}
