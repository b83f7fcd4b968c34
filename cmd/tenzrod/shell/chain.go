package shell

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"strings"
)

// accountParams is the params function of `account ACCOUNT`.
func accountParams(inv *invocation) (any, error) {
	a := strings.ToLower(strings.TrimPrefix(inv.arg(0), "0x"))
	if len(a) != 64 || !isHex(a) {
		return nil, fmt.Errorf("account %q: want a 64-hex-digit account ID", inv.arg(0))
	}
	return map[string]string{"account": a}, nil
}

// standingParams is the params function of `standing MACHINE`.
func standingParams(inv *invocation) (any, error) {
	m := strings.ToLower(strings.TrimPrefix(inv.arg(0), "0x"))
	if !isHex(m) {
		return nil, fmt.Errorf("machine %q: want a hex machine ID", inv.arg(0))
	}
	return map[string]string{"machine_id": m}, nil
}

type accountView struct {
	Account string `json:"account"`
	Exists  bool   `json:"exists"`
	Balance uint64 `json:"balance"`
	Nonce   uint64 `json:"nonce"`
	Height  int64  `json:"height"`
	Escrows []struct {
		Balance uint64 `json:"balance"`
		Settler string `json:"settler"`
		Pending uint64 `json:"pending"`
		Unlock  int64  `json:"unlock_height"`
	} `json:"escrows"`
	Streams []struct {
		ID      string `json:"id"`
		Payee   string `json:"payee"`
		Rate    uint64 `json:"rate"`
		Deposit uint64 `json:"deposit"`
		Claimed uint64 `json:"claimed"`
	} `json:"streams"`
	Plans []struct {
		ID       string `json:"id"`
		Total    uint64 `json:"total"`
		Legs     []any  `json:"legs"`
		Deadline int64  `json:"deadline"`
	} `json:"plans"`
}

func renderAccount(w io.Writer, a accountView, _ *invocation) error {
	tw := newTable(w)
	fmt.Fprintf(tw, "account\t%s\n", orDash(a.Account))
	if !a.Exists {
		fmt.Fprintf(tw, "exists\tno (never funded)\n")
	}
	fmt.Fprintf(tw, "balance\t%d micro-units\n", a.Balance)
	fmt.Fprintf(tw, "nonce\t%d\n", a.Nonce)
	fmt.Fprintf(tw, "height\t%d\n", a.Height)
	for _, e := range a.Escrows {
		fmt.Fprintf(tw, "escrow\t%d micro-units with settler %s", e.Balance, e.Settler)
		if e.Pending > 0 {
			fmt.Fprintf(tw, " (%d withdrawing, unlocks at height %d)", e.Pending, e.Unlock)
		}
		fmt.Fprintln(tw)
	}
	for _, s := range a.Streams {
		fmt.Fprintf(tw, "stream\t%s to %s: %d micro-units/h, %d of %d claimed\n", shortHex(s.ID), shortHex(s.Payee), s.Rate, s.Claimed, s.Deposit)
	}
	for _, p := range a.Plans {
		fmt.Fprintf(tw, "plan\t%s: %d micro-units to %d legs, undecided (payer may abort after height %d)\n", shortHex(p.ID), p.Total, len(p.Legs), p.Deadline)
	}
	return tw.Flush()
}

type validatorView struct {
	Operator   string `json:"operator"`
	ConsPubKey string `json:"cons_pub_key"` // base64
	Stake      uint64 `json:"stake"`
	Power      int64  `json:"power"`
}

func renderValidators(w io.Writer, vs []validatorView, _ *invocation) error {
	var total int64
	for _, v := range vs {
		total += v.Power
	}
	tw := newTable(w)
	fmt.Fprintln(tw, "OPERATOR\tCONSENSUS KEY\tSTAKE\tPOWER\tSHARE")
	for _, v := range vs {
		key := v.ConsPubKey
		if b, err := base64.StdEncoding.DecodeString(key); err == nil {
			key = hex.EncodeToString(b)
		}
		share := 0.0
		if total > 0 {
			share = 100 * float64(v.Power) / float64(total)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.1f%%\n", shortID(v.Operator), shortID(key), v.Stake, v.Power, share)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%d validators, total power %d; > 2/3 is %d\n", len(vs), total, total*2/3+1)
	return err
}

type standingView struct {
	MachineID      string `json:"machine_id"`
	Height         int64  `json:"height"`
	StandingBP     uint64 `json:"standing_bp"`
	BondLive       bool   `json:"bond_live"`
	Bond           uint64 `json:"bond"`
	MinServingBond uint64 `json:"min_serving_bond"`
	BondedBP       uint64 `json:"bonded_bp"`
	AvailBP        uint64 `json:"avail_bp"`
	WindowHours    uint64 `json:"window_hours"`
	AvailableHours uint64 `json:"available_hours"`
	Barred         bool   `json:"barred"`
	ConvictedAt    int64  `json:"convicted_at"`
	RebondDue      uint64 `json:"rebond_due"`
}

func renderStanding(w io.Writer, s standingView, _ *invocation) error {
	tw := newTable(w)
	fmt.Fprintf(tw, "machine_id\t%s\n", orDash(s.MachineID))
	fmt.Fprintf(tw, "standing\t%s  (at height %d)\n", bp(s.StandingBP), s.Height)
	live := "no: standing is 0"
	if s.BondLive {
		live = "yes"
	}
	fmt.Fprintf(tw, "bond\t%d micro-units (minimum %d), live: %s\n", s.Bond, s.MinServingBond, live)
	fmt.Fprintf(tw, "bonded part\t%s\n", bp(s.BondedBP))
	fmt.Fprintf(tw, "availability part\t%s  (available %d of the last %d hours)\n", bp(s.AvailBP), s.AvailableHours, s.WindowHours)
	if s.Barred {
		fmt.Fprintf(tw, "barred\tconvicted at height %d: unpaid and out of every rotation until it re-bonds %d (tenzrod tx rebond)\n",
			s.ConvictedAt, s.RebondDue)
	}
	return tw.Flush()
}

// bp renders basis points as a percentage.
func bp(v uint64) string { return fmt.Sprintf("%d.%02d%%", v/100, v%100) }
