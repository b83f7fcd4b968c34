package consensus

import "os"

// NodeConfig is the in-process chain node's configuration: the chain
// home's CometBFT config.toml when there is one (as `tenzrod genesis` and
// the devnet write it), with the section's addresses, peers and genesis
// applied over it. path resolves the section's paths against the node's
// home; moniker names a chain home without a config.toml.
func (c ChainConfig) NodeConfig(path func(string) string, moniker string) (Config, error) {
	home := path(c.Home)
	var cc Config
	if _, err := os.Stat(ConfigFile(home)); err == nil {
		if cc, err = LoadConfig(home); err != nil {
			return Config{}, err
		}
	} else {
		cc = Config{Home: home, Moniker: moniker}
	}
	cc = c.Apply(cc, path)
	return cc, cc.Validate()
}
