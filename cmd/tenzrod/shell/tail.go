package shell

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

const (
	// tailWait is how long one tenzro_tailGossip long poll may wait for events.
	tailWait = 10 * time.Second
	// tailPageLimit is the most events asked for per poll.
	tailPageLimit = 100
)

// tailIdleBackoff spaces polls when a node answers an empty page without
// waiting, so the shell does not spin against it.
var tailIdleBackoff = 500 * time.Millisecond

type tailParams struct {
	Topic  string `json:"topic"`
	After  uint64 `json:"after"`
	Limit  int    `json:"limit"`
	WaitMS int64  `json:"wait_ms,omitempty"`
}

type tailPage struct {
	Events []json.RawMessage `json:"events"`
	Next   uint64            `json:"next"`
}

type gossipEvent struct {
	Seq          uint64          `json:"seq"`
	Time         string          `json:"time"`
	Topic        string          `json:"topic"`
	Verdict      string          `json:"verdict"`
	Reason       string          `json:"reason"`
	Error        string          `json:"error"`
	ReceivedFrom string          `json:"received_from"`
	Message      json.RawMessage `json:"message"`
}

func (s *session) tailPage(ctx context.Context, p tailParams) (tailPage, error) {
	const method = "tenzro_tailGossip"
	timeout := s.client.timeout + time.Duration(p.WaitMS)*time.Millisecond
	raw, err := s.client.call(ctx, method, p, timeout)
	if err != nil {
		return tailPage{}, err
	}
	var page tailPage
	if err := decodeResult(raw, &page); err != nil {
		return tailPage{}, fmt.Errorf("%s: %w", method, err)
	}
	return page, nil
}

// runTail asks for the current head of the topic's event log, then long-polls
// for events after it until ctx ends or -n events have been printed.
func runTail(ctx context.Context, s *session, inv *invocation) error {
	n, err := inv.intFlag("n", 0)
	if err != nil {
		return err
	}
	if n < 0 {
		return fmt.Errorf("-n %d: want a positive count", n)
	}
	topic := inv.arg(0)
	head, err := s.tailPage(ctx, tailParams{Topic: topic})
	if err != nil {
		return err
	}
	cursor := head.Next
	if s.interactive && !inv.json {
		fmt.Fprintf(s.errOut, "tailing %s after #%d (Ctrl-C stops)\n", topic, cursor)
	}
	printed := 0
	for {
		limit := tailPageLimit
		if n > 0 && n-printed < limit {
			limit = n - printed
		}
		start := time.Now()
		page, err := s.tailPage(ctx, tailParams{Topic: topic, After: cursor, Limit: limit, WaitMS: tailWait.Milliseconds()})
		if err != nil {
			return err
		}
		for _, raw := range page.Events {
			if err := s.printEvent(raw, inv.json); err != nil {
				return err
			}
			printed++
			if n > 0 && printed >= n {
				return nil
			}
		}
		cursor = page.Next
		if len(page.Events) == 0 && time.Since(start) < tailIdleBackoff {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(tailIdleBackoff):
			}
		}
	}
}

func (s *session) printEvent(raw json.RawMessage, asJSON bool) error {
	if asJSON {
		return writeJSON(s.out, raw, false)
	}
	var ev gossipEvent
	if err := json.Unmarshal(raw, &ev); err != nil {
		return fmt.Errorf("tenzro_tailGossip: unexpected event shape: %w (use --json to see it)", err)
	}
	_, err := fmt.Fprintln(s.out, formatEvent(ev))
	return err
}

func formatEvent(ev gossipEvent) string {
	ts := ev.Time
	if t, err := time.Parse(time.RFC3339Nano, ev.Time); err == nil {
		ts = t.Format("15:04:05.000")
	}
	reason := orDash(ev.Reason)
	if ev.Error != "" {
		reason += " (" + ev.Error + ")"
	}
	line := fmt.Sprintf("%-12s  %-6s  %-9s  %s  from %s", orDash(ts), orDash(ev.Verdict),
		topicShortName(ev.Topic), reason, orDash(shortID(ev.ReceivedFrom)))
	if sum := summarizeMessage(ev.Message); sum != "" {
		line += "  " + sum
	}
	return line
}

// topicShortName turns "/tenzro/<net>/heartbeat/1" into "heartbeat".
func topicShortName(topic string) string {
	parts := strings.Split(topic, "/")
	if len(parts) == 5 && parts[0] == "" && parts[1] == "tenzro" && parts[3] != "" {
		return parts[3]
	}
	return orDash(topic)
}
