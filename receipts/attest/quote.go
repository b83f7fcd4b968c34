package attest

import (
	"bytes"
	"fmt"

	"github.com/google/go-sev-guest/abi"
)

// FromSNPQuote builds an attestation from what an SEV-SNP guest gets from
// its firmware: the raw report followed by the host's certificate table
// (go-sev-guest's QuoteProvider.GetRawQuote, the configfs-tsm outblob and
// auxblob). ekCert, when given (DER), is the VCEK or VLEK to carry instead
// of the table's: a host that supplies no table leaves the guest to fetch
// its endorsement key certificate itself. The report says which key signed
// it; that certificate must be present. It does not verify the attestation.
func FromSNPQuote(raw, ekCert []byte) (*Attestation, error) {
	if len(raw) < abi.ReportSize {
		return nil, fmt.Errorf("%w: sev-snp quote is %d bytes, shorter than a %d-byte report", ErrMalformed, len(raw), abi.ReportSize)
	}
	report := raw[:abi.ReportSize]
	rep, err := abi.ReportToProto(report)
	if err != nil {
		return nil, fmt.Errorf("%w: sev-snp report: %w", ErrMalformed, err)
	}
	info, err := abi.ParseSignerInfo(rep.GetSignerInfo())
	if err != nil {
		return nil, fmt.Errorf("%w: signer info: %w", ErrMalformed, err)
	}
	att := &Attestation{Kind: KindSEVSNP, Report: bytes.Clone(report), EKCert: bytes.Clone(ekCert)}
	if table := raw[abi.ReportSize:]; len(table) > 0 {
		certs := new(abi.CertTable)
		if err := certs.Unmarshal(table); err != nil {
			return nil, fmt.Errorf("%w: certificate table: %w", ErrMalformed, err)
		}
		chain := certs.Proto()
		if len(att.EKCert) == 0 {
			switch info.SigningKey {
			case abi.VcekReportSigner:
				att.EKCert = bytes.Clone(chain.GetVcekCert())
			case abi.VlekReportSigner:
				att.EKCert = bytes.Clone(chain.GetVlekCert())
			}
		}
		if info.SigningKey == abi.VcekReportSigner {
			// The table's ASK signs VCEKs only; a VLEK's ASVK is
			// not in it, and the verifier's roots supply it.
			att.Intermediate = bytes.Clone(chain.GetAskCert())
		}
		att.Root = bytes.Clone(chain.GetArkCert())
	}
	if len(att.EKCert) == 0 {
		return nil, fmt.Errorf("%w: no %v certificate in the quote's table and none configured", ErrMalformed, info.SigningKey)
	}
	if len(att.Intermediate) == 0 {
		att.Intermediate = nil
	}
	if len(att.Root) == 0 {
		att.Root = nil
	}
	if err := att.checkShape(); err != nil {
		return nil, err
	}
	return att, nil
}
