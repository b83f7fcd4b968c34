package expert

import (
	"bufio"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/p2p"
	"github.com/tenzrod/tenzrod/p2p/p2ptest"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/identity/identitytest"
)

const testNetwork = "experttest"

// holderIdentity is a machine with a session certified for its peer key.
type holderIdentity struct {
	id   *identity.Identity
	key  crypto.PrivKey
	peer peer.ID
	sess *identity.Session
}

func (h holderIdentity) machine() identity.MachineID { return h.id.MachineID() }

func newHolderIdentity(t testing.TB) holderIdentity {
	t.Helper()
	now := time.Now()
	m := identitytest.NewMachine(t, now.Add(-time.Minute), now.Add(time.Hour))
	return holderIdentity{id: m.ID, key: m.Key, peer: m.Peer, sess: m.Session}
}

// newHost returns a loopback host with key (nil: a fresh one).
func newHost(t testing.TB, key crypto.PrivKey) host.Host {
	t.Helper()
	if key == nil {
		return p2ptest.Host(t)
	}
	return p2ptest.Host(t, libp2p.Identity(key))
}

// holder is a holder host: its identity and, when honest, its server.
type holder struct {
	holderIdentity
	h   host.Host
	srv *Server
}

// startHolder runs an honest holder computing with c, connected to caller.
func startHolder(t testing.TB, caller host.Host, c Computer) *holder {
	t.Helper()
	hi := newHolderIdentity(t)
	h := newHost(t, hi.key)
	p2ptest.Connect(t, caller, h)
	srv, err := NewServer(h, ServerConfig{Network: testNetwork}, c, func() (*identity.Session, error) { return hi.sess, nil }, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	return &holder{holderIdentity: hi, h: h, srv: srv}
}

func (h *holder) entry(price uint64) Holder {
	return Holder{Peer: h.peer, Machine: h.machine(), Price: price}
}

// rogue replaces h's handler by one that computes honestly with c and
// then lets tamper change the response (or return nil to answer nothing
// and hold the stream open until the caller gives up).
func (h *holder) rogue(t testing.TB, c Computer, tamper func(sess *identity.Session, req *Request, resp *Response) *Response) {
	h.srv.Stop()
	var mu sync.Mutex
	h.h.SetStreamHandler(ProtocolID, func(st network.Stream) {
		defer func() { _ = st.Close() }()
		b, err := p2p.ReadFrame(bufio.NewReader(st), MaxRequestSize)
		if err != nil {
			_ = st.Reset()
			return
		}
		req, err := DecodeRequest(b)
		if err != nil {
			_ = st.Reset()
			return
		}
		outs := make([][]byte, len(req.Batches))
		for i, bt := range req.Batches {
			in, _ := UnpackRows(bt.Rows, int(req.Dim))
			out, err := c.Compute(context.Background(), req.Model, int(req.Layer), int(bt.Expert), in)
			if err != nil {
				_ = st.Reset()
				return
			}
			outs[i], _ = PackRows(out, int(req.Dim))
		}
		rc, err := Sign(h.sess, NewReceipt(h.sess, req, outs, time.Now()), false)
		if err != nil {
			_ = st.Reset()
			return
		}
		mu.Lock()
		resp := tamper(h.sess, req, &Response{Outputs: outs, Receipt: rc})
		mu.Unlock()
		if resp == nil {
			time.Sleep(2 * time.Second)
			return
		}
		out, _ := EncodeResponse(resp)
		_ = p2p.WriteFrame(st, out)
	})
}

// staticTable lists fixed holders per (layer, expert); every key not in
// it gets all.
type staticTable struct {
	mu  sync.Mutex
	by  map[[2]int][]Holder
	all []Holder
}

func (s *staticTable) Holders(_ [32]byte, layer, expert int) []Holder {
	s.mu.Lock()
	defer s.mu.Unlock()
	if hs, ok := s.by[[2]int{layer, expert}]; ok {
		return hs
	}
	return s.all
}

// scaleComputer is a stand-in expert: each output is the input times
// (expert+1) plus the layer.
type scaleComputer struct{}

func (scaleComputer) Compute(_ context.Context, _ [32]byte, layer, expert int, rows [][]float32) ([][]float32, error) {
	out := make([][]float32, len(rows))
	for i, r := range rows {
		out[i] = make([]float32, len(r))
		for j, v := range r {
			out[i][j] = v*float32(expert+1) + float32(layer)
		}
	}
	return out, nil
}
