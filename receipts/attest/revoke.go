package attest

import (
	"crypto/x509"
	"fmt"
	"math/big"
)

// checkRevoked applies every CRL that ark signed to the intermediate and
// the endorsement key. It is done here rather than by go-sev-guest's
// revocation check because that one fetches the CRL from the network, reads
// only the intermediate, and reports by message text; a CRL signed by
// another ARK belongs to another chain and is skipped.
func checkRevoked(crls []*x509.RevocationList, ark, ica, ek *x509.Certificate) error {
	for _, crl := range crls {
		if crl == nil || crl.CheckSignatureFrom(ark) != nil {
			continue
		}
		for _, e := range crl.RevokedCertificateEntries {
			if sameSerial(e.SerialNumber, ica.SerialNumber) {
				return fmt.Errorf("%w: intermediate %q (serial %s) revoked at %s", ErrRevoked,
					ica.Subject.CommonName, ica.SerialNumber, e.RevocationTime.UTC())
			}
			if sameSerial(e.SerialNumber, ek.SerialNumber) {
				return fmt.Errorf("%w: endorsement key certificate (serial %s) revoked at %s", ErrRevoked,
					ek.SerialNumber, e.RevocationTime.UTC())
			}
		}
	}
	return nil
}

func sameSerial(a, b *big.Int) bool { return a != nil && b != nil && a.Cmp(b) == 0 }
