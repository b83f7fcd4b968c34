package provider

import (
	"errors"
	"fmt"
	"slices"

	"github.com/tenzrod/tenzrod/receipts/terms"
)

// Attestation sources ([provider.attestation] source).
const (
	AttestNone   = ""        // no attestation: never quoted at `tee`
	AttestFile   = "file"    // an attestation someone else fetches, read from a file
	AttestSEVSNP = "sev-snp" // this guest's SEV-SNP firmware, asked for each session key
	// AttestTest is a TEST-ONLY device file (devnets): it "attests" every
	// session key and is accepted only by nodes trusting its test root.
	AttestTest = "test"
)

// SEV-SNP guest interfaces ([provider.attestation] device).
const (
	DeviceAuto     = "auto"         // configfs-tsm if the kernel has it, else /dev/sev-guest
	DeviceConfigFS = "configfs-tsm" // /sys/kernel/config/tsm/report
)

// AttestationConfig is [provider.attestation]: where the TEE attestation
// this provider announces comes from. Whatever the source, the report's
// REPORT_DATA must bind the current session key
// (attest.ReportData(session key)); a new one is obtained whenever the
// session key rotates, and one that does not verify under this node's
// [attest] policy is not announced.
type AttestationConfig struct {
	// Source is "" (none), "file", "sev-snp" or, on a devnet, "test".
	Source string `toml:"source" comment:"\"\" = none (a model may then not offer tee) | \"sev-snp\" (ask this guest's firmware) | \"file\" | \"test\" (TEST-ONLY devnet device file, accepted only under its test_root)."`
	// File, for source "file", holds the attestation: its CBOR encoding
	// (receipts/attest) or an SEV-SNP raw quote (the 1184-byte report,
	// optionally followed by the host's certificate table). It is re-read
	// at each announcement. The REPORT_DATA it must bind is written, hex,
	// to File + ".report_data" whenever the session key changes, for the
	// tool that produces it.
	File string `toml:"file" comment:"file: an attestation your own tool fetches (CBOR, or an SEV-SNP report with its certificate table), re-read at each announcement; the REPORT_DATA it must carry is written to FILE.report_data (hex)."`
	// Device, for source "sev-snp": "auto", "configfs-tsm", or the path
	// of an SEV guest device (/dev/sev-guest).
	Device string `toml:"device" comment:"sev-snp: auto (configfs-tsm, else /dev/sev-guest) | configfs-tsm | a device path"`
	// EKCert, optional, is a DER file of this chip's VCEK (or VLEK), for a
	// host that does not hand the guest its certificate table.
	EKCert string `toml:"ek_cert" comment:"Optional DER of this chip's VCEK, if the host supplies no certificate table."`
}

// DefaultAttestationConfig is no attestation, auto device when enabled.
func DefaultAttestationConfig() AttestationConfig { return AttestationConfig{Device: DeviceAuto} }

// Validate checks the section, naming each bad key. Files and devices are
// opened when the role is built (New), where a missing one is an error.
func (a AttestationConfig) Validate() error {
	var errs []error
	switch a.Source {
	case AttestNone:
	case AttestFile, AttestTest:
		if a.File == "" {
			errs = append(errs, fmt.Errorf("provider.attestation.file: required with source = %q", a.Source))
		}
	case AttestSEVSNP:
		if a.Device == "" {
			errs = append(errs, fmt.Errorf("provider.attestation.device: required with source = %q (%q, %q or a device path)",
				AttestSEVSNP, DeviceAuto, DeviceConfigFS))
		}
	default:
		errs = append(errs, fmt.Errorf("provider.attestation.source: %q is not one of \"\", %q, %q, %q", a.Source, AttestFile, AttestSEVSNP, AttestTest))
	}
	if a.Source != AttestFile && a.Source != AttestTest && a.File != "" {
		errs = append(errs, fmt.Errorf("provider.attestation.file: set, but source is %q", a.Source))
	}
	return errors.Join(errs...)
}

// validateAttestation checks [provider.attestation] and that a model
// offering `tee` has an attestation to back it (without one it would never
// be quoted at that level).
func (p Config) validateAttestation() error {
	errs := []error{p.Attestation.Validate()}
	if p.Attestation.Source == AttestNone {
		for i, m := range p.Models {
			if slices.Contains(m.Verification, terms.VerifyTEE) {
				errs = append(errs, fmt.Errorf("provider.models[%d].verification: %q needs [provider.attestation] source (file, sev-snp or, on a devnet, test)", i, terms.VerifyTEE))
			}
		}
	}
	return errors.Join(errs...)
}
