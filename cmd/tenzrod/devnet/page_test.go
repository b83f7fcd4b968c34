package devnet

import (
	"bytes"
	"strings"
	"testing"
)

// TestWelcomePrintsThePage: the welcome names the gateway's page with the
// buyer's account filled in.
func TestWelcomePrintsThePage(t *testing.T) {
	var out bytes.Buffer
	m := Manifest{Network: "n", Gateway: "http://127.0.0.1:7", BuyerChainAccount: strings.Repeat("ab", 32)}
	printWelcome(Options{Out: &out, Binary: "tenzrod", Network: "n"}, m)
	want := "page      http://127.0.0.1:7/?account=" + m.BuyerChainAccount + "\n"
	if !strings.Contains(out.String(), want) {
		t.Fatalf("welcome lacks %q:\n%s", want, out.String())
	}
}
