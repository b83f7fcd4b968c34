package gateway

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/tenzrod/tenzrod/gossip"
)

// FuzzValidSession: any session options are accepted or refused with a
// 400 naming a tenzro.session field; an accepted ID is URL-safe as is and
// an accepted jurisdiction, spelt as providers spell it, is a region
// they may announce.
func FuzzValidSession(f *testing.F) {
	f.Add("abc_1-X", uint8(1), "Europe")
	f.Add("", uint8(2), "DE")
	f.Add("a b", uint8(0), "DE-BY")
	f.Add(strings.Repeat("x", 65), uint8(9), "Atlantis")
	f.Fuzz(func(t *testing.T, id string, continuity uint8, jurisdiction string) {
		err := validSession(&SessionRequest{ID: id, Continuity: Continuity(continuity), Jurisdiction: jurisdiction})
		if err != nil {
			var ge *Error
			if !errors.As(err, &ge) || ge.Status != http.StatusBadRequest || !strings.HasPrefix(ge.Param, "tenzro.session.") || ge.Message == "" {
				t.Fatalf("refusal %v", err)
			}
			return
		}
		if id != "" && (url.PathEscape(id) != id || url.QueryEscape(id) != id || len(id) > sessionIDMax) {
			t.Fatalf("accepted id %q is not URL-safe", id)
		}
		if continuity > uint8(ContinuityRequired) {
			t.Fatalf("accepted continuity %d", continuity)
		}
		// A pin is accepted in any case ("de", "europe") and matched as
		// providers spell it.
		if jurisdiction != "" && gossip.CheckRegion(canonRegion(jurisdiction)) != nil {
			t.Fatalf("accepted jurisdiction %q", jurisdiction)
		}
	})
}
