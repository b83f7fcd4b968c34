package gateway

import (
	"bytes"
	"encoding/hex"
	"errors"

	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/store"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// EvidenceKeeper is a Ledger that also keeps what a buyer needs to
// dispute a paid optimistic answer (the node's store is one): the proofs,
// the token IDs and the input, beside the receipt kept by nonce. A Ledger
// without it keeps none, and its buyers assemble their evidence by hand.
type EvidenceKeeper interface {
	PutEvidence(requestDigest []byte, e store.Evidence) error
}

// keepEvidence keeps a paid optimistic answer's dispute evidence under its
// request digest, only when it is exactly what the receipt signs (the
// chain refuses anything else, so keeping other evidence would only
// mislead the buyer): the token IDs hash to its TokensHash, which a buyer
// who left mid-stream may not have all of, and the input, as JSON, commits
// to its input commitment.
func (g *Gateway) keepEvidence(req *Request, s *stream, r *receipt.Receipt, rd [32]byte) {
	k, ok := g.ledger.(EvidenceKeeper)
	if !ok || req.Verification != terms.VerifyOptimistic {
		return
	}
	err := func() error {
		ids, ok := receipt.TokenIDs(s.ids)
		if !ok {
			return errors.New("a token ID is out of range")
		}
		if h := receipt.TokensHash(ids); !bytes.Equal(h[:], r.TokensHash) {
			return errors.New("the token IDs received are not the ones the receipt signs")
		}
		in := receipt.EvidenceInput{Chat: s.req.Chat, Messages: s.req.Messages, Prompt: s.req.Prompt,
			Continuation: s.req.Continuation, Sampling: s.req.Sampling}
		raw, err := receipt.EncodeEvidenceInput(in)
		if err != nil {
			return err
		}
		// JSON replaces invalid UTF-8: the input must read back as it was signed.
		back, err := receipt.DecodeEvidenceInput(raw)
		if err != nil {
			return err
		}
		if c := back.Commitment(s.req.ModelID); !bytes.Equal(c[:], r.InputCommitment) {
			return errors.New("the input does not read back as the receipt commits to it")
		}
		return k.PutEvidence(rd[:], store.Evidence{Payer: req.Payer, Nonce: s.req.Nonce, Proofs: s.final.Commitment,
			Tokens: ids, Input: raw})
	}()
	if err != nil {
		g.log.Warn("dispute evidence not kept; the buyer cannot dispute this answer from this node",
			"request", hex.EncodeToString(rd[:8]), "err", err)
	}
}
