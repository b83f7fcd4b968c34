package node

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/chainapi"
	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/node/rpc"
	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router"
	"github.com/tenzrod/tenzrod/router/pricing"
)

// Version is the node software version, set at build time with -ldflags.
var Version = "dev"

// NodeInfo is the result of tenzro_nodeInfo.
type NodeInfo struct {
	PeerID      string   `json:"peer_id"`
	ListenAddrs []string `json:"listen_addrs"`
	Role        Role     `json:"role"`
	Network     string   `json:"network"`
	MachineID   string   `json:"machine_id"`
	KeyBackend  string   `json:"key_backend"`
	Hardware    bool     `json:"hardware_key"`
	Version     string   `json:"version"`
	API         string   `json:"api"`
	// Height is the chain's latest committed block and ChainID its ID;
	// 0 and "" when the node runs no chain.
	Height  int64  `json:"height"`
	ChainID string `json:"chain_id"`
	// Chain is the chain watchdog's view (stalled, peers, redials); nil
	// without a chain.
	Chain *consensus.Health `json:"chain,omitempty"`
	// ChainNodeID, ChainP2PListen and ChainPeers are how another node
	// follows the chain through this one (tenzrod init --chain-from): its
	// CometBFT node ID, p2p listen address and persistent peers.
	ChainNodeID    string   `json:"chain_node_id,omitempty"`
	ChainP2PListen string   `json:"chain_p2p_listen,omitempty"`
	ChainPeers     []string `json:"chain_peers,omitempty"`
}

// PeerView is one connected peer in tenzro_listPeers.
type PeerView struct {
	PeerID    string   `json:"peer_id"`
	Addrs     []string `json:"addrs"`
	Direction string   `json:"direction"`
	LatencyMs float64  `json:"latency_ms"`
	Agent     string   `json:"agent,omitempty"`
}

// TailParams are tenzro_tailGossip's parameters.
type TailParams struct {
	Topic  string `json:"topic"`
	After  uint64 `json:"after"`
	Limit  int    `json:"limit"`
	WaitMs int    `json:"wait_ms"`
}

// TailResult is tenzro_tailGossip's result.
type TailResult struct {
	Events []gossip.Event `json:"events"`
	Next   uint64         `json:"next"`
}

// FindParams are tenzro_findProviders' parameters.
type FindParams struct {
	Model string `json:"model"`
	Max   int    `json:"max"`
}

// FoundProvider is one DHT result.
type FoundProvider struct {
	PeerID string   `json:"peer_id"`
	Addrs  []string `json:"addrs"`
}

const maxTailWait = 30 * time.Second

// rpcParts are the parts that contribute methods of their own.
func (n *Node) rpcParts() []rpc.Contributor {
	return []rpc.Contributor{
		chainapi.Chain{Node: n.chain},
		chainapi.Payments{Node: n.chain},
		chainapi.Disputes{Node: n.chain},
		chainapi.Streams{Node: n.chain},
		receiptAPI{gateway: n.gateway, store: n.store, gossip: n.gossip, clock: n.clock},
		feedAPI{feed: n.feed, table: n.table},
		recentAPI{gateway: n.gateway},
		sessionAPI{gateway: n.gateway, chain: n.chain, buyers: newBuyers(n.cfg.Router.Buyers), admin: n.cfg.API.AdminTokenSHA256},
		evidenceAPI{store: n.store, chain: n.chain, buyers: newBuyers(n.cfg.Router.Buyers), admin: n.cfg.API.AdminTokenSHA256},
	}
}

// registerMethods registers the node's own methods and its parts'.
func registerMethods(s *rpc.Server, n *Node) {
	s.Register("tenzro_nodeInfo", func(context.Context, json.RawMessage) (any, error) {
		return n.Info(), nil
	})
	s.Register("tenzro_listProviders", func(context.Context, json.RawMessage) (any, error) {
		views := n.table.List()
		if n.gateway != nil {
			brs := n.gateway.Breakers()
			for i := range views {
				if p, err := peer.Decode(views[i].PeerID); err == nil {
					if b, ok := brs[p]; ok {
						views[i].Breaker = b.State.String()
					}
				}
			}
		}
		return views, nil
	})
	s.Register("tenzro_listPeers", func(context.Context, json.RawMessage) (any, error) {
		out := []PeerView{}
		for _, p := range n.host.Peers() {
			out = append(out, PeerView{PeerID: p.ID.String(), Addrs: p.Addrs, Direction: p.Direction,
				LatencyMs: float64(p.Latency.Microseconds()) / 1000, Agent: p.AgentVersion})
		}
		return out, nil
	})
	s.Register("tenzro_listTopics", func(context.Context, json.RawMessage) (any, error) {
		return n.gossip.Topics(), nil
	})
	s.Register("tenzro_tailGossip", func(ctx context.Context, raw json.RawMessage) (any, error) {
		return n.tail(ctx, raw)
	})
	s.Register("tenzro_findProviders", func(ctx context.Context, raw json.RawMessage) (any, error) {
		return n.findProviders(ctx, raw)
	})
	s.Register("tenzro_quoteInference", func(ctx context.Context, raw json.RawMessage) (any, error) {
		return n.quote(ctx, raw)
	})
	for _, part := range n.rpcParts() {
		part.RegisterRPC(s)
	}
	s.Register("tenzro_rpcMethods", func(context.Context, json.RawMessage) (any, error) {
		return s.Methods(), nil
	})
}

