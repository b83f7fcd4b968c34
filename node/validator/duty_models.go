package validator

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/inference/llm"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// ModelConfig is one [[validator.models]] entry: weights this validator
// holds, declares on chain (ModelDeclare) and re-executes disputed
// answers with.
type ModelConfig struct {
	Name string `toml:"name"`
	// Dir is the model directory (relative to the home), loaded and
	// verified as a provider's: its catalog root is the model ID.
	Dir string `toml:"dir"`
	// ID, when set (hex catalog root), refuses a directory with another root.
	ID string `toml:"id"`
}

// Validate checks the entry, naming each bad key under prefix
// (validator.models[i]).
func (m ModelConfig) Validate(prefix string) error {
	var errs []error
	if m.Dir == "" {
		errs = append(errs, fmt.Errorf("%s.dir: a held model needs its directory", prefix))
	}
	if m.ID != "" {
		if b, err := hex.DecodeString(m.ID); err != nil || len(b) != len(inference.ModelID{}) {
			errs = append(errs, fmt.Errorf("%s.id: %q is not a 64-hex-digit model ID", prefix, m.ID))
		}
	}
	return errors.Join(errs...)
}

// LoadModels opens every configured model directory (path resolves it
// against the home) and verifies it against its ID, keyed by model ID.
func LoadModels(ms []ModelConfig, path func(string) string) (map[terms.Hash32]inference.Engine, error) {
	out := make(map[terms.Hash32]inference.Engine, len(ms))
	for i, m := range ms {
		if err := m.Validate(fmt.Sprintf("validator.models[%d]", i)); err != nil {
			return nil, err
		}
		var opts llm.Options
		if m.ID != "" {
			var id inference.ModelID
			b, _ := hex.DecodeString(m.ID) // Validate checked it
			copy(id[:], b)
			opts.ModelID = &id
		}
		eng, err := llm.Open(path(m.Dir), opts)
		if err != nil {
			return nil, fmt.Errorf("validator.models[%d] (%s): %w", i, m.Name, err)
		}
		out[terms.Hash32(eng.Info().ID)] = eng
	}
	return out, nil
}

// declare submits ModelDeclare for every held model, retrying until the
// chain takes them: a validator that never declared is never drawn for
// its models' committees.
func (d *Duty) declare(ctx context.Context) {
	for id := range d.cfg.Models {
		for {
			_, err := d.cfg.Account.Submit(ctx, &ledger.ModelDeclare{ModelID: id, Holds: true})
			if err == nil {
				d.cfg.Log.Info("declared held model", "model", id)
				break
			}
			d.cfg.Log.Warn("declare held model", "model", id, "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(d.cfg.Poll):
			}
		}
	}
}
