package shell

import (
	"fmt"
	"io"
)

// attestedInfo is a provider's verified TEE attestation as the API shows
// it (router.AttestedView): present only when this node verified it.
type attestedInfo struct {
	Kind        string `json:"kind"`
	Signer      string `json:"signer"`
	ProductLine string `json:"product_line"`
	Measurement string `json:"measurement"`
}

// testKind is the kind of a devnet's TEST-ONLY attestation (attest.KindTest).
const testKind = "test"

// teeLabel is the TEE column: the attestation's kind and the start of its
// launch measurement, or "-" for a provider never quoted at tee; a devnet's
// test attestation says TEST-ONLY, never passing for hardware.
func teeLabel(a *attestedInfo) string {
	if a == nil {
		return "-"
	}
	if a.Kind == testKind {
		return "TEST-ONLY:" + shortHex(a.Measurement)
	}
	return a.Kind + ":" + shortHex(a.Measurement)
}

// renderAttested lists every attested provider with its full measurement
// (what an operator compares with the guest image it expects).
func renderAttested(w io.Writer, provs []providerInfo) error {
	n, test := 0, false
	tw := newTable(w)
	for _, p := range provs {
		if p.Attested == nil {
			continue
		}
		if n == 0 {
			fmt.Fprintln(tw, "PEER\tATTESTED\tSIGNER\tPRODUCT_LINE\tMEASUREMENT")
		}
		n++
		a := p.Attested
		test = test || a.Kind == testKind
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", shortID(p.PeerID), orDash(a.Kind), orDash(a.Signer), orDash(a.ProductLine), orDash(a.Measurement))
	}
	if n == 0 {
		_, err := fmt.Fprintln(w, "no provider is attested: none is quoted at tee")
		return err
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if _, err := fmt.Fprintln(w, "attested: a TEE report bound to the provider's session key, verified here against the vendor chain; only these are quoted at tee"); err != nil || !test {
		return err
	}
	_, err := fmt.Fprintln(w, "kind test: a TEST-ONLY devnet device under this node's [attest] test_root; it proves nothing about confidentiality")
	return err
}
