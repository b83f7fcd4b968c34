package llm

import (
	"context"
	"errors"
	"fmt"
)

// sequence returns the sequence a generation over tokens runs on: from the
// prefix cache when an entry shares a prefix with them (at most reuse
// positions of it), otherwise a new one of at most maxLen positions. cached
// is how many leading tokens it already holds.
func (e *Engine) sequence(key string, tokens []int, reuse, maxLen int) (seq *Sequence, cached int) {
	seq, cached = e.cache.take(key, tokens, reuse)
	if seq == nil {
		if e.cache != nil && key != "" {
			// A cached sequence is extended by later turns: let it grow to
			// the context length rather than to this answer's bound.
			maxLen = e.opts.MaxContext
		}
		return e.newSequence(maxLen), 0
	}
	seq.setMaxLen(e.opts.MaxContext)
	return seq, cached
}

// Prefill computes the KV state of tokens and keeps it in the prefix cache
// under key (replacing the key's older state), reusing any cached prefix.
// A later Generate whose prompt starts with tokens computes only the rest.
// It implements inference.Prefiller.
func (e *Engine) Prefill(ctx context.Context, key string, tokens []int) error {
	if e.cache == nil {
		return errors.New("llm: prefill: the prefix cache is off")
	}
	if key == "" {
		return errors.New("llm: prefill: no cache key")
	}
	if len(tokens) == 0 {
		return errors.New("llm: prefill: no tokens")
	}
	if len(tokens) >= e.opts.MaxContext {
		return fmt.Errorf("llm: prefill: %d tokens leave no room in the context of %d", len(tokens), e.opts.MaxContext)
	}
	for _, t := range tokens {
		if t < 0 || t >= e.m.Cfg.Vocab {
			return fmt.Errorf("llm: prefill: token %d outside the vocabulary of %d", t, e.m.Cfg.Vocab)
		}
	}
	seq, n := e.sequence(key, tokens, len(tokens), e.opts.MaxContext)
	// Whatever was computed before an error is still a valid prefix.
	defer func() { e.cache.put(key, tokens, seq) }()
	for i := n; i < len(tokens); i += e.opts.PrefillChunk {
		end := min(i+e.opts.PrefillChunk, len(tokens))
		if _, err := seq.Forward(ctx, tokens[i:end], end-i); err != nil {
			return fmt.Errorf("llm: prefill: %w", err)
		}
	}
	return nil
}

// CacheStats reports the prefix cache's entries and the bytes of KV state
// they hold.
func (e *Engine) CacheStats() (entries int, bytes int64) { return e.cache.stats() }
