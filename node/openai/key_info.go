package openai

import (
	"net/http"
	"time"
)

// KeyInfo is GET /v1/key's `data`, in OpenRouter's shape: the calling
// key's label, its usage (all time), its limit (the budget per period,
// null for none), what remains of it and its period (limit_reset, null
// for none). Amounts are micro-units; reset_at and usage_period are
// this gateway's additions.
type KeyInfo struct {
	Label          string  `json:"label"`
	Usage          uint64  `json:"usage"`
	Limit          *uint64 `json:"limit"`
	LimitRemaining *uint64 `json:"limit_remaining"`
	LimitReset     *string `json:"limit_reset"`
	IsFreeTier     bool    `json:"is_free_tier"`
	UsagePeriod    uint64  `json:"usage_period"`
	ResetAt        string  `json:"reset_at,omitempty"`
	Reserved       uint64  `json:"reserved"`
	Units          string  `json:"units"`
}

// KeyInfoHandler serves GET /v1/key for the bearer token's key: a
// run-time key shows its spend; a [[router.buyers]] token, which has no
// budget, shows its account as label and no limit.
func (b *Buyers) KeyInfoHandler(w http.ResponseWriter, r *http.Request) {
	payer, err := b.Account(r.Header)
	if err != nil {
		writeError(w, &Error{Status: http.StatusUnauthorized, Type: "invalid_request_error", Code: "invalid_api_key", Message: err.Error()})
		return
	}
	info := KeyInfo{Label: payer, Units: "micro"}
	tok, _ := bearer(r.Header)
	if b.keys != nil {
		if k, ok := b.keys.Lookup(TokenHash(tok)); ok {
			st, err := b.keys.Status(k.ID)
			if err != nil {
				writeError(w, asError(err))
				return
			}
			info.Label, info.Usage, info.UsagePeriod, info.Reserved = k.Label, st.Total, st.Spent, st.Reserved
			if k.Label == "" {
				info.Label = k.ID
			}
			if st.Limit > 0 {
				info.Limit, info.LimitRemaining = &st.Limit, &st.Remaining
			}
			if k.BudgetDuration != "" {
				info.LimitReset = &k.BudgetDuration
				info.ResetAt = st.Reset.UTC().Format(time.RFC3339)
			}
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": info})
}
