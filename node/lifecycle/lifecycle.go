package lifecycle

import (
	"context"
	"errors"
	"fmt"
)

// Part is a component that runs between Start and Stop.
type Part interface {
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
}

// Start starts parts in order. When one fails, the parts before it are
// stopped (in reverse, their errors dropped: the start error is the one
// to report) and the error names the failed part, prefixed with who.
func Start(ctx context.Context, who string, parts []Part) error {
	for i, part := range parts {
		if err := part.Start(ctx); err != nil {
			for j := i - 1; j >= 0; j-- {
				_ = parts[j].Stop(ctx)
			}
			return fmt.Errorf("%s: start %T: %w", who, part, err)
		}
	}
	return nil
}

// Stop stops parts in reverse order, every one even if some fail, and
// joins their errors.
func Stop(ctx context.Context, who string, parts []Part) error {
	var errs []error
	for i := len(parts) - 1; i >= 0; i-- {
		if err := parts[i].Stop(ctx); err != nil {
			errs = append(errs, fmt.Errorf("%s: stop %T: %w", who, parts[i], err))
		}
	}
	return errors.Join(errs...)
}
