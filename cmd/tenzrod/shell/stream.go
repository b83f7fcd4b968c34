package shell

import (
	"fmt"
	"io"
	"strings"
)

func streamParams(inv *invocation) (any, error) {
	id := strings.ToLower(strings.TrimPrefix(inv.arg(0), "0x"))
	if len(id) != 64 || !isHex(id) {
		return nil, fmt.Errorf("stream %q: want a 64-hex-digit stream ID (a session's standby stream_id)", inv.arg(0))
	}
	return map[string]string{"id": id}, nil
}

// streamResult is tenzro_getStream's result.
type streamResult struct {
	Stream struct {
		ID         string `json:"id"`
		Payer      string `json:"payer"`
		Settler    string `json:"settler"`
		Payee      string `json:"payee"`
		Operator   string `json:"operator"`
		Rate       uint64 `json:"rate"`
		Deposit    uint64 `json:"deposit"`
		Claimed    uint64 `json:"claimed"`
		Refunded   uint64 `json:"refunded"`
		OpenHeight int64  `json:"open_height"`
		Closed     bool   `json:"closed"`
		CloseH     int64  `json:"close_height"`
	} `json:"stream"`
	Balance uint64 `json:"balance"`
	Height  int64  `json:"height"`
}

// renderStream shows one stream escrow as tenzro_getStream gives it.
func renderStream(w io.Writer, v streamResult, _ *invocation) error {
	s := v.Stream
	tw := newTable(w)
	fmt.Fprintf(tw, "stream\t%s\n", s.ID)
	fmt.Fprintf(tw, "payer\t%s (settler %s)\n", s.Payer, s.Settler)
	fmt.Fprintf(tw, "payee\t%s (operator %s)\n", s.Payee, s.Operator)
	fmt.Fprintf(tw, "rate\t%d micro-units/h\n", s.Rate)
	fmt.Fprintf(tw, "money\tdeposit %d = claimed %d + refunded %d + balance %d\n", s.Deposit, s.Claimed, s.Refunded, v.Balance)
	state := fmt.Sprintf("open since height %d", s.OpenHeight)
	if s.Closed {
		state = fmt.Sprintf("closed at height %d (opened at %d)", s.CloseH, s.OpenHeight)
	}
	fmt.Fprintf(tw, "state\t%s\n", state)
	fmt.Fprintf(tw, "height\t%d\n", v.Height)
	return tw.Flush()
}
