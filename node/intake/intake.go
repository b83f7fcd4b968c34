package intake

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// Intake bounds the request bodies the HTTP port reads at once. JSON-RPC
// (unauthenticated) and the OpenAI routes (whose token is checked before
// the body on a gateway) each have their own pool of slots, so clients
// without a token cannot take the slots buyers need; one client address
// holds at most its share of a pool; and a body must keep arriving at a
// minimum rate and end within a total time, so a slot is held only while
// bytes flow (nginx's client_body_timeout, Envoy's stream idle timeout).
type Intake struct {
	api, rpc *bodyGate
}

// Bounds are the intake's limits ([api] keys): the body slots of the
// OpenAI routes and of JSON-RPC, a client address's share of a pool, and
// how fast a body must arrive (MinRate bytes a second after Grace, whole
// within Timeout; zero turns a bound off).
type Bounds struct {
	Slots, RPCSlots, PerClient int
	MinRate                    int64
	Grace, Timeout             time.Duration
}

// bodySlotWait is how long a body waits for a free slot before it is
// refused (503).
const bodySlotWait = 2 * time.Second

// New builds the gates b describes.
func New(b Bounds) *Intake {
	rate := bodyRate{min: b.MinRate, grace: b.Grace, total: b.Timeout}
	return &Intake{
		api: newBodyGate(b.Slots, b.PerClient, bodySlotWait, rate),
		rpc: newBodyGate(b.RPCSlots, min(b.PerClient, b.RPCSlots), bodySlotWait, rate),
	}
}

// Wrap serves next with every request body read under its pool's gate:
// /rpc under JSON-RPC's, everything else under the OpenAI routes'.
func (in *Intake) Wrap(next http.Handler) http.Handler {
	api, rpc := in.api.wrap(next), in.rpc.wrap(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/rpc" {
			rpc.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})
}

// bodyRate is how fast a body must arrive: within grace, then at least min
// bytes a second on average, and whole within total; zero fields are off.
type bodyRate struct {
	min   int64
	grace time.Duration
	total time.Duration
}

// deadline is when reading a body started at start must have read n bytes
// by; zero without a bound.
func (r bodyRate) deadline(start time.Time, n int64) time.Time {
	var d time.Time
	if r.min > 0 {
		d = start.Add(r.grace + time.Duration(float64(n)/float64(r.min)*float64(time.Second)))
	}
	if r.total > 0 && (d.IsZero() || d.After(start.Add(r.total))) {
		d = start.Add(r.total)
	}
	return d
}

// bodyGate caps the request bodies being read at once, and per client
// address. A slot is taken at a body's first Read, not at the request's
// arrival, so a request refused on its headers (no token) never takes
// one; it is given back as soon as the body is read to its end or fails.
type bodyGate struct {
	slots     chan struct{}
	perClient int
	wait      time.Duration
	rate      bodyRate

	mu   sync.Mutex
	held map[string]int // slots held, by client address (addrKey)
}

func newBodyGate(n, perClient int, wait time.Duration, rate bodyRate) *bodyGate {
	if perClient <= 0 || perClient > n {
		perClient = n
	}
	return &bodyGate{slots: make(chan struct{}, n), perClient: perClient, wait: wait, rate: rate, held: map[string]int{}}
}

func (g *bodyGate) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		b := &gatedBody{ReadCloser: r.Body, gate: g, ctx: r.Context(), left: r.ContentLength,
			client: clientKey(r.RemoteAddr), rc: http.NewResponseController(w)}
		defer b.release()
		// A shallow copy: the server keeps its own *Request and so still
		// sees its body type after the handler, which it needs to close a
		// connection with a large unread body instead of draining 256 KB.
		r2 := *r
		r2.Body = b
		next.ServeHTTP(w, &r2)
	})
}

// clientKey is the address a per-client share counts (addrKey's rule).
func clientKey(remote string) string {
	a, err := net.ResolveTCPAddr("tcp", remote)
	if err != nil {
		return remote
	}
	return addrKey(a)
}

