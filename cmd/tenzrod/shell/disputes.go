package shell

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// disputesParams builds tenzro_listDisputes' params from `disputes
// [-status S] [-provider MACHINE] [-from H] [-to H]`.
func disputesParams(inv *invocation) (any, error) {
	p := map[string]any{}
	if s := inv.flags["status"]; s != "" {
		p["status"] = s
	}
	if m := inv.flags["provider"]; m != "" {
		p["provider"] = strings.ToLower(strings.TrimPrefix(m, "0x"))
	}
	for _, name := range []string{"from", "to"} {
		if v := inv.flags[name]; v != "" {
			h, err := strconv.ParseInt(v, 10, 64)
			if err != nil || h < 0 {
				return nil, fmt.Errorf("-%s %q: want a block height", name, v)
			}
			p[name] = h
		}
	}
	return p, nil
}

// disputeParams is the params function of `dispute ID`.
func disputeParams(inv *invocation) (any, error) {
	id := strings.ToLower(strings.TrimPrefix(inv.arg(0), "0x"))
	if len(id) != 64 || !isHex(id) {
		return nil, fmt.Errorf("dispute %q: want a 64-hex-digit dispute ID", inv.arg(0))
	}
	return map[string]string{"id": id}, nil
}

type disputeMember struct {
	Validator string `json:"validator"`
	Power     int64  `json:"power"`
	Vote      string `json:"vote"`
	Against   bool   `json:"against"`
}

type disputeView struct {
	ID         string `json:"id"`
	Provider   string `json:"provider"`
	Operator   string `json:"operator"`
	Disputer   string `json:"disputer"`
	Model      string `json:"model"`
	Bond       uint64 `json:"bond"`
	Status     string `json:"status"`
	OpenHeight int64  `json:"open_height"`
	Resolve    int64  `json:"resolve_height"`
	Slashed    uint64 `json:"slashed"`
	Reward     uint64 `json:"reward"`
	Burned     uint64 `json:"burned"`
	Reversed   uint64 `json:"reversed"`
	Refunded   uint64 `json:"refunded"` // of the slash, to the buyer (the record fee at least)
	Rounds     []struct {
		Round      int             `json:"round"`
		DrawHeight int64           `json:"draw_height"`
		CommitEnd  int64           `json:"commit_end"`
		RevealEnd  int64           `json:"reveal_end"`
		Members    []disputeMember `json:"members"`
	} `json:"rounds"`
}

// disputesResult is tenzro_listDisputes' result.
type disputesResult struct {
	Disputes []disputeView `json:"disputes"`
}

func renderDisputes(w io.Writer, v disputesResult, _ *invocation) error {
	if len(v.Disputes) == 0 {
		_, err := fmt.Fprintln(w, "(no disputes)")
		return err
	}
	tw := newTable(w)
	fmt.Fprintln(tw, "ID\tPROVIDER\tSTATUS\tOPENED\tROUNDS\tBOND\tSLASHED")
	for _, d := range v.Disputes {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\n", shortHex(d.ID), shortHex(d.Provider), d.Status, d.OpenHeight, len(d.Rounds), d.Bond, d.Slashed)
	}
	return tw.Flush()
}

// disputeResult is tenzro_getDispute's result.
type disputeResult struct {
	Dispute disputeView `json:"dispute"`
}

func renderDispute(w io.Writer, v disputeResult, _ *invocation) error {
	d := v.Dispute
	tw := newTable(w)
	fmt.Fprintf(tw, "dispute\t%s\n", d.ID)
	fmt.Fprintf(tw, "status\t%s\n", d.Status)
	fmt.Fprintf(tw, "provider\t%s (operator %s)\n", d.Provider, d.Operator)
	fmt.Fprintf(tw, "model\t%s\n", d.Model)
	fmt.Fprintf(tw, "disputer\t%s, bond %d micro-units\n", d.Disputer, d.Bond)
	fmt.Fprintf(tw, "opened\theight %d\n", d.OpenHeight)
	if d.Resolve > 0 {
		refund := ""
		if d.Refunded > 0 {
			refund = fmt.Sprintf(", %d to the buyer", d.Refunded)
		}
		fmt.Fprintf(tw, "resolved\theight %d: slashed %d (reward %d, burned %d%s), payment reversed %d\n", d.Resolve, d.Slashed, d.Reward, d.Burned, refund, d.Reversed)
	}
	for _, r := range d.Rounds {
		fmt.Fprintf(tw, "round %d\tdrawn at %d, commits to %d, reveals to %d\n", r.Round, r.DrawHeight, r.CommitEnd, r.RevealEnd)
		for _, m := range r.Members {
			against := ""
			if m.Against {
				against = " (against the verdict)"
			}
			fmt.Fprintf(tw, "  member\t%s power %d: %s%s\n", shortHex(m.Validator), m.Power, m.Vote, against)
		}
	}
	return tw.Flush()
}
