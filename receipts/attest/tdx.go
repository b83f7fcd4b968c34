package attest

import (
	"bytes"
	"crypto/subtle"
	"fmt"
	"time"

	tdxabi "github.com/google/go-tdx-guest/abi"
	tdxpb "github.com/google/go-tdx-guest/proto/tdx"
	tdxverify "github.com/google/go-tdx-guest/verify"
)

// tdAttributesDebug is bit 0 of TD_ATTRIBUTES: the TD is debuggable.
const tdAttributesDebug = 0x01

// verifyTDX checks an Intel TDX quote: its PCK chain up to Intel's SGX root
// (embedded in go-tdx-guest) and the quote signatures, then the binding and
// the session expiry. Intel's TCB-info and QE-identity collateral are not
// fetched (no network in a validator), so Policy.MinTCB and the CRLs do not
// apply to TDX. The chain is checked first so that a refusal for the key
// says the quote itself is genuine.
func verifyTDX(att *Attestation, session Session, p *Policy, now time.Time) (*Result, error) {
	parsed, err := tdxabi.QuoteToProto(att.Report)
	if err != nil {
		return nil, fmt.Errorf("%w: tdx quote: %w", ErrMalformed, err)
	}
	q, ok := parsed.(*tdxpb.QuoteV4)
	if !ok {
		return nil, fmt.Errorf("%w: tdx quote of type %T, want v4", ErrMalformed, parsed)
	}
	ts := &tdxverify.TimeSet{PckCertChain: now, TcbInfo: now, QeIdentity: now, PckCrl: now, RootCaCrl: now}
	if err := tdxverify.TdxQuote(q, &tdxverify.Options{Now: ts, TrustedRoots: p.TDXRoots}); err != nil {
		return nil, fmt.Errorf("%w: tdx: %w", ErrChain, err)
	}
	body := q.GetTdQuoteBody()
	want := ReportData(session.Pub)
	if subtle.ConstantTimeCompare(body.GetReportData(), want[:]) != 1 {
		return nil, ErrWrongKey
	}
	if !now.Before(session.NotAfter) {
		return nil, fmt.Errorf("%w: %w: session certificate expired at %s", ErrStale, ErrSessionExpired,
			session.NotAfter.UTC().Format(time.RFC3339))
	}
	if a := body.GetTdAttributes(); len(a) > 0 && a[0]&tdAttributesDebug != 0 {
		return nil, ErrDebugGuest
	}
	return &Result{Kind: KindTDX, Signer: "PCK", Measurement: bytes.Clone(body.GetMrTd()), ProductLine: "TDX",
		SessionPub: bytes.Clone(session.Pub), NotAfter: session.NotAfter}, nil
}
