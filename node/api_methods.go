package node

import (
	"context"
	"encoding/json"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/chainapi"
	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/node/openai"
	"github.com/tenzrod/tenzrod/node/rpc"
	"github.com/tenzrod/tenzrod/p2p"
	"github.com/tenzrod/tenzrod/router/buyerkeys"
	"github.com/tenzrod/tenzrod/router/gateway/gatewayapi"
	"github.com/tenzrod/tenzrod/router/pricefeed"
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

// rpcParts are the parts that contribute methods of their own.
func (n *Node) rpcParts() []rpc.Contributor {
	bs := openai.NewBuyers(n.cfg.Router.BuyerAccounts(), n.cfg.API.AdminTokenSHA256).WithKeys(n.keys)
	return []rpc.Contributor{
		p2p.API{Host: n.host, OnFound: n.table.AddDHTProvider},
		n.gossip,
		gatewayapi.Providers{Table: n.table, Gateway: n.gateway, Surcharges: n.surcharges},
		chainapi.Chain{Node: n.chain},
		chainapi.Payments{Node: n.chain},
		chainapi.Disputes{Node: n.chain},
		chainapi.Streams{Node: n.chain},
		gatewayapi.Receipts{Gateway: n.gateway, Store: n.store, Pins: n.gossip.Validator().Pins(), Clock: n.clock},
		pricefeed.API{Feed: n.feed, Table: n.table},
		gatewayapi.Recent{Gateway: n.gateway},
		gatewayapi.Sessions{Gateway: n.gateway, Chain: n.chain, Callers: bs},
		gatewayapi.Evidence{Store: n.store, Chain: n.chain, Callers: bs},
		buyerkeys.API{Store: n.keys, Callers: bs},
	}
}

// registerMethods registers the node's own methods and its parts'.
func registerMethods(s *rpc.Server, n *Node) {
	s.Register("tenzro_nodeInfo", func(context.Context, json.RawMessage) (any, error) {
		return n.Info(), nil
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
	info := NodeInfo{
		PeerID: n.host.ID().String(), ListenAddrs: n.host.Addrs(), Role: n.cfg.Role, Network: n.cfg.Network,
		MachineID: n.id.MachineID().String(), KeyBackend: string(n.id.Backend()), Hardware: n.id.Backend().Hardware(),
		Version: Version, API: n.api.URL(), Chain: n.chainHealth(),
	}
	if n.chain != nil {
		info.Height, info.ChainID = n.chain.App().Height(), n.chain.App().ChainID()
		info.ChainNodeID, info.ChainP2PListen, info.ChainPeers = n.chain.NodeID(), n.cfg.Chain.P2PListen, n.cfg.Chain.PersistentPeers
	}
	return info
}

// chainHealth is the chain watchdog's view, nil without a chain.
func (n *Node) chainHealth() *consensus.Health {
	if n.chain == nil {
		return nil
	}
	h := n.chain.Health()
	return &h
}

// observe adds an accepted price observation to the node's feed.
func (n *Node) observe(v *gossip.VerifiedPriceObs) {
	n.feed.Add(pricefeed.ObservationOf(v))
	if v.Success && n.gateway != nil {
		// A validator's probe that the provider answered is word of its
		// health independent of this gateway's own failed calls.
		if p, err := peer.Decode(v.ProviderPeer); err == nil {
			n.gateway.ProviderHealthy(p, time.UnixMilli(v.TimeMs))
		}
	}
}
