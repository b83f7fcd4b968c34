package llm

import (
	"fmt"

	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/inference/grammar"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// grammarVocab is the tokenizer's vocabulary for grammar masks: the trie
// over every token's bytes is the costly part of a mask, and the same for
// every request.
func (t *Tokenizer) grammarVocab() *grammar.Vocab {
	t.grammarOnce.Do(func() {
		pieces := make([][]byte, len(t.tokens))
		var end []int
		for id := range t.tokens {
			if t.eog[id] {
				end = append(end, id)
				continue
			}
			// Only normal and byte tokens write answer text: a
			// user-defined token would decode to its raw text but
			// tokenize back as itself.
			if t.types[id] == tokNormal || t.types[id] == tokByte {
				pieces[id] = t.Piece(id)
			}
		}
		t.grammar = grammar.NewVocab(pieces, end)
	})
	return t.grammar
}

// constraintGrammar is the grammar a request's answer must follow, or
// nil for free text.
func constraintGrammar(sp inference.Sampling) (*grammar.Grammar, error) {
	if fns := calledFunctions(sp); fns != nil {
		g, err := grammar.CompileToolCall(fns)
		if err != nil {
			return nil, fmt.Errorf("llm: tool_choice: %w", err)
		}
		return g, nil
	}
	if f := sp.Format; f != nil {
		switch f.Type {
		case terms.FormatJSONObject:
			return grammar.JSONObject(), nil
		case terms.FormatJSONSchema:
			g, err := grammar.CompileSchema(f.Schema)
			if err != nil {
				return nil, fmt.Errorf("llm: response_format: %w", err)
			}
			return g, nil
		}
		return nil, fmt.Errorf("llm: response_format type %q", f.Type)
	}
	return nil, nil
}

// calledFunctions are the functions an answer must call one of: every
// tool under tool_choice "required", the named one under a function
// choice; nil when the model may answer in text.
func calledFunctions(sp inference.Sampling) []grammar.Function {
	var fns []grammar.Function
	for _, t := range sp.Tools {
		if sp.ToolChoice == terms.ToolChoiceRequired || sp.ToolChoice == terms.ToolChoiceFunction && t.Name == sp.ToolName {
			fns = append(fns, grammar.Function{Name: t.Name, Parameters: t.Parameters})
		}
	}
	return fns
}

// constraint is a request's mask: the grammar's matcher and the budget.
type constraint struct {
	c   *grammar.Constraint
	tok *Tokenizer
}

// newConstraint returns nil for free text.
func (e *Engine) newConstraint(sp inference.Sampling) (*constraint, error) {
	g, err := constraintGrammar(sp)
	if g == nil || err != nil {
		return nil, err
	}
	return &constraint{c: e.m.Tok.grammarVocab().NewConstraint(g), tok: e.m.Tok}, nil
}

// accept advances past id; an error names a token the grammar refuses
// (a continuation another provider emitted outside it).
func (k *constraint) accept(id int) error {
	if !k.c.Accept(id, k.tok.Piece(id)) {
		return fmt.Errorf("llm: token %d leaves the response format's grammar", id)
	}
	return nil
}

// allowed is the mask at a step with budget tokens left (this one
// included).
func (k *constraint) allowed(budget int) ([]int, error) {
	ids, err := k.c.Allowed(budget)
	if err != nil {
		return nil, fmt.Errorf("llm: response format: %w", err)
	}
	return ids, nil
}

// sampleMasked draws among allowed only (ascending IDs): the sampler
// runs on their logits alone, so greedy takes the likeliest allowed token
// (lowest ID on ties) and top-k/top-p apply within the mask. want, when
// ≥ 0, is checked as sampleNear does. No token allowed draws -1.
func sampleMasked(logits []float32, allowed []int, sp inference.Sampling, pos, want int) (int, bool) {
	if len(allowed) == 0 {
		return -1, false
	}
	sub := make([]float32, len(allowed))
	wantAt := -1
	for i, id := range allowed {
		sub[i] = logits[id]
		if id == want {
			wantAt = i
		}
	}
	i, near := sampleNear(sub, sp, pos, wantAt)
	return allowed[i], near && wantAt >= 0
}
