package pricefeed

import "github.com/tenzrod/tenzrod/router"

// TableClaims reads providers' claims from the provider table: the
// hardware class and region of their latest announcement.
func TableClaims(t *router.Table) ClaimsFunc {
	return func() map[string]Claims {
		out := map[string]Claims{}
		for _, p := range t.List() {
			if p.HardwareClass.Value == "" && p.Region == "" {
				continue
			}
			out[p.PeerID] = Claims{HardwareClass: Claim{Value: p.HardwareClass.Value, Claimed: true},
				Region: Claim{Value: p.Region, Claimed: true}}
		}
		return out
	}
}
