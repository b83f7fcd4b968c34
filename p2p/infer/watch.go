package infer

import (
	"bufio"
	"errors"
	"io"
)

// readWatch watches the client's write side once the request is read. A
// client sends nothing after its request, so EOF (a half-close) means
// "stop, but answer", and anything else, a byte, a reset or an error, means
// the client is gone or misbehaves.
type readWatch struct {
	done chan struct{}
	// Set before done is closed.
	eof bool
	err error
}

func watchRead(r *bufio.Reader) *readWatch {
	w := &readWatch{done: make(chan struct{})}
	go func() {
		_, err := r.ReadByte()
		w.eof, w.err = errors.Is(err, io.EOF), err
		close(w.done)
	}()
	return w
}

// ended reports whether the read side ended, and if so whether by EOF.
func (w *readWatch) ended() (ended, eof bool) {
	select {
	case <-w.done:
		return true, w.eof
	default:
		return false, false
	}
}
