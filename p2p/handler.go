package p2p

import (
	"bufio"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/filecoin-project/go-clock"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
	"github.com/prometheus/client_golang/prometheus"
)

// ErrNoMemory is returned (wrapped) by Stream.ReadFrame when the resource
// manager refuses the memory for the request frame.
var ErrNoMemory = errors.New("p2p: no memory for the frame")

// StreamSpec is what the opening of a protocol's inbound streams needs to
// know. Every tenzro server opens its streams the same way (Serve): a
// panic guard, admission, the resource-manager service, the deadlines and
// a capped, memory-accounted read of the request, so that a flood or a
// malformed peer is bounded before the protocol's own code runs.
type StreamSpec struct {
	Protocol protocol.ID // labels the panic counter and the log
	Service  string      // resource-manager service the stream is attached to

	// MaxFrame caps the request frame; Reserve is the memory reserved
	// per byte of it (the frame and what decoding makes of it; default
	// 1), held until Stream.ReleaseFrame or the handler's return.
	MaxFrame int
	Reserve  int

	// ReadTimeout and WriteTimeout are the stream's deadlines, from the
	// opening. Stream.Deadline is the read one: the exchange's end.
	ReadTimeout  time.Duration
	WriteTimeout time.Duration

	// Admit, when set, takes an exchange slot for the peer before
	// anything else; a refusal resets the stream unread.
	Admit func(peer.ID) (release func(), err error)
	// OnReset, when set, is called for every Reset of a prepared stream
	// (not for a panic's, which the guard counts).
	OnReset func()

	Registerer prometheus.Registerer // takes the panic counter; nil: a private registry
	Log        *slog.Logger
	Clock      clock.Clock // nil: the wall clock
}

// StreamFunc serves one prepared stream. A non-nil error resets the
// stream, nil closes it, unless fn closed or reset it itself.
type StreamFunc func(st *Stream) error

// Stream is an inbound stream the opening prepared: admitted, attached
// to its service and under its deadlines. Close and Reset record that the
// stream ended, so the opening leaves it alone.
type Stream struct {
	network.Stream
	Peer     peer.ID
	Start    time.Time    // when the opening began
	Deadline time.Time    // the read deadline: the end of the exchange
	Log      *slog.Logger // the server's log, with the protocol and the peer

	spec     *StreamSpec
	r        *bufio.Reader
	reserved int
	release  func()
	ended    atomic.Bool
}

// Serve returns the handler of spec's protocol: each stream is guarded
// against panics (tenzro_p2p_stream_handler_panics_total{protocol}),
// admitted, attached to spec.Service and given its deadlines, then handed
// to fn; fn's outcome ends it.
func Serve(spec StreamSpec, fn StreamFunc) network.StreamHandler {
	if spec.Reserve <= 0 {
		spec.Reserve = 1
	}
	if spec.Log == nil {
		spec.Log = slog.New(slog.DiscardHandler)
	}
	if spec.Clock == nil {
		spec.Clock = clock.New()
	}
	guard := NewPanicGuard(spec.Registerer, spec.Log)
	log := spec.Log.With("protocol", spec.Protocol)
	return guard.Wrap(spec.Protocol, func(ns network.Stream) {
		st := &Stream{Stream: ns, Peer: ns.Conn().RemotePeer(), spec: &spec}
		st.Log = log.With("peer", st.Peer)
		defer st.ReleaseFrame()
		defer st.releaseSlot()
		if err := st.open(); err != nil {
			st.Log.Debug("stream refused before reading", "err", err)
			_ = st.Reset()
			return
		}
		err := fn(st)
		st.ReleaseFrame()
		switch {
		case st.ended.Load():
			if err != nil {
				st.Log.Debug("stream ended", "err", err)
			}
		case err != nil:
			st.Log.Debug("stream reset", "err", err)
			_ = st.Reset()
		default:
			_ = st.Close()
		}
	})
}

// open admits the stream, attaches it to its service and sets its
// deadlines.
func (st *Stream) open() error {
	if st.spec.Admit != nil {
		release, err := st.spec.Admit(st.Peer)
		if err != nil {
			return err
		}
		st.release = release
	}
	if err := st.Scope().SetService(st.spec.Service); err != nil {
		return fmt.Errorf("p2p: attach stream to service %s: %w", st.spec.Service, err)
	}
	st.Start = st.spec.Clock.Now()
	st.Deadline = st.Start.Add(st.spec.ReadTimeout)
	_ = st.SetReadDeadline(st.Deadline)
	_ = st.SetWriteDeadline(st.Start.Add(st.spec.WriteTimeout))
	st.r = bufio.NewReader(st.Stream)
	return nil
}

func (st *Stream) releaseSlot() {
	if st.release != nil {
		st.release()
	}
}

// Elapsed is the time since the opening, on the spec's clock.
func (st *Stream) Elapsed() time.Duration { return st.spec.Clock.Since(st.Start) }

// Reader is the stream's buffered reader: ReadFrame reads through it, and
// so must every later read of the stream.
func (st *Stream) Reader() *bufio.Reader { return st.r }

// ReadFrame reads the request frame within StreamSpec.MaxFrame (else
// ErrFrameTooLarge), having reserved Reserve times its size with the
// resource manager (else ErrNoMemory).
func (st *Stream) ReadFrame() ([]byte, error) {
	if size := PeekFrameSize(st.r); size > 0 && size <= st.spec.MaxFrame {
		n := st.spec.Reserve * size
		if err := st.Scope().ReserveMemory(n, network.ReservationPriorityHigh); err != nil {
			return nil, fmt.Errorf("%w: %d bytes: %w", ErrNoMemory, n, err)
		}
		st.reserved += n
	}
	return ReadFrame(st.r, st.spec.MaxFrame)
}

// DecodeFrame reads the request frame (Stream.ReadFrame) and decodes it
// within the frame's memory reservation, given back once decoded.
func DecodeFrame[T any](st *Stream, decode func([]byte) (T, error)) (T, error) {
	defer st.ReleaseFrame()
	b, err := st.ReadFrame()
	if err != nil {
		var zero T
		return zero, err
	}
	return decode(b)
}

// ReleaseFrame gives back the memory ReadFrame reserved, once the request
// is decoded; the opening calls it when fn returns.
func (st *Stream) ReleaseFrame() {
	if st.reserved > 0 {
		st.Scope().ReleaseMemory(st.reserved)
		st.reserved = 0
	}
}

// Close closes the stream; the opening will not end it again.
func (st *Stream) Close() error {
	st.ended.Store(true)
	return st.Stream.Close()
}

// Reset resets the stream, counted by StreamSpec.OnReset; the opening
// will not end it again.
func (st *Stream) Reset() error {
	st.ended.Store(true)
	if st.spec.OnReset != nil {
		st.spec.OnReset()
	}
	return st.Stream.Reset()
}
