package provider

import (
	"context"
	"time"

	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/p2p/infer"
	"github.com/tenzrod/tenzrod/p2p/sessioncache"
	"github.com/tenzrod/tenzrod/receipts/receipt"
)

// stateSendTimeout bounds the delivery of one turn's state.
const stateSendTimeout = 10 * time.Second

// conversation returns the token IDs of the session so far as the next
// turn's prompt will start: for chat, the messages with this turn's
// answer rendered by the chat template, cut where a following turn's
// header begins to differ (found by rendering one), so a cache holding
// them is reused whole. A raw prompt is followed by the answer's tokens.
func conversation(eng inference.Engine, gr inference.GenerateRequest, answer string, res inference.Result) []int {
	if len(gr.Messages) == 0 {
		return append(append([]int(nil), res.Prompt...), res.Tokens...)
	}
	msgs := append(append([]inference.Message(nil), gr.Messages...), inference.Message{Role: "assistant", Content: answer})
	a, err := eng.EncodePrompt(inference.GenerateRequest{Messages: msgs})
	if err != nil {
		return nil
	}
	b, err := eng.EncodePrompt(inference.GenerateRequest{Messages: append(msgs, inference.Message{Role: "user", Content: "."})})
	if err != nil {
		return nil
	}
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return a[:n]
}

// afterTurn runs a served session turn's duties in the background: keep
// the conversation warm in this engine for the next turn, and seal it to
// the session's successor.
func (s *sessions) afterTurn(req *infer.Request, eng inference.Engine, gr inference.GenerateRequest, answer string, res inference.Result) {
	t := req.Session
	if t == nil {
		return
	}
	if t.Failover && s.hold != nil {
		// This node is the session's primary now; the gateway assigns
		// it a new successor.
		s.hold.Forget(t.ID)
	}
	tokens := conversation(eng, gr, answer, res)
	if len(tokens) == 0 || len(tokens) > sessioncache.MaxStateTokens {
		return
	}
	s.warm(t.ID, req.ModelID, tokens)
	to, ok, err := successorOf(t)
	if err != nil || !ok {
		return
	}
	sp, err := receipt.NewSamplingParams(req.Sampling)
	if err != nil {
		return
	}
	st := &sessioncache.State{SessionID: t.ID, Turn: t.Turn, ModelID: append([]byte(nil), req.ModelID...), Sampling: sp,
		Tokens: make([]uint32, len(tokens))}
	for i, id := range tokens {
		st.Tokens[i] = uint32(id)
	}
	key := append([]byte(nil), t.SuccessorKey...)
	s.spawn(func() {
		log := s.p.d.Log.With("session", t.ID, "turn", t.Turn, "successor", to)
		sess, err := s.p.d.Session.Current()
		if err == nil {
			var sealed []byte
			if sealed, err = sessioncache.Seal(sess, key, st); err == nil {
				ctx, cancel := context.WithTimeout(s.ctx, stateSendTimeout)
				err = sessioncache.SendState(ctx, s.p.d.Host.Host(), to, sealed)
				cancel()
			}
		}
		if err != nil {
			s.met.Failed.Inc()
			log.Warn("session state not delivered to the successor", "err", err)
			return
		}
		s.met.Sent.Inc()
		log.Debug("session state sealed to the successor", "tokens", len(st.Tokens))
	})
}
