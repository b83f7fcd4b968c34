package gateway

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/p2p/infer"
	"github.com/tenzrod/tenzrod/p2p/sessioncache"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// The session's collaborators outside the gateway: the session-cache
// protocol (successors holding sealed state) and the chain (operators,
// stream escrows), each a small in-memory stand-in.

type assignment struct {
	to peer.ID
	a  SessionAssignment
}

// successorNet stands for the providers' side of /tenzro/session-cache:
// an assigned successor holds the turns its primary seals to it (the
// scripted primaries call sealed after each turn that names a successor).
type successorNet struct {
	mu       sync.Mutex
	assigns  []assignment
	holds    map[peer.ID]map[string]uint32 // successor → session → turn
	refuse   map[peer.ID]bool              // Assign fails
	behind   map[peer.ID]bool              // Assign answers that its chain is behind (a retry)
	lie      map[peer.ID]uint32            // Challenge answers this turn instead
	asked    []peer.ID
	assigned map[peer.ID]map[string]peer.ID // successor → session → primary
}

func newSuccessorNet() *successorNet {
	return &successorNet{holds: map[peer.ID]map[string]uint32{}, refuse: map[peer.ID]bool{}, behind: map[peer.ID]bool{}, lie: map[peer.ID]uint32{},
		assigned: map[peer.ID]map[string]peer.ID{}}
}

func (n *successorNet) Assign(_ context.Context, to peer.ID, a SessionAssignment) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.refuse[to] {
		return fmt.Errorf("sessioncache: %s refused the assignment", to)
	}
	if n.behind[to] {
		return &sessioncache.RefusedError{Code: sessioncache.CodeRetry, Reason: fmt.Errorf("provider: stream committed at height 9: %w", sessioncache.ErrBehind).Error()}
	}
	n.assigns = append(n.assigns, assignment{to, a})
	if n.assigned[to] == nil {
		n.assigned[to] = map[string]peer.ID{}
	}
	n.assigned[to][a.SessionID] = a.PrimaryPeer
	return nil
}

func (n *successorNet) Challenge(_ context.Context, to peer.ID, id string) (uint32, []byte, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.asked = append(n.asked, to)
	if t, ok := n.lie[to]; ok {
		return t, nil, nil
	}
	t, ok := n.holds[to][id]
	if !ok {
		return 0, nil, fmt.Errorf("sessioncache: %s holds no state of %s", to, id)
	}
	return t, []byte("hash"), nil
}

// sealed is what a primary does after serving a turn: it sends the state
// to the named successor, which keeps it only if it was assigned to that
// primary.
func (n *successorNet) sealed(from peer.ID, st *infer.SessionTurn) {
	if st == nil || len(st.SuccessorPeer) == 0 {
		return
	}
	to := peer.ID(st.SuccessorPeer)
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.assigned[to][st.ID] != from {
		return
	}
	if n.holds[to] == nil {
		n.holds[to] = map[string]uint32{}
	}
	n.holds[to][st.ID] = st.Turn
}

func (n *successorNet) assignments() []assignment {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]assignment(nil), n.assigns...)
}

// chainStub is the chain as the gateway's sessions see it: registered
// operators and the stream escrows opened and stopped.
type chainStub struct {
	mu        sync.Mutex
	operators map[peer.ID]string
	opened    []streamOpen
	stopped   map[string]bool
	unfunded  bool
}

type streamOpen struct {
	id            string
	payer         string
	payee         identity.MachineID
	rate, deposit uint64
}

func (c *chainStub) Operator(_ context.Context, p peer.ID, _ identity.MachineID) (string, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	op, ok := c.operators[p]
	return op, ok, nil
}

func (c *chainStub) Open(_ context.Context, payer string, payee identity.MachineID, rate, deposit uint64) (string, int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.unfunded {
		return "", 0, fmt.Errorf("ledger: code 5 (overdraft): stream deposit %d over the escrow's available 0", deposit)
	}
	id := fmt.Sprintf("%064x", len(c.opened)+1)
	c.opened = append(c.opened, streamOpen{id, payer, payee, rate, deposit})
	return id, int64(len(c.opened)), nil
}

func (c *chainStub) Stop(_ context.Context, id string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped == nil {
		c.stopped = map[string]bool{}
	}
	c.stopped[id] = true
	return nil
}

func (c *chainStub) streams() ([]streamOpen, map[string]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := map[string]bool{}
	for k, v := range c.stopped {
		st[k] = v
	}
	return append([]streamOpen(nil), c.opened...), st
}

