package ledger

// CheckRecordEvidence runs the chain's own check of a record dispute's
// evidence against the settled record (checkEvidence), for a disputer's
// preflight: nil means a DisputeOpen carrying it is not refused as bad
// evidence (CodeBadEvidence). It is the same function the chain runs, so
// the preflight cannot drift from the rule.
func CheckRecordEvidence(rec *SettledRecord, e *DisputeEvidence) error {
	_, err := checkEvidence(rec, e)
	return err
}
