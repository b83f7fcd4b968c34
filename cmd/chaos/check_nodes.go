package main

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/tenzrod/tenzrod/node"
)

// checkReceipts: the router that answered a call still holds its receipt
// after every restart (its store against what the buyer was given).
func (c *checker) checkReceipts(calls []*callRecord) int {
	byName := map[string]*proc{}
	for _, p := range c.cl.routers() {
		byName[p.name] = p
	}
	n := 0
	for _, k := range calls {
		t := k.Answer.Tenzro
		if !k.ok() || t == nil || t.Receipt == nil || t.Receipt.Receipt == nil {
			continue
		}
		p := byName[k.Router]
		var v struct {
			Stored *struct {
				TimeMs int64 `json:"time_ms"`
			} `json:"stored"`
		}
		var err error
		for try := 0; try < 3; try++ {
			if err = rpcCall(p.api, "tenzro_getReceipt", map[string]string{"nonce": t.Receipt.Receipt.Nonce}, &v); err == nil {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		n++
		if err != nil {
			c.violate("call %d: %s lost its receipt %s: %v", k.ID, k.Router, clip(t.Receipt.Receipt.Nonce), err)
		}
	}
	return n
}

// checkStatuses: every live routing node shows each provider up exactly
// when its process is alive (waiting for gossip to converge: a provider
// is marked down within 6 s of its last heartbeat).
func (c *checker) checkStatuses() {
	var observers []*proc
	for _, p := range append(append([]*proc{}, c.cl.validators...), c.cl.routers()...) {
		if p.live() {
			observers = append(observers, p)
		}
	}
	var wrong []string
	_, ok := waitUntil(30*time.Second, func() bool {
		wrong = wrong[:0]
		for _, o := range observers {
			st, err := statusesAt(o.api)
			if err != nil {
				wrong = append(wrong, fmt.Sprintf("%s: %v", o.name, err))
				continue
			}
			for _, p := range c.cl.providers {
				want := "down"
				if p.live() {
					want = "up"
				}
				if got := st[c.peer[p]]; got != want {
					wrong = append(wrong, fmt.Sprintf("%s shows %s %q, its process is %s", o.name, p.name, got, map[bool]string{true: "alive", false: "dead"}[p.live()]))
				}
			}
		}
		return len(wrong) == 0
	})
	if !ok {
		sort.Strings(wrong)
		c.violate("provider status does not match the processes after 30 s: %s", strings.Join(wrong, "; "))
		return
	}
	c.out("statuses: provider status matches the processes at all %d live observers", len(observers))
}

// checkChain: no live node's chain is stalled, and the app hash at a
// height every live node has committed is the same everywhere.
func (c *checker) checkChain() {
	type nodeChain struct {
		p   *proc
		rpc string
	}
	var live []nodeChain
	low := int64(-1)
	for _, p := range c.cl.all() {
		if !p.live() {
			continue
		}
		info, ok := nodeInfo(p.api)
		if !ok {
			c.violate("%s is alive but does not answer tenzro_nodeInfo", p.name)
			continue
		}
		if info.Chain != nil && info.Chain.Stalled {
			c.violate("%s: its chain is stalled at height %d", p.name, info.Height)
		}
		if low < 0 || info.Height < low {
			low = info.Height
		}
		cfg, err := node.Load(p.home)
		if err != nil || cfg.Chain.RPCListen == "" {
			continue
		}
		live = append(live, nodeChain{p, cfg.Chain.RPCListen})
	}
	if low < 2 {
		c.violate("a live node is at height %d", low)
		return
	}
	h := low - 1 // a block every live node holds
	hashes := map[string][]string{}
	for _, n := range live {
		hash, err := appHashAt(n.rpc, h)
		if err != nil {
			c.violate("%s: %v", n.p.name, err)
			continue
		}
		hashes[hash] = append(hashes[hash], n.p.name)
	}
	if len(hashes) != 1 {
		c.violate("app hashes at height %d differ: %v", h, hashes)
	}
	c.out("chain: %d live nodes with a CometBFT RPC agree on the app hash at height %d: %v", len(live), h, len(hashes) == 1)
}
