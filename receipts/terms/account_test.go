package terms

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestAccountAndHashText(t *testing.T) {
	var a AccountID
	var h Hash32
	for i := range a {
		a[i], h[i] = byte(i), byte(0xff-i)
	}
	if got, err := ParseAccountID(a.String()); err != nil || got != a {
		t.Fatalf("account round trip: %v, %v", got, err)
	}
	if got, err := ParseHash(h.String()); err != nil || got != h {
		t.Fatalf("hash round trip: %v, %v", got, err)
	}
	b, err := json.Marshal(struct {
		A AccountID
		H Hash32
	}{a, h})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"A":"` + a.String() + `","H":"` + h.String() + `"}`; string(b) != want {
		t.Fatalf("json %s, want %s", b, want)
	}
	for _, bad := range []string{"", "00", strings.Repeat("0", 63), strings.Repeat("0", 66), strings.Repeat("g", 64)} {
		if _, err := ParseAccountID(bad); err == nil {
			t.Errorf("account %q parsed", bad)
		}
		if _, err := ParseHash(bad); err == nil {
			t.Errorf("hash %q parsed", bad)
		}
	}
}
