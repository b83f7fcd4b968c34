package gossip

import (
	"errors"
	"fmt"
	"strings"

	"golang.org/x/text/language"
)

// ErrRegionTooFine rejects a region that locates a provider more precisely
// than a country (a subdivision, city, postcode or coordinates). Providers
// announce where they are only coarsely, so buyers can pin a jurisdiction
// without the network publishing operators' sites.
var ErrRegionTooFine = errors.New("region finer than a country")

// errRegionUnknown rejects a region that is neither a country nor a continent.
var errRegionUnknown = errors.New("region is not an ISO 3166-1 country code or a continent")

// Continents are spelled out because the two-letter continent codes AF, AS
// and SA are also country codes (Afghanistan, American Samoa, Saudi Arabia).
var continents = map[string]bool{
	"Africa": true, "Antarctica": true, "Asia": true, "Europe": true,
	"North America": true, "Oceania": true, "South America": true,
}

// CheckRegion accepts an ISO 3166-1 alpha-2 country code in upper case
// ("DE") or a continent name ("Europe"). Anything finer is ErrRegionTooFine.
func CheckRegion(r string) error {
	if continents[r] || isCountry(r) {
		return nil
	}
	if len(r) > 2 && isCountry(r[:2]) && strings.ContainsRune("- ,/._:", rune(r[2])) {
		return fmt.Errorf("%w: %q (announce %q)", ErrRegionTooFine, r, r[:2])
	}
	if strings.ContainsAny(r, "0123456789") || strings.Contains(r, ",") {
		return fmt.Errorf("%w: %q", ErrRegionTooFine, r)
	}
	return fmt.Errorf("%w: %q", errRegionUnknown, r)
}

func isCountry(s string) bool {
	if len(s) != 2 || s[0] < 'A' || s[0] > 'Z' || s[1] < 'A' || s[1] > 'Z' {
		return false
	}
	reg, err := language.ParseRegion(s)
	return err == nil && reg.IsCountry() && reg.String() == s
}
