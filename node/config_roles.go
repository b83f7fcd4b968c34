package node

import (
	"github.com/tenzrod/tenzrod/node/provider"
	"github.com/tenzrod/tenzrod/router/gateway"
)

// The [provider] and [router] sections are their parts' own config; these
// names let node.Config read as one composition of its parts' configs.
type (
	ModelConfig     = provider.ModelConfig
	RouterConfig    = gateway.RouterConfig
	BuyerConfig     = gateway.BuyerConfig
	TokenizerConfig = gateway.TokenizerConfig
)

// Provider config names, as the provider role defines them.
const (
	EngineUpstream  = provider.EngineUpstream
	DevnetModelName = provider.DevnetModelName
)

// DevnetModel is a served model entry for the devnet's generated model.
func DevnetModel(dir, id string) ModelConfig { return provider.DevnetModel(dir, id) }

// EnsureDevnetModel generates the devnet's model into dir unless one is
// there, and returns its catalog ID.
func EnsureDevnetModel(dir string) (string, error) { return provider.EnsureDevnetModel(dir) }
