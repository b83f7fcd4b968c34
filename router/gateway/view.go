package gateway

import (
	"encoding/hex"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/router/pricing"
)

// ReceiptView shows a verified receipt with hashes in hex.
type ReceiptView struct {
	ModelID         string                 `json:"model_id"`
	Engine          string                 `json:"engine"`
	MachineID       string                 `json:"machine_id"`
	ProviderPeer    string                 `json:"provider_peer"`
	Nonce           string                 `json:"nonce"`
	InputCommitment string                 `json:"input_commitment"`
	OutputHash      string                 `json:"output_hash"`
	Units           pricing.Units          `json:"units"`
	Sampling        receipt.SamplingParams `json:"sampling"`
	CommitmentHash  string                 `json:"commitment_hash,omitempty"`
	FinishReason    string                 `json:"finish_reason"`
	TimeMs          int64                  `json:"time_ms"`
	ExpertsHash     string                 `json:"experts_hash,omitempty"` // of the holders a MoE call lists (tenzro.experts)
	TokensHash      string                 `json:"tokens_hash,omitempty"`  // of the token IDs an optimistic answer's proofs are of
}

// ViewReceipt converts a receipt for display.
func ViewReceipt(r *receipt.Receipt) *ReceiptView {
	if r == nil {
		return nil
	}
	ps := peerString(r.ProviderPeer)
	return &ReceiptView{
		ModelID: hex.EncodeToString(r.ModelID), Engine: r.Engine, MachineID: hex.EncodeToString(r.MachineID), ProviderPeer: ps,
		Nonce: hex.EncodeToString(r.Nonce), InputCommitment: hex.EncodeToString(r.InputCommitment), OutputHash: hex.EncodeToString(r.OutputHash),
		Units: r.Units, Sampling: r.Sampling, CommitmentHash: hex.EncodeToString(r.CommitmentHash), FinishReason: r.FinishReason, TimeMs: r.TimeMs,
		ExpertsHash: hex.EncodeToString(r.ExpertsHash), TokensHash: hex.EncodeToString(r.TokensHash),
	}
}

// PaymentView shows a bill with digests in hex.
type PaymentView struct {
	RequestDigest string            `json:"request_digest"`
	QuoteDigest   string            `json:"quote_digest"`
	Payer         string            `json:"payer"`
	ProviderPeer  string            `json:"provider_peer"`
	MachineID     string            `json:"machine_id"`
	ReceiptHash   string            `json:"receipt_hash"`
	Units         pricing.Units     `json:"units"`
	Breakdown     pricing.Breakdown `json:"breakdown"`
	Price         uint64            `json:"price"`
	TimeMs        int64             `json:"time_ms"`
	Digest        string            `json:"digest"`
	// Signed is the chain's record the gateway signed as settler, which
	// settles the call on chain; absent off chain.
	Signed *SignedView `json:"signed,omitempty"`
}

// SignedView shows the chain's payment record with hashes in hex; Record
// is its canonical CBOR (with the receipt), base64 in JSON: what anyone
// may submit in a Settlement.
type SignedView struct {
	Payer         string `json:"payer"`
	Settler       string `json:"settler"`
	Provider      string `json:"provider_machine"`
	RequestDigest string `json:"request_digest"`
	Price         uint64 `json:"price"`
	Units         uint64 `json:"units"`
	Time          int64  `json:"time"`
	ExpiryHeight  int64  `json:"expiry_height"`
	Sig           string `json:"sig"`
	Record        []byte `json:"record"`
}

// ViewSigned converts a signed chain record for display.
func ViewSigned(r *receipt.PaymentRecord) *SignedView {
	if r == nil {
		return nil
	}
	raw, _ := cborx.Marshal(r) // a record of fixed-size fields and bytes always encodes
	return &SignedView{Payer: r.Payer.String(), Settler: r.Settler.String(), Provider: r.Provider.String(),
		RequestDigest: r.RequestDigest.String(), Price: r.Price, Units: r.Units, Time: r.Time, ExpiryHeight: r.ExpiryHeight,
		Sig: hex.EncodeToString(r.Sig), Record: raw}
}

// ViewPayment converts a bill for display.
func ViewPayment(p *receipt.Bill) *PaymentView {
	if p == nil {
		return nil
	}
	ps := peerString(p.ProviderPeer)
	d := p.Digest()
	return &PaymentView{
		RequestDigest: hex.EncodeToString(p.RequestDigest), QuoteDigest: hex.EncodeToString(p.QuoteDigest), Payer: p.Payer,
		ProviderPeer: ps, MachineID: hex.EncodeToString(p.MachineID), ReceiptHash: hex.EncodeToString(p.ReceiptHash),
		Units: p.Units, Breakdown: p.Breakdown, Price: p.Price, TimeMs: p.TimeMs, Digest: hex.EncodeToString(d[:]),
	}
}

// peerString shows peer ID bytes as a peer ID, or as hex if they are not one.
func peerString(b []byte) string {
	if pid, err := peer.IDFromBytes(b); err == nil {
		return pid.String()
	}
	return hex.EncodeToString(b)
}

// shortPeer is a peer ID's tail, enough to tell providers apart.
func shortPeer(p peer.ID) string {
	s := p.String()
	if len(s) <= 10 {
		return s
	}
	return s[:6] + "…" + s[len(s)-6:]
}