// sessionMarket is a market whose gateway has session collaborators; its
// providers seal each turn to the successor the turn names once they
// have answered it.
type sessionMarket struct {
	*market
	net   *successorNet
	chain *chainStub // nil: no chain
}

// newSessionMarket makes n providers; provider i's script is scripts[i]
// (the last repeats). With chain, every provider's operator is "op-i"
// unless ops says otherwise ("" = unregistered).
func newSessionMarket(t testing.TB, st *bubbleLedger, n int, withChain bool, scripts ...func(int, *infer.Request) script) *sessionMarket {
	t.Helper()
	sm := &sessionMarket{net: newSuccessorNet()}
	sm.market = newMarket(t, st, n, testConfig(), scripts...)
	sm.tr.answered = func(p peer.ID, req *infer.Request) { sm.net.sealed(p, req.Session) }
	d := Deps{Transport: sm.tr, Table: sm.table, Ledger: st, Successors: sm.net}
	if withChain {
		sm.chain = &chainStub{operators: map[peer.ID]string{}}
		for i, fp := range sm.provs {
			sm.chain.operators[fp.id] = fmt.Sprintf("op-%d", i)
		}
		d.Operators, d.Streams = sm.chain, sm.chain
	}
	gw, err := New(testConfig(), d)
	if err != nil {
		t.Fatal(err)
	}
	sm.gw = gw
	return sm
}

// newStandbyMarket is a session market of three providers on a chain,
// each standing by for the model in DE (provider i for a fee of i+1 and
// an output price of 10+i) and heartbeating.
func newStandbyMarket(t testing.TB, st *bubbleLedger, scripts ...func(int, *infer.Request) script) *sessionMarket {
	t.Helper()
	sm := newSessionMarket(t, st, 3, true, scripts...)
	for i := range 3 {
		sm.standby(i, "DE", int64(i+1), uint64(10+i))
	}
	sm.beatOnly(0, 1, 2)
	return sm
}

// standby re-announces provider i in region with a standby offer at fee
// per hour (fee < 0: no standby offer) and output price price.
func (sm *sessionMarket) standby(i int, region string, fee int64, price uint64) {
	fp := sm.provs[i]
	mach := fp.ident.MachineID()
	a := gossip.Announcement{MachineID: mach[:], Region: region, Models: []gossip.ModelOffer{{ModelID: modelID, Name: modelName,
		RateCard: terms.RateCard{InputTokens: 1, OutputTokens: price}, Verification: []terms.Verification{terms.VerifyNone, terms.VerifyReceipt}}}}
	if fee >= 0 {
		a.Standby = &gossip.StandbyOffer{FeePerHour: uint64(fee), HPKEKey: bytes.Repeat([]byte{byte(i + 1)}, gossip.StandbyKeySize)}
	}
	s := gossip.Sender{Peer: fp.id, Machine: mach, Backend: "software", Received: time.Now()}
	sm.table.ApplyAnnouncement(&gossip.VerifiedAnnouncement{Sender: s, Announcement: a})
}

// beatOnly heartbeats the providers listed (the others fall silent).
func (sm *sessionMarket) beatOnly(idx ...int) {
	for _, i := range idx {
		fp := sm.provs[i]
		mach := fp.ident.MachineID()
		sm.table.ApplyHeartbeat(&gossip.VerifiedHeartbeat{
			Sender: gossip.Sender{Peer: fp.id, Machine: mach, Backend: "software", Received: time.Now()},
			Heartbeat: gossip.Heartbeat{MachineID: mach[:], Seq: uint64(time.Now().UnixNano()), Capacity: 8,
				Models: []gossip.ModelStatus{{ModelID: modelID, State: gossip.StateWarm}}}})
	}
}

// turn routes one session turn.
func (sm *sessionMarket) turn(t *testing.T, s *SessionRequest) (*Result, error) {
	t.Helper()
	req := request()
	req.Payer = "alice"
	cp := *s
	req.Session = &cp
	res, _, err := route(t, sm.market, req)
	return res, err
}

func (sm *sessionMarket) mustTurn(t *testing.T, s *SessionRequest) *SessionInfo {
	t.Helper()
	res, err := sm.turn(t, s)
	if err != nil {
		t.Fatal(err)
	}
	if res.Session == nil {
		t.Fatal("a session turn's result has no session")
	}
	return res.Session
}

// lastCall is the last call the transport saw.
func (sm *sessionMarket) lastCall(t *testing.T) *call {
	t.Helper()
	cs := sm.calls()
	if len(cs) == 0 {
		t.Fatal("no call made")
	}
	return cs[len(cs)-1]
}
