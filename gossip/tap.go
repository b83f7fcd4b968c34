package gossip

import (
	"context"
	"sync"
	"time"
)

// Event is one validated gossip message as the debug shell's `tail` shows it.
type Event struct {
	Seq          uint64    `json:"seq"`
	Time         time.Time `json:"time"`
	Topic        string    `json:"topic"`
	Kind         Kind      `json:"kind"`
	Verdict      string    `json:"verdict"`
	Reason       string    `json:"reason"`
	Error        string    `json:"error,omitempty"`
	ReceivedFrom string    `json:"received_from"`
	Message      any       `json:"message,omitempty"`
}

// Tap keeps the most recent validation events in a ring so that clients can
// long-poll them by sequence number.
type Tap struct {
	mu     sync.Mutex
	ring   []Event
	next   uint64 // sequence number of the next event
	notify chan struct{}
}

// NewTap returns a tap that remembers the last size events.
func NewTap(size int) *Tap {
	if size <= 0 {
		size = 1024
	}
	return &Tap{ring: make([]Event, size), next: 1, notify: make(chan struct{})}
}

func (t *Tap) record(e Event) {
	t.mu.Lock()
	e.Seq = t.next
	t.ring[int(t.next%uint64(len(t.ring)))] = e
	t.next++
	close(t.notify)
	t.notify = make(chan struct{})
	t.mu.Unlock()
}

// Head returns the sequence number the next event will get.
func (t *Tap) Head() uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.next
}

// Since returns up to limit events with Seq >= after whose kind matches
// (empty kind matches all), waiting up to wait for the first one to arrive.
// It returns the events and the cursor to pass next time.
func (t *Tap) Since(ctx context.Context, after uint64, kind Kind, limit int, wait time.Duration) ([]Event, uint64) {
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	for {
		t.mu.Lock()
		events, cursor := t.collect(after, kind, limit)
		ch := t.notify
		t.mu.Unlock()
		if len(events) > 0 || wait <= 0 {
			return events, cursor
		}
		after = cursor
		select {
		case <-ch:
		case <-deadline.C:
			return nil, cursor
		case <-ctx.Done():
			return nil, cursor
		}
	}
}

func (t *Tap) collect(after uint64, kind Kind, limit int) ([]Event, uint64) {
	oldest := uint64(1)
	if t.next > uint64(len(t.ring)) {
		oldest = t.next - uint64(len(t.ring))
	}
	if after < oldest {
		after = oldest
	}
	var out []Event
	seq := after
	for ; seq < t.next && len(out) < limit; seq++ {
		e := t.ring[int(seq%uint64(len(t.ring)))]
		if kind == "" || e.Kind == kind {
			out = append(out, e)
		}
	}
	return out, seq
}
