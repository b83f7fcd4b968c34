package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/tenzrod/tenzrod/cmd/tenzrod/devnet"
	"github.com/tenzrod/tenzrod/node"
)

func newDevnetCmd() *cobra.Command {
	o := devnet.Options{}
	probe := node.Default(node.RoleValidator).Router.ProbeInterval
	cmd := &cobra.Command{
		Use:   "devnet --dir DIR",
		Short: "Run a whole network on loopback, each node its own process",
		Long: `devnet writes a home per node under --dir (config, keys, log), starts every
node as a child process on free loopback ports, waits until all are healthy,
writes DIR/devnet.json and prints what to try. Ctrl-C (or SIGTERM) stops every
node the devnet started and says so for each; one still running 10 s after
SIGTERM is killed, and named. A node of DIR restarted by hand is not the
devnet's to stop: its last line names any still running, with its PID.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			exe, err := os.Executable()
			if err != nil {
				return err
			}
			o.Binary = exe
			o.Out = cmd.OutOrStdout()
			if cmd.Flags().Changed("probe-interval") {
				o.ProbeInterval = &probe
			}
			return devnet.Run(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Dir, "dir", ".devnet", "directory for the nodes' homes and devnet.json")
	f.IntVar(&o.Validators, "validators", 4, "number of validators (4 is the fewest that keep the chain going with one down)")
	f.IntVar(&o.Providers, "providers", 3, "number of providers")
	f.IntVar(&o.Gateways, "gateways", 1, "number of gateways")
	f.StringVar(&o.Network, "network", "devnet", "network name")
	f.StringVar(&o.KeyBackend, "key-backend", "tpm-sim", "identity backend of validators and providers (gateways use software)")
	f.IntVar(&o.MoEHolders, "moe-holders", 0, "expert holders to add beyond --providers: the providers then also serve a generated MoE model (tenzro-devnet-moe) with its experts at the holders, each expert at two")
	f.BoolVar(&o.TEE, "tee", false, "TEST-ONLY tee: every node trusts a fresh test attestation root and each provider announces a file-based test device, so the model is quoted and served at tee without SEV-SNP/TDX (attestation kind \"test\"; proves nothing; real-root nodes refuse it)")
	f.BoolVar(&o.Fresh, "fresh", true, "delete DIR's previous nodes first (keys included)")
	f.DurationVar(&probe, "probe-interval", probe, "how often each validator probes every registered, live provider for the price feed; 0s turns probes off")
	cmd.AddCommand(newDevnetAddProviderCmd())
	return cmd
}
