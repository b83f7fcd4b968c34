package shell

import (
	"bytes"
	"reflect"
	"testing"
)

// TestQuotesShowAttestation: a quote line of an attested provider shows
// the kind and the start of its measurement; one without shows "-".
func TestQuotesShowAttestation(t *testing.T) {
	raw := []byte(`[{"provider":"12D3KooWRBhwfeP2Y4TCx1SM6s9rUoHhR5STiGwxBhgFRcw3UERE","key_backend":"tpm","region":"DE",
	  "in_flight":0,"capacity":4,"breakdown":{"usage":300,"minimum":0},"surcharge":20,"price":320,"quote_digest":"aabbccddeeff00112233",
	  "attested":{"kind":"sev-snp","signer":"VCEK","product_line":"Milan","measurement":"a0a1a2a3a4a5a6a7a8a9"}},
	 {"provider":"12D3KooWAbzQ1ccmRcR4yJQ3b8pZ6hGmP9jX2Vv8kF7sDqWnErTy","key_backend":"software","region":"US",
	  "in_flight":1,"capacity":2,"breakdown":{"usage":400,"minimum":0},"surcharge":1,"price":401,"quote_digest":"99887766554433221100"}]`)
	var out bytes.Buffer
	if err := decoded(renderQuotes)(&out, raw, nil); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	if got, want := lineWith(t, s, "w3UERE"), []string{"1", "12D3Ko…w3UERE", "tpm", "DE", "sev-snp:a0a1a2a3…", "0/4", "300", "0", "20", "320", "aabbcc…112233"}; !reflect.DeepEqual(got, want) {
		t.Errorf("attested quote %q,\n want %q", got, want)
	}
	if got := lineWith(t, s, "WnErTy"); len(got) < 5 || got[4] != "-" {
		t.Errorf("quote without attestation %q: want TEE -", got)
	}
}

// TestQuotesLabelTestAttestation: a devnet's test attestation is shown
// TEST-ONLY in the quotes, and the attested list says what it is.
func TestQuotesLabelTestAttestation(t *testing.T) {
	raw := []byte(`[{"provider":"12D3KooWRBhwfeP2Y4TCx1SM6s9rUoHhR5STiGwxBhgFRcw3UERE","key_backend":"software","region":"DE",
	  "in_flight":0,"capacity":4,"breakdown":{"usage":300,"minimum":0},"surcharge":500,"price":800,"quote_digest":"aabbccddeeff00112233",
	  "attested":{"kind":"test","signer":"TEST-DEVICE","product_line":"TEST-ONLY","measurement":"b0b1b2b3b4b5b6b7"}}]`)
	var out bytes.Buffer
	if err := decoded(renderQuotes)(&out, raw, nil); err != nil {
		t.Fatal(err)
	}
	if got := lineWith(t, out.String(), "w3UERE"); len(got) < 5 || got[4] != "TEST-ONLY:b0b1b2b3…" {
		t.Errorf("test-attested quote %q: want TEE TEST-ONLY:b0b1b2b3…", got)
	}
	out.Reset()
	provs := []providerInfo{{PeerID: "12D3KooWRBhwfeP2Y4TCx1SM6s9rUoHhR5STiGwxBhgFRcw3UERE",
		Attested: &attestedInfo{Kind: "test", Signer: "TEST-DEVICE", ProductLine: "TEST-ONLY", Measurement: "b0b1"}}}
	if err := renderAttested(&out, provs); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out.Bytes(), []byte("TEST-ONLY devnet device")) {
		t.Errorf("attested list without the test-only note:\n%s", out.String())
	}
}
