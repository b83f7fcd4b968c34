package infer

import "context"

// Start is a no-op: warm streams are opened on demand. With Stop it gives
// Warm a node part's lifecycle.
func (w *Warm) Start(context.Context) error { return nil }

// Stop resets the idle warm streams (Close).
func (w *Warm) Stop(context.Context) error { w.Close(); return nil }
