package terms

// Wire error codes of /tenzro/infer/1.0.0 error frames, shared by the
// provider that sends them, the protocol that frames them and the gateway
// that acts on them. A handler may send other codes (e.g. an upstream
// engine's own); these are the ones the market's parts interpret.
const (
	// CodeBadRequest: the request breaks a protocol limit or does not
	// decode; the buyer's fault, never the provider's.
	CodeBadRequest = "bad_request"
	// CodeShuttingDown: the server is stopping.
	CodeShuttingDown = "shutting_down"
	// CodeTimeout: the stream outlived the server's limit.
	CodeTimeout = "timeout"
	// CodeInternal: the server failed for a reason of its own.
	CodeInternal = "internal_error"

	// CodeContinuationUnsupported: it cannot continue another provider's
	// text; the gateway then restarts cleanly.
	CodeContinuationUnsupported = "continuation_unsupported"
	// CodeModelNotServed: it does not (or no longer) serve the model.
	CodeModelNotServed = "model_not_served"
	// CodeVerificationUnsupported: it cannot give the verification level.
	CodeVerificationUnsupported = "verification_unsupported"
	// CodeCommitmentsUnavailable: its engine cannot produce logit
	// commitments.
	CodeCommitmentsUnavailable = "commitments_unavailable"
	// CodeLogProbsUnavailable: its engine returned no log-probs.
	CodeLogProbsUnavailable = "logprobs_unavailable"
	// CodeGenerationRefused: the engine refused the request as given (e.g.
	// a prompt longer than its context); the buyer's fault.
	CodeGenerationRefused = "generation_refused"
	// CodeExpertsUnavailable: a MoE model's experts run at holders and no
	// holder answered for one of them (none known yet after a restart, or
	// every one down); status 503 with a retry hint, and a gateway tries
	// another provider.
	CodeExpertsUnavailable = "experts_unavailable"
	// CodeReceiptFailed and CodeCommitmentFailed: the provider could not
	// sign its receipt or build its commitment.
	CodeReceiptFailed    = "receipt_failed"
	CodeCommitmentFailed = "commitment_failed"
	// CodeParamUnsupported: the request uses a parameter (tools,
	// response_format) the provider's offer does not announce.
	CodeParamUnsupported = "param_unsupported"
	// CodeCapacity: every engine slot is busy; retry after the hint.
	CodeCapacity = "capacity"

	// CodeBusy: the provider is at capacity (its slots and fair queue are
	// full, or this caller holds its per-peer share); status 429 with a
	// retry hint. A gateway fails over without counting a failure.
	CodeBusy = "busy"
	// CodeRateLimited: the shared budget of callers the provider does not
	// know is spent; status 429 with a retry hint.
	CodeRateLimited = "rate_limited"
	// CodeWrongNetwork: the request names another network (status 421).
	CodeWrongNetwork = "wrong_network"
	// CodePaymentRequired: the call carries no pay authorization, or one
	// that does not verify, or names an escrow that cannot cover it
	// (status 402). A gateway fails over without counting a failure.
	CodePaymentRequired = "payment_required"
	// CodeUnpaid: the settler owes this provider payment records for calls
	// it was served (status 402); it is served again once they arrive.
	CodeUnpaid = "unpaid"
	// CodeStopped: the client stopped the call and the handler returned no
	// final frame (status 499).
	CodeStopped = "stopped"
)

// CapabilityCodes are refusals for what a provider cannot do rather than
// for what is wrong with the request: the gateway tries another provider
// without counting a failure.
var CapabilityCodes = map[string]bool{
	CodeContinuationUnsupported: true, CodeModelNotServed: true, CodeVerificationUnsupported: true,
	CodeCommitmentsUnavailable: true, CodeLogProbsUnavailable: true, CodeWrongNetwork: true,
	CodePaymentRequired: true, CodeUnpaid: true, CodeParamUnsupported: true,
}
