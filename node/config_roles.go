package node

import "github.com/tenzrod/tenzrod/node/provider"

// The [provider] section is the provider role's own config; these names
// let node.Config read as one composition of its parts' configs.
type (
	ProviderConfig = provider.Config
	ModelConfig    = provider.ModelConfig
)

// Provider config names, as the provider role defines them.
const (
	EngineEmbedded  = provider.EngineEmbedded
	EngineUpstream  = provider.EngineUpstream
	UpstreamKeyEnv  = provider.UpstreamKeyEnv
	DevnetModelName = provider.DevnetModelName
)

// DefaultProviderConfig returns the provider role's defaults.
func DefaultProviderConfig() ProviderConfig { return provider.DefaultConfig() }

// DevnetModel is a served model entry for the devnet's generated model.
func DevnetModel(dir, id string) ModelConfig { return provider.DevnetModel(dir, id) }

// EnsureDevnetModel generates the devnet's model into dir unless one is
// there, and returns its catalog ID.
func EnsureDevnetModel(dir string) (string, error) { return provider.EnsureDevnetModel(dir) }
