package provider

import (
	"errors"
	"fmt"
	"os"

	"github.com/google/go-sev-guest/abi"

	"github.com/tenzrod/tenzrod/receipts/attest"
)

// QuoteProvider is an SEV-SNP guest's firmware interface: the raw report
// for REPORT_DATA followed by the host's certificate table. go-sev-guest's
// configfs-tsm and ioctl providers satisfy it, and so does its fake in
// tests (receipts/attest/attesttest).
type QuoteProvider interface {
	GetRawQuote(reportData [64]byte) ([]uint8, error)
}

// source fetches an attestation whose REPORT_DATA binds the session key
// pub (PKIX DER). bound says whether a result is tied to pub alone (a
// device asked with pub's REPORT_DATA), so it can be kept for the session.
type source interface {
	fetch(pub []byte) (*attest.Attestation, error)
	bound() bool
}

// newSource opens the configured source. A missing device or file is an
// error naming the key; quotes, when set, replaces the device (tests).
func newSource(cfg AttestationConfig, path func(string) string, quotes QuoteProvider) (source, error) {
	var ek []byte
	if cfg.EKCert != "" {
		var err error
		if ek, err = os.ReadFile(path(cfg.EKCert)); err != nil {
			return nil, fmt.Errorf("provider.attestation.ek_cert: %w", err)
		}
	}
	switch cfg.Source {
	case AttestNone:
		return nil, nil
	case AttestFile:
		return &fileSource{path: path(cfg.File), ek: ek}, nil
	case AttestTest:
		raw, err := os.ReadFile(path(cfg.File))
		if err != nil {
			return nil, fmt.Errorf("provider.attestation.file: %w", err)
		}
		dev, err := attest.ParseTestDevice(raw)
		if err != nil {
			return nil, fmt.Errorf("provider.attestation.file: %s: %w", cfg.File, err)
		}
		return testSource{dev}, nil
	case AttestSEVSNP:
		if quotes == nil {
			var err error
			if quotes, err = openDevice(cfg.Device); err != nil {
				return nil, fmt.Errorf("provider.attestation.device: %w", err)
			}
		}
		return &deviceSource{qp: quotes, ek: ek}, nil
	}
	return nil, fmt.Errorf("provider.attestation.source: %q is not one of \"\", %q, %q, %q", cfg.Source, AttestFile, AttestSEVSNP, AttestTest)
}

// errNoDevice: no SEV-SNP guest interface on this machine.
var errNoDevice = errors.New("no SEV-SNP guest interface (is this an SEV-SNP guest with the sev-guest driver loaded?)")

// deviceSource asks this guest's firmware for a report binding the key.
type deviceSource struct {
	qp QuoteProvider
	ek []byte
}

func (d *deviceSource) bound() bool { return true }

func (d *deviceSource) fetch(pub []byte) (*attest.Attestation, error) {
	raw, err := d.qp.GetRawQuote(attest.ReportData(pub))
	if err != nil {
		return nil, fmt.Errorf("sev-snp report: %w", err)
	}
	return attest.FromSNPQuote(raw, d.ek)
}

// fileSource reads an attestation someone else produced; it writes the
// REPORT_DATA the current key needs beside it for that someone.
type fileSource struct {
	path    string
	ek      []byte
	written []byte // the key whose REPORT_DATA was last written
}

func (f *fileSource) bound() bool { return false }

// ReportDataSuffix names the file beside [provider.attestation] file that
// holds, hex, the REPORT_DATA the current session key needs.
const ReportDataSuffix = ".report_data"

func (f *fileSource) fetch(pub []byte) (*attest.Attestation, error) {
	if string(f.written) != string(pub) {
		rd := attest.ReportData(pub)
		if err := os.WriteFile(f.path+ReportDataSuffix, fmt.Appendf(nil, "%x\n", rd[:]), 0o644); err != nil {
			return nil, fmt.Errorf("write the REPORT_DATA to bind: %w", err)
		}
		f.written = append([]byte(nil), pub...)
	}
	raw, err := os.ReadFile(f.path)
	if err != nil {
		return nil, err
	}
	return decodeAttestation(raw, f.ek)
}

// decodeAttestation reads either encoding a file may hold: the CBOR of an
// attestation, or an SEV-SNP raw quote.
func decodeAttestation(raw, ek []byte) (*attest.Attestation, error) {
	att, err := attest.Unmarshal(raw)
	if err == nil {
		return att, nil
	}
	if len(raw) < abi.ReportSize {
		return nil, fmt.Errorf("neither an encoded attestation (%w) nor an SEV-SNP report (%d bytes)", err, len(raw))
	}
	q, qerr := attest.FromSNPQuote(raw, ek)
	if qerr != nil {
		return nil, fmt.Errorf("neither an encoded attestation (%w) nor an SEV-SNP quote (%w)", err, qerr)
	}
	return q, nil
}

// testSource is the TEST-ONLY device of a devnet: it attests every session
// key it is given, which is why only a test root's nodes accept it.
type testSource struct{ dev *attest.TestDevice }

func (testSource) bound() bool { return true }

func (s testSource) fetch(pub []byte) (*attest.Attestation, error) { return s.dev.Attest(pub), nil }
