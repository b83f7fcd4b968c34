package node

import (
	"fmt"

	"github.com/tenzrod/tenzrod/consensus"
)

// AccountKeyFile is the operator's chain account key inside the node home
// (the devnet funds it at genesis).
const AccountKeyFile = "account.key"

// operatorSubmitter submits this node's own transactions (registration,
// verdicts) from the operator account HOME/account.key.
func (n *Node) operatorSubmitter() (*consensus.Submitter, error) {
	key, err := consensus.LoadOrCreateAccountKey(n.cfg.Path(AccountKeyFile))
	if err != nil {
		return nil, fmt.Errorf("node: %w", err)
	}
	return consensus.NewSubmitter(n.chain, key, n.log)
}
