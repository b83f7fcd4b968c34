package shell

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// paymentsDetail is the help text of the payments commands.
const paymentsDetail = "Lists the payment records the chain settled at heights FROM..TO, with their\n" +
	"sum. TO defaults to the latest height, FROM to 999 blocks before TO. Prices\n" +
	"and fees are integer micro-units; the fee is taken from the provider's credit."

// paymentsParams is the params function of `payments payer|provider ID
// [FROM] [TO]`: key is "payer" or "provider".
func paymentsParams(key string) func(inv *invocation) (any, error) {
	return func(inv *invocation) (any, error) {
		id := strings.ToLower(strings.TrimPrefix(inv.arg(0), "0x"))
		if key == "payer" && (len(id) != 64 || !isHex(id)) {
			return nil, fmt.Errorf("payer %q: want a 64-hex-digit account ID", inv.arg(0))
		}
		if key == "provider" && !isHex(id) {
			return nil, fmt.Errorf("provider %q: want a hex machine ID", inv.arg(0))
		}
		p := map[string]any{key: id}
		for i, name := range []string{"from", "to"} {
			if len(inv.args) <= i+1 {
				break
			}
			h, err := strconv.ParseInt(inv.arg(i+1), 10, 64)
			if err != nil || h < 1 {
				return nil, fmt.Errorf("%s %q: want a block height (1 or more)", strings.ToUpper(name), inv.arg(i+1))
			}
			p[name] = h
		}
		return p, nil
	}
}

type paymentView struct {
	Payer         string `json:"payer"`
	Provider      string `json:"provider"`
	RequestDigest string `json:"request_digest"`
	Price         uint64 `json:"price"`
	Units         uint64 `json:"units"`
	Settler       string `json:"settler"`
	Height        int64  `json:"height"`
	Fee           uint64 `json:"fee"`
}

type paymentsView struct {
	Payer    string        `json:"payer"`
	Provider string        `json:"provider"`
	From     int64         `json:"from"`
	To       int64         `json:"to"`
	Height   int64         `json:"height"`
	Records  []paymentView `json:"records"`
	Count    int           `json:"count"`
	Total    uint64        `json:"total"`
	Fees     uint64        `json:"fees"`
}

func renderPayments(w io.Writer, v paymentsView, _ *invocation) error {
	// The column of the other party: a payer's providers, a provider's payers.
	other, otherOf := "PROVIDER", func(p paymentView) string { return p.Provider }
	who := "payer " + v.Payer
	if v.Provider != "" {
		other, otherOf = "PAYER", func(p paymentView) string { return p.Payer }
		who = "provider " + v.Provider
	}
	if len(v.Records) > 0 {
		tw := newTable(w)
		fmt.Fprintf(tw, "HEIGHT\tREQUEST\t%s\tSETTLER\tUNITS\tPRICE\tFEE\n", other)
		for _, p := range v.Records {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%d\t%d\n", p.Height, shortID(p.RequestDigest), shortID(otherOf(p)),
				shortID(p.Settler), p.Units, p.Price, p.Fee)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	noun := "records"
	if v.Count == 1 {
		noun = "record"
	}
	_, err := fmt.Fprintf(w, "%s: %d %s settled at heights %d..%d, total %d micro-units, fees %d (state at height %d)\n",
		who, v.Count, noun, v.From, v.To, v.Total, v.Fees, v.Height)
	return err
}
