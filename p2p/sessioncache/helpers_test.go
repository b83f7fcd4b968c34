package sessioncache_test

import (
	"context"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/tenzrod/tenzrod/p2p/p2ptest"
	"github.com/tenzrod/tenzrod/p2p/sessioncache"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/identity/identitytest"
)

// machine is a software-key machine with its libp2p key and session.
type machine struct {
	id   *identity.Identity
	key  crypto.PrivKey
	peer peer.ID
	sess *identity.Session
}

func newMachine(t testing.TB) *machine {
	t.Helper()
	m := identitytest.NewMachine(t, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	return &machine{id: m.ID, key: m.Key, peer: m.Peer, sess: m.Session}
}

func (m *machine) machineID() []byte { id := m.id.MachineID(); return id[:] }

// host runs a loopback libp2p host with the machine's key.
func (m *machine) host(t testing.TB) host.Host {
	t.Helper()
	return p2ptest.Host(t, libp2p.Identity(m.key))
}

var testModel = func() []byte { b := make([]byte, 32); b[0] = 7; return b }()

// successor is a machine standing by for testModel.
type successor struct {
	*machine
	key    *sessioncache.PrivateKey
	hold   *sessioncache.Holder
	met    *sessioncache.Metrics
	states chan *sessioncache.State
}

func newSuccessor(t testing.TB, fund func(context.Context, peer.ID, sessioncache.Assignment) error) *successor {
	t.Helper()
	m := newMachine(t)
	k, err := sessioncache.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	s := &successor{machine: m, key: k, met: sessioncache.NewMetrics(nil), states: make(chan *sessioncache.State, 16)}
	s.hold, err = sessioncache.NewHolder(sessioncache.HolderConfig{
		Key: k, Session: func() (*identity.Session, error) { return m.sess, nil },
		Standby: func(id []byte) bool { return string(id) == string(testModel) },
		Fund:    fund, Metrics: s.met,
		OnState: func(_ sessioncache.Assignment, st *sessioncache.State) { s.states <- st },
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func assignment(sid string, primary *machine) sessioncache.Assignment {
	return sessioncache.Assignment{SessionID: sid, ModelID: testModel, PrimaryPeer: primary.peer, PrimaryMachine: primary.machineID()}
}

func state(sid string, turn uint32, n int) *sessioncache.State {
	st := &sessioncache.State{SessionID: sid, Turn: turn, ModelID: testModel}
	for i := 0; i < n; i++ {
		st.Tokens = append(st.Tokens, uint32(i%500))
	}
	st.Sampling.Seed = 9
	return st
}

func seal(t testing.TB, by *machine, to []byte, st *sessioncache.State) []byte {
	t.Helper()
	b, err := sessioncache.Seal(by.sess, to, st)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// value reads a counter.
func value(c prometheus.Counter) float64 {
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		panic(err)
	}
	return m.GetCounter().GetValue()
}

func (m *machine) sessionFn() func() (*identity.Session, error) {
	return func() (*identity.Session, error) { return m.sess, nil }
}
