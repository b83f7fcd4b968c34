package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"syscall"
	"time"

	"github.com/tenzrod/tenzrod/cmd/internal/devproc"
)

// The fault kinds, each injected at least once per round of the schedule.
const (
	faultProviderKill    = "provider-kill"
	faultProviderStall   = "provider-stall"
	faultGatewayKill     = "gateway-kill"
	faultValidatorKill   = "validator-kill"
	faultFollowerRestart = "follower-restart"
	faultFlood           = "flood"
)

var faultKinds = []string{faultProviderKill, faultProviderStall, faultGatewayKill, faultValidatorKill, faultFollowerRestart, faultFlood}

// recoverLimit bounds the wait for the system to recover from one fault;
// a fault not recovered from within it is a violation.
const recoverLimit = 60 * time.Second

// chaosMonkey injects faults one at a time on a seeded schedule, so no
// two validators (nor two of anything) are ever down at once.
type chaosMonkey struct {
	cl   *cluster
	h    *history
	ld   *loader
	rng  *rand.Rand
	peer map[*proc]string // provider peer IDs

	probes, longs int64 // make probe and long-stream prompts unique
}

// run injects faults until ctx ends: rounds of every kind in a seeded
// order, seeded gaps between them.
func (m *chaosMonkey) run(ctx context.Context, rounds int) {
	var round []string
	for done := 0; ctx.Err() == nil; {
		if len(round) == 0 {
			if rounds > 0 && done == rounds {
				return
			}
			done++
			round = append([]string(nil), faultKinds...)
			m.rng.Shuffle(len(round), func(i, j int) { round[i], round[j] = round[j], round[i] })
		}
		gap := 2*time.Second + time.Duration(m.rng.Int64N(int64(3*time.Second)))
		select {
		case <-ctx.Done():
			return
		case <-time.After(gap):
		}
		kind := round[0]
		round = round[1:]
		f := &faultRecord{Kind: kind, Start: time.Now()}
		err := m.inject(kind, f)
		f.End = time.Now()
		for _, v := range m.cl.validators {
			if f.Height = heightAt(v.api); f.Height > 0 {
				break
			}
		}
		if err != nil {
			f.Err = err.Error()
		}
		m.h.addFault(f)
	}
}

func (m *chaosMonkey) pick(ps []*proc) *proc {
	var live []*proc
	for _, p := range ps {
		if p.live() {
			live = append(live, p)
		}
	}
	if len(live) == 0 {
		return ps[0]
	}
	return live[m.rng.IntN(len(live))]
}

func (m *chaosMonkey) hold(lo, hi time.Duration) {
	time.Sleep(lo + time.Duration(m.rng.Int64N(int64(hi-lo))))
}

// restart stops p with sig (SIGKILL after limit), keeps it down for
// between minDown and maxDown (not at all when maxDown is 0) and starts it
// again from its home.
func (m *chaosMonkey) restart(p *proc, sig syscall.Signal, limit, minDown, maxDown time.Duration) error {
	if err := p.kill(sig, limit); err != nil {
		return err
	}
	if maxDown > 0 {
		m.hold(minDown, maxDown)
	}
	return p.start(m.cl.bin)
}