// Info describes this node.
func (n *Node) Info() NodeInfo {
	height, chainID := n.chainInfo()
	info := NodeInfo{
		Height: height, ChainID: chainID,
		PeerID: n.host.ID().String(), ListenAddrs: n.host.Addrs(), Role: n.cfg.Role, Network: n.cfg.Network,
		MachineID: n.id.MachineID().String(), KeyBackend: string(n.id.Backend()), Hardware: n.id.Backend().Hardware(),
		Version: Version, API: n.api.URL(), Chain: n.chainHealth(),
	}
	if n.chain != nil {
		info.ChainNodeID, info.ChainP2PListen, info.ChainPeers = n.chain.NodeID(), n.cfg.Chain.P2PListen, n.cfg.Chain.PersistentPeers
	}
	return info
}

func (n *Node) tail(ctx context.Context, raw json.RawMessage) (any, error) {
	p, err := rpc.Params[TailParams](raw)
	if err != nil {
		return nil, err
	}
	var kind gossip.Kind
	if p.Topic != "" {
		if kind, err = gossip.ParseTopic(n.cfg.Network, p.Topic); err != nil {
			return nil, rpc.InvalidParams("topic: %v", err)
		}
	}
	tap := n.gossip.Tap()
	if p.After == 0 {
		return TailResult{Events: []gossip.Event{}, Next: tap.Head()}, nil
	}
	if p.Limit <= 0 || p.Limit > 1000 {
		p.Limit = 100
	}
	wait := min(time.Duration(max(p.WaitMs, 0))*time.Millisecond, maxTailWait)
	events, next := tap.Since(ctx, p.After, kind, p.Limit, wait)
	if events == nil {
		events = []gossip.Event{}
	}
	return TailResult{Events: events, Next: next}, nil
}

func (n *Node) findProviders(ctx context.Context, raw json.RawMessage) (any, error) {
	p, err := rpc.Params[FindParams](raw)
	if err != nil {
		return nil, err
	}
	b, err := hex.DecodeString(p.Model)
	if err != nil || len(b) != 32 {
		return nil, rpc.InvalidParams("model: %q is not a 64-hex-digit catalog model ID", p.Model)
	}
	var id [32]byte
	copy(id[:], b)
	if p.Max <= 0 || p.Max > 100 {
		p.Max = 20
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	found, err := n.host.FindModelProviders(ctx, id, p.Max)
	if err != nil {
		return nil, rpc.Unavailable("dht: %v", err)
	}
	out := []FoundProvider{}
	for _, ai := range found {
		n.table.AddDHTProvider(ai, id)
		fp := FoundProvider{PeerID: ai.ID.String(), Addrs: []string{}}
		for _, a := range ai.Addrs {
			fp.Addrs = append(fp.Addrs, a.String())
		}
		out = append(out, fp)
	}
	return out, nil
}

// QuoteParams are tenzro_quoteInference's parameters.
type QuoteParams struct {
	Model        string             `json:"model"`
	Units        pricing.Units      `json:"units"`
	Verification terms.Verification `json:"verification"`
}

func (n *Node) quote(ctx context.Context, raw json.RawMessage) (any, error) {
	p, err := rpc.Params[QuoteParams](raw)
	if err != nil {
		return nil, err
	}
	if p.Model == "" {
		return nil, rpc.InvalidParams("model: required (a model name or hex catalog ID)")
	}
	if p.Verification == "" {
		p.Verification = terms.VerifyNone
	}
	if !p.Verification.Valid() {
		return nil, rpc.InvalidParams("verification: unknown level %q (%s)", p.Verification, terms.LevelNames())
	}
	sur, err := n.surcharges(ctx)
	if err != nil {
		return nil, err
	}
	var lines []router.QuoteLine
	var qerr error
	if n.gateway != nil {
		// A routing node quotes exactly the ID a request would be routed
		// to: offers of another ID under the same name are not its.
		id, err := n.gateway.Resolve(ctx, p.Model, p.Verification)
		if err != nil {
			return nil, rpc.InvalidParams("model: %v", err)
		}
		lines, qerr = n.table.QuotesOf(id, p.Units, p.Verification, sur)
	} else {
		lines, qerr = n.table.Quotes(p.Model, p.Units, p.Verification, sur)
	}
	if qerr != nil {
		return nil, rpc.InvalidParams("%v", qerr)
	}
	return lines, nil
}

// chainHealth is the chain watchdog's view, nil without a chain.
func (n *Node) chainHealth() *consensus.Health {
	if n.chain == nil {
		return nil
	}
	h := n.chain.Health()
	return &h
}

// chainInfo is the chain part of tenzro_nodeInfo.
func (n *Node) chainInfo() (height int64, chainID string) {
	if n.chain == nil {
		return 0, ""
	}
	return n.chain.App().Height(), n.chain.App().ChainID()
}
