package main

import (
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/tenzrod/tenzrod/cmd/internal/devproc"
)

// callRecord is one call in the history: what was asked, of whom, and
// what came back.
type callRecord struct {
	ID     int         `json:"id"`
	Kind   string      `json:"kind"` // load | flood | probe | session
	Router string      `json:"router"`
	Req    chatRequest `json:"request"`
	Start  time.Time   `json:"start"`
	End    time.Time   `json:"end"`
	Status int         `json:"status"`
	Err    string      `json:"error,omitempty"`
	Answer answer      `json:"answer"`
}

// ok reports whether the call ended in a complete answer.
func (c *callRecord) ok() bool { return c.Err == "" && c.Answer.Done && c.Answer.Err == "" }

// record is the signed payment record the buyer received, if any.
func (c *callRecord) record() *devproc.SignedRecord {
	if t := c.Answer.Tenzro; t != nil && t.Payment != nil {
		return t.Payment.Signed
	}
	return nil
}

// faultRecord is one injected fault: its window runs from Start until the
// system recovered (End).
type faultRecord struct {
	Kind      string        `json:"kind"`
	Target    string        `json:"target"`
	Start     time.Time     `json:"start"`
	End       time.Time     `json:"end"`
	Recovered time.Duration `json:"recovered"` // from the end of the fault action to recovery
	Height    int64         `json:"height"`    // the chain's when the window closed
	Err       string        `json:"error,omitempty"`
}

// history is every call and fault of a run.
type history struct {
	mu     sync.Mutex
	calls  []*callRecord
	faults []*faultRecord
}

func (h *history) addCall(c *callRecord) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c.ID = len(h.calls)
	h.calls = append(h.calls, c)
}

func (h *history) addFault(f *faultRecord) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.faults = append(h.faults, f)
}

// snapshot copies the lists (the records themselves are final once added).
func (h *history) snapshot() ([]*callRecord, []*faultRecord) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]*callRecord(nil), h.calls...), append([]*faultRecord(nil), h.faults...)
}

// inFault reports whether [from, to] overlaps any fault window.
func inFault(faults []*faultRecord, from, to time.Time) bool {
	for _, f := range faults {
		if !to.Before(f.Start) && !from.After(f.End) {
			return true
		}
	}
	return false
}

// write saves the history as JSON for a post-mortem.
func (h *history) write(path string) error {
	calls, faults := h.snapshot()
	b, err := json.MarshalIndent(map[string]any{"calls": calls, "faults": faults}, "", " ")
	if err != nil {
		return fmt.Errorf("chaos: history: %w", err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return fmt.Errorf("chaos: history: %w", err)
	}
	return nil
}
