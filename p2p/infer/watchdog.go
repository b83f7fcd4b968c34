package infer

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
)

// watchdog resets the stream when a timer or the caller's context fires,
// remembering why so that the failed read reports the cause.
type watchdog struct {
	mu     sync.Mutex
	s      network.Stream
	onFire func()
	why    error
	gen    uint64
	t      *time.Timer
}

func (w *watchdog) setStream(s network.Stream) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.s = s
	if w.why != nil {
		_ = s.Reset()
	}
}

// arm replaces the pending timer with one firing cause after d.
func (w *watchdog) arm(d time.Duration, cause error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.t != nil {
		w.t.Stop()
	}
	w.gen++
	gen := w.gen
	w.t = time.AfterFunc(d, func() {
		w.mu.Lock()
		stale := gen != w.gen
		w.mu.Unlock()
		if !stale {
			w.fire(cause)
		}
	})
}

func (w *watchdog) disarm() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.gen++
	if w.t != nil {
		w.t.Stop()
		w.t = nil
	}
}

// fire records the first cause and aborts the call.
func (w *watchdog) fire(cause error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.why != nil {
		return
	}
	w.why = cause
	if w.onFire != nil {
		w.onFire()
	}
	if w.s != nil {
		_ = w.s.Reset()
	}
}

func (w *watchdog) cause() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.why
}

// countingStream counts the bytes written to and read from a stream.
type countingStream struct {
	s              network.Stream
	sent, received atomic.Int64
}

func (c *countingStream) Read(b []byte) (int, error) {
	n, err := c.s.Read(b)
	c.received.Add(int64(n))
	return n, err
}

func (c *countingStream) Write(b []byte) (int, error) {
	n, err := c.s.Write(b)
	c.sent.Add(int64(n))
	return n, err
}
