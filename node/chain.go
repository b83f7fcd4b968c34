package node

import (
	"os"
	"path/filepath"

	"github.com/tenzrod/tenzrod/consensus"
)

// ConsensusConfig returns the in-process chain node's configuration: the
// chain home's CometBFT config.toml when there is one (as `tenzrod genesis`
// and the devnet write it), with the [chain] section's addresses, peers and
// genesis applied over it.
func (c Config) ConsensusConfig() (consensus.Config, error) {
	home := c.Path(c.Chain.Home)
	var cc consensus.Config
	if _, err := os.Stat(consensus.ConfigFile(home)); err == nil {
		if cc, err = consensus.LoadConfig(home); err != nil {
			return consensus.Config{}, err
		}
	} else {
		cc = consensus.Config{Home: home, Moniker: filepath.Base(c.Home)}
	}
	cc = c.Chain.Apply(cc, c.Path)
	return cc, cc.Validate()
}
