package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
)

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "tenzrod",
		Short: "A node of the tenzro open market for AI inference",
		Long: `tenzrod runs one node of the tenzro network: a validator, a provider serving
models, or a gateway on your own machine. Every node speaks libp2p, gossips
signed heartbeats and announcements, and serves an HTTP API (JSON-RPC at /rpc,
Prometheus at /metrics).

Start a whole network on loopback with:  tenzrod devnet --dir .devnet`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       versionLine(),
	}
	root.SetVersionTemplate("{{.Version}}")
	root.AddCommand(
		newInitCmd(),
		newRunCmd("validator", "Run a validator node", "Runs a validator: a libp2p node in DHT server mode that observes providers and, with [chain] enabled (see `tenzrod genesis`), a CometBFT validator of the ledger in-process."),
		newRunCmd("provider", "Run a provider node", "Runs a provider: announces its models and rate card, heartbeats every 2 s, and provides its models in the DHT. With [chain] enabled it follows the ledger as a full node."),
		newGatewayCmd(),
		newJoinCmd(),
		newDevnetCmd(),
		newShellCmd(),
		newKeysCmd(),
		newEvidenceCmd(),
		newTxCmd(),
		newGenesisCmd(),
		newModelCmd(),
		newVersionCmd(),
		newHealthcheckCmd(),
	)
	return root
}

// defaultHome is ~/.tenzrod/<name>.
func defaultHome(name string) string {
	h, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(".tenzrod", name)
	}
	return filepath.Join(h, ".tenzrod", name)
}

func requireHome(home string) error {
	if home == "" {
		return fmt.Errorf("--home is required")
	}
	return nil
}
