package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/p2p/expert"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// batchDisputeOpen is the dispute of the expert batch in the evidence
// file evFile, over the record the binding names: bindingFile, or the
// newest binding of the batch's receipt in the store beside the evidence
// (HOME/experts/bindings/MODEL for HOME/experts/evidence/MODEL/FILE).
func batchDisputeOpen(evFile, bindingFile string, bond uint64) (*ledger.DisputeOpen, error) {
	raw, err := os.ReadFile(evFile)
	if err != nil {
		return nil, fmt.Errorf("--batch: %w", err)
	}
	ev, err := expert.DecodeEvidence(raw)
	if err != nil {
		return nil, fmt.Errorf("--batch %s: not expert evidence: %w", evFile, err)
	}
	ref := ev.Ref()
	if bindingFile == "" {
		if bindingFile, err = findBinding(evFile, ref.ReceiptHash); err != nil {
			return nil, err
		}
	}
	raw, err = os.ReadFile(bindingFile)
	if err != nil {
		return nil, fmt.Errorf("--binding: %w", err)
	}
	b, err := expert.DecodeBinding(raw)
	if err != nil {
		return nil, fmt.Errorf("--binding %s: %w", bindingFile, err)
	}
	if !b.Binds(ref.ReceiptHash) {
		return nil, fmt.Errorf("--binding %s: binds other receipts than the batch's %s", bindingFile, ref.ReceiptHash)
	}
	open, err := ev.DisputeOpen(b.Payer, b.RequestDigest, b.ReceiptHashes, bond)
	if err != nil {
		return nil, fmt.Errorf("--batch %s: %w", evFile, err)
	}
	return open, nil
}

// findBinding finds the binding of receiptHash in the bindings store
// that sits beside the evidence file's store in a node's home.
func findBinding(evFile string, receiptHash terms.Hash32) (string, error) {
	evDir := filepath.Dir(evFile)
	dir := filepath.Join(filepath.Dir(filepath.Dir(evDir)), "bindings", filepath.Base(evDir))
	if _, err := os.Stat(dir); err != nil {
		return "", fmt.Errorf("--binding is required: no bindings store beside the evidence (%s): %w", dir, err)
	}
	s, err := expert.OpenSampleStore(dir, 0)
	if err != nil {
		return "", fmt.Errorf("--binding: %w", err)
	}
	name, ok, err := s.Find(receiptHash)
	switch {
	case err != nil:
		return "", fmt.Errorf("--binding: %w", err)
	case !ok:
		return "", fmt.Errorf("--binding: %s binds no record to the batch's receipt %s (its call's record was never signed?)", dir, receiptHash)
	}
	return filepath.Join(dir, name), nil
}