// errBodyBusy is a read refused for want of a slot; Temporary tells the
// handlers it is the server's state, not the client's fault (a 503).
type errBodyBusy struct {
	slots int
	wait  time.Duration
	share bool // the client's own share was full
}

func (e errBodyBusy) Error() string {
	if e.share {
		return fmt.Sprintf("node api: this client address already has its %d body-read slots busy; retry", e.slots)
	}
	return fmt.Sprintf("node api: all %d body-read slots stayed busy for %s; retry", e.slots, e.wait)
}
func (errBodyBusy) Temporary() bool { return true }

// errBodySlow is a body that did not arrive at the minimum rate.
var errBodySlow = errors.New("node api: request body arrived too slowly")

func (g *bodyGate) acquire(ctx context.Context, client string) error {
	g.mu.Lock()
	if g.held[client] >= g.perClient {
		g.mu.Unlock()
		return errBodyBusy{slots: g.perClient, share: true}
	}
	g.held[client]++
	g.mu.Unlock()
	if err := g.take(ctx); err != nil {
		g.giveBack(client, false)
		return err
	}
	return nil
}

func (g *bodyGate) take(ctx context.Context) error {
	select {
	case g.slots <- struct{}{}:
		return nil
	default:
	}
	t := time.NewTimer(g.wait)
	defer t.Stop()
	select {
	case g.slots <- struct{}{}:
		return nil
	case <-t.C:
		return errBodyBusy{slots: cap(g.slots), wait: g.wait}
	case <-ctx.Done():
		return fmt.Errorf("node api: waiting for a body-read slot: %w", ctx.Err())
	}
}

func (g *bodyGate) giveBack(client string, slot bool) {
	if slot {
		<-g.slots
	}
	g.mu.Lock()
	if g.held[client]--; g.held[client] <= 0 {
		delete(g.held, client)
	}
	g.mu.Unlock()
}

// gatedBody is a request body read under a gate slot. Reads come from the
// handler's goroutine only (as net/http requires), so the state needs no
// lock.
type gatedBody struct {
	io.ReadCloser
	gate   *bodyGate
	ctx    context.Context
	client string
	rc     *http.ResponseController
	left   int64 // bytes still declared by Content-Length; -1 unknown
	read   int64
	start  time.Time
	held   bool
	done   bool
	err    error
}

func (b *gatedBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if !b.held && !b.done {
		if err := b.gate.acquire(b.ctx, b.client); err != nil {
			b.err = err
			return 0, err
		}
		b.held, b.start = true, time.Now() // socket deadlines are wall time
	}
	if b.held {
		// The connection's read deadline follows the bytes read so far: a
		// client keeping up the rate never meets it. A ResponseWriter
		// without deadlines (a test recorder) leaves the rate unchecked.
		if d := b.gate.rate.deadline(b.start, b.read); !d.IsZero() {
			_ = b.rc.SetReadDeadline(d)
		}
	}
	n, err := b.ReadCloser.Read(p)
	b.read += int64(n)
	if b.left >= 0 {
		b.left -= int64(n)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		err = fmt.Errorf("%w: %d bytes in %s (at least %d bytes/s after %s, whole within %s)", errBodySlow,
			b.read, time.Since(b.start).Round(time.Millisecond), b.gate.rate.min, b.gate.rate.grace, b.gate.rate.total)
		b.err = err
	}
	// The end of the body, by EOF, error or the declared length (a reader
	// that stops at exactly Content-Length never sees the EOF).
	if err != nil || b.left == 0 {
		if err == nil || errors.Is(err, io.EOF) {
			// Read whole: the rest of the connection (the next request's
			// headers) is the server's ReadHeaderTimeout's business again.
			// A body that failed keeps its passed deadline, so the server
			// does not wait on a slow client to drain what it left unsent.
			_ = b.rc.SetReadDeadline(time.Time{})
		}
		b.release()
	}
	return n, err
}

func (b *gatedBody) release() {
	if b.held {
		b.held = false
		b.gate.giveBack(b.client, true)
	}
	b.done = true
}
