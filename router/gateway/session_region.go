package gateway

import (
	"strings"

	"golang.org/x/text/language"
)

// continentM49 maps the continent names providers may announce (see
// gossip.CheckRegion) to their UN M.49 area, which x/text's region data
// knows the member countries of.
var continentM49 = map[string]string{
	"Africa": "002", "Antarctica": "010", "Asia": "142", "Europe": "150",
	"North America": "003", "Oceania": "009", "South America": "005",
}

// inRegion reports whether a provider announcing region satisfies the pin
// j: the same region, or a country inside the continent j names. A
// request's region pin and a session's jurisdiction both go through it, so
// "Europe" means the same on a plain request as on a session. A provider
// announcing only a continent does not satisfy a country pin: it may be
// anywhere on it.
func inRegion(j, region string) bool {
	j = canonRegion(j)
	if j == "" || region == j {
		return true
	}
	area, ok := continentM49[j]
	if !ok || len(region) != 2 {
		return false
	}
	a, err := language.ParseRegion(area)
	if err != nil {
		return false
	}
	r, err := language.ParseRegion(region)
	return err == nil && r.IsCountry() && a.Contains(r)
}

// canonRegion spells a buyer's pin as providers announce it: a country
// code upper-case, a continent as gossip.CheckRegion names it ("europe"
// and "EUROPE" are "Europe"); anything else unchanged.
func canonRegion(j string) string {
	if len(j) == 2 {
		return strings.ToUpper(j)
	}
	for c := range continentM49 {
		if strings.EqualFold(c, j) {
			return c
		}
	}
	return j
}
