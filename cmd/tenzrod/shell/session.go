package shell

import (
	"fmt"
	"io"
	"time"

	"github.com/tenzrod/tenzrod/router/gateway"
)

// sessionParams is the params function of `session ID`.
func sessionParams(inv *invocation) (any, error) {
	id := inv.arg(0)
	if id == "" || len(id) > 64 {
		return nil, fmt.Errorf("session %q: want the session ID a response's tenzro.session.id gave (1..64 characters)", id)
	}
	return map[string]string{"id": id}, nil
}

// sessionView is tenzro_getSession's result: the gateway's view of the
// session and, where the node pays a successor's standby, its stream.
type sessionView struct {
	gateway.SessionView
	Stream *struct {
		Rate     uint64 `json:"rate"`
		Deposit  uint64 `json:"deposit"`
		Claimed  uint64 `json:"claimed"`
		Refunded uint64 `json:"refunded"`
		Closed   bool   `json:"closed"`
	} `json:"stream"`
	StreamError string `json:"stream_error"`
}

func renderSession(w io.Writer, s sessionView, _ *invocation) error {
	tw := newTable(w)
	fmt.Fprintf(tw, "session\t%s\n", s.ID)
	fmt.Fprintf(tw, "model\t%s\n", orDash(s.Model))
	fmt.Fprintf(tw, "payer\t%s\n", orDash(s.Payer))
	cont := "continuity " + s.Continuity
	if s.Jurisdiction != "" {
		cont += ", jurisdiction " + s.Jurisdiction
	}
	fmt.Fprintf(tw, "asks\t%s\n", cont)
	state := fmt.Sprintf("%d served, %d failovers", s.Turn, s.Failovers)
	if s.InTurn {
		state += ", a turn in flight"
	}
	fmt.Fprintf(tw, "turns\t%s\n", state)
	fmt.Fprintf(tw, "primary\t%s\n", memberLine(s.Primary))
	if s.Successor == nil {
		fmt.Fprintf(tw, "successor\tnone (%s)\n", orDash(s.SuccessorReason))
	} else {
		fmt.Fprintf(tw, "successor\t%s, standby %d micro-units/h\n", memberLine(s.Successor), s.Successor.FeePerHour)
		switch {
		case s.Successor.StreamID == "":
			fmt.Fprintf(tw, "stream\tnone (no chain, or a free standby)\n")
		case s.Stream != nil:
			fmt.Fprintf(tw, "stream\t%s: %d micro-units/h, %d of %d claimed, %d refunded%s\n", shortHex(s.Successor.StreamID),
				s.Stream.Rate, s.Stream.Claimed, s.Stream.Deposit, s.Stream.Refunded, map[bool]string{true: ", closed"}[s.Stream.Closed])
		default:
			fmt.Fprintf(tw, "stream\t%s (%s)\n", shortHex(s.Successor.StreamID), orDash(s.StreamError))
		}
	}
	if s.IdleExpiresMs > 0 {
		fmt.Fprintf(tw, "idle ends\t%s\n", time.UnixMilli(s.IdleExpiresMs).UTC().Format(time.RFC3339))
	}
	return tw.Flush()
}

func memberLine(m *gateway.MemberView) string {
	if m == nil {
		return "none yet"
	}
	line := shortID(m.Peer) + " machine " + shortHex(m.Machine)
	if m.Operator != "" {
		line += " operator " + shortHex(m.Operator)
	}
	if m.Region != "" {
		line += " in " + m.Region
	}
	return line
}