// inject runs one fault and waits for recovery, which sets f.Recovered.
func (m *chaosMonkey) inject(kind string, f *faultRecord) error {
	cl := m.cl
	var p *proc
	var recovered func() bool
	switch kind {
	case faultProviderKill:
		var long *longStreams
		p, long = m.midStream()
		f.Target = p.name
		err := p.kill(syscall.SIGKILL, 10*time.Second)
		long.wait()
		if err != nil {
			return err
		}
		m.hold(time.Second, 3*time.Second)
		if err := p.start(cl.bin); err != nil {
			return err
		}
		recovered = func() bool { return m.serves(p) }
	case faultProviderStall:
		p = m.pick(cl.providers)
		f.Target = p.name
		if err := p.signal(syscall.SIGSTOP); err != nil {
			return err
		}
		m.hold(3*time.Second, 8*time.Second)
		if err := p.signal(syscall.SIGCONT); err != nil {
			return err
		}
		recovered = func() bool { return m.serves(p) }
	case faultGatewayKill:
		p = m.pick(cl.gateways)
		f.Target = p.name
		if err := m.restart(p, syscall.SIGKILL, 10*time.Second, 0, 0); err != nil {
			return err
		}
		recovered = func() bool { return healthy(p.api) && quotedAt(p.api, cl.m.Model) >= m.liveProviders() }
	case faultValidatorKill:
		p = m.pick(cl.validators)
		f.Target = p.name
		if err := m.restart(p, syscall.SIGKILL, 10*time.Second, 2*time.Second, 5*time.Second); err != nil {
			return err
		}
		recovered = func() bool { return m.caughtUp(p) }
	case faultFollowerRestart:
		p = m.pick(append(append([]*proc{cl.join}, cl.gateways...), cl.providers...))
		f.Target = p.name
		if err := m.restart(p, syscall.SIGTERM, 15*time.Second, 0, 0); err != nil {
			return err
		}
		recovered = func() bool {
			if !m.caughtUp(p) {
				return false
			}
			if p.role == "provider" {
				return m.serves(p)
			}
			return quotedAt(p.api, cl.m.Model) >= 1
		}
	case faultFlood:
		p = m.pick(cl.providers)
		f.Target = p.name
		m.flood(p, 4*time.Second+time.Duration(m.rng.Int64N(int64(4*time.Second))))
		recovered = func() bool { return m.serves(p) }
	default:
		return fmt.Errorf("chaos: unknown fault kind %q", kind)
	}
	took, ok := waitUntil(recoverLimit, recovered)
	f.Recovered = took
	if !ok {
		if p.role == "provider" && cannotDial(cl.gateways[0], m.peer[p], f.Start) {
			return fmt.Errorf("chaos: %s: not recovered within %s: %s cannot dial it (\"no addresses\" in its log)", unreachableProvider, recoverLimit, cl.gateways[0].name)
		}
		return fmt.Errorf("chaos: %s of %s: not recovered within %s", kind, p.name, recoverLimit)
	}
	return nil
}

// flood fills provider p's slots from a flooding client: more concurrent
// long streams pinned to it than it has slots, through the last gateway,
// for d. Every flood call is recorded and checked like the load's.
func (m *chaosMonkey) flood(p *proc, d time.Duration) {
	gw := m.cl.gateways[len(m.cl.gateways)-1]
	stop := time.Now().Add(d)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := 0; time.Now().Before(stop); i++ {
				req := chatRequest{Prompt: fmt.Sprintf("chaos flood %d %d %d", m.ld.seed, w, time.Now().UnixNano()),
					Seed: int64(w*1000 + i), MaxTokens: 160, Stream: true, Pin: m.peer[p]}
				c := call(context.Background(), m.cl, gw, "flood", req)
				m.h.addCall(c)
				if !c.ok() {
					time.Sleep(250 * time.Millisecond) // refused: try again, not in a hot loop
				}
			}
		})
	}
	wg.Wait()
}

func (m *chaosMonkey) liveProviders() int {
	n := 0
	for _, p := range m.cl.providers {
		if p.live() {
			n++
		}
	}
	return n
}

// serves reports whether a short call through the first gateway pinned to
// provider p succeeds (the call is recorded and checked like the others).
func (m *chaosMonkey) serves(p *proc) bool {
	m.probes++
	c := call(context.Background(), m.cl, m.cl.gateways[0], "probe", chatRequest{
		Prompt: fmt.Sprintf("chaos probe %d %d", m.ld.seed, m.probes), Seed: m.probes, MaxTokens: 4, Pin: m.peer[p]})
	m.h.addCall(c)
	return c.ok()
}

// caughtUp reports whether p's chain is within a block of the highest
// validator's.
func (m *chaosMonkey) caughtUp(p *proc) bool {
	h := heightAt(p.api)
	var top int64
	for _, v := range m.cl.validators {
		if v != p {
			top = max(top, heightAt(v.api))
		}
	}
	return h > 0 && h >= top-1
}

func healthy(api string) bool {
	resp, err := rpcClient.Get(api + "/healthz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// waitUntil polls cond every 200 ms for up to limit.
func waitUntil(limit time.Duration, cond func() bool) (time.Duration, bool) {
	return devproc.WaitUntil(limit, 200*time.Millisecond, cond)
}
