package main

import (
	"crypto/ed25519"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/node"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// newGenesisCmd is `tenzrod genesis`: a new network from validator homes.
func newGenesisCmd() *cobra.Command {
	var (
		chainID, dir string
		validators   []string
		funds        []string
		blockTime    time.Duration
		idle         time.Duration
		stake        uint64
	)
	cmd := &cobra.Command{
		Use:   "genesis --chain-id ID --dir DIR --validator HOME[=HOST:PORT]... [--fund ACCOUNT=AMOUNT]...",
		Short: "Create a new chain: one genesis for the given validator homes",
		Long: `genesis creates a new network. Each --validator is a tenzrod validator home
(tenzrod init --role validator); HOST:PORT is where the other validators reach
its chain p2p port (default: its [chain] p2p_listen). For each home it creates
the CometBFT keys under the chain home, an operator account key
(HOME/account.key) that owns the stake, and CometBFT's config.toml; it writes
DIR/genesis.json (also copied into every chain home) and enables [chain] in
every home's config.toml with the other validators as persistent peers.

Give DIR/genesis.json to providers and gateways (their [chain] genesis_file)
and to auditors (tenzrod evidence verify --validators).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if chainID == "" || dir == "" || len(validators) == 0 {
				return fmt.Errorf("--chain-id, --dir and at least one --validator are required")
			}
			spec := consensus.Devnet{Dir: dir, ChainID: chainID, BlockTime: blockTime, EmptyBlocksInterval: idle, Funded: map[terms.AccountID]uint64{}}
			for _, f := range funds {
				a, amt, ok := strings.Cut(f, "=")
				id, err := terms.ParseAccountID(a)
				n, err2 := strconv.ParseUint(amt, 10, 64)
				if !ok || err != nil || err2 != nil || n == 0 {
					return fmt.Errorf("--fund %q: want ACCOUNT=AMOUNT (64 hex digits = micro-units > 0)", f)
				}
				spec.Funded[id] += n
			}
			var cfgs []node.Config
			for _, v := range validators {
				home, adv, _ := strings.Cut(v, "=")
				cfg, err := node.Load(home)
				if err != nil {
					return err
				}
				if cfg.Role != node.RoleValidator {
					return fmt.Errorf("--validator %s: a %s home, not a validator", home, cfg.Role)
				}
				op, err := consensus.LoadOrCreateAccountKey(cfg.Path("account.key"))
				if err != nil {
					return err
				}
				cfg.Chain.Role = consensus.ChainValidator
				cfgs = append(cfgs, cfg)
				operator := terms.AccountOf(op.Public().(ed25519.PublicKey))
				spec.Validators = append(spec.Validators, consensus.DevnetValidator{Home: cfg.Path(cfg.Chain.Home),
					Moniker: filepath.Base(home), P2PListen: cfg.Chain.P2PListen, RPCListen: cfg.Chain.RPCListen,
					Advertise: adv, Operator: operator, Stake: stake})
			}
			written, err := consensus.DevnetGenesis(spec)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			for i, cfg := range cfgs {
				cfg.Chain.Enabled = true
				cfg.Chain.PersistentPeers = append([]string{}, written[i].Peers...)
				if err := node.WriteConfig(cfg, true); err != nil {
					return err
				}
				fmt.Fprintf(out, "validator %-20s operator %s  peers %d\n", filepath.Base(cfg.Home), spec.Validators[i].Operator, len(written[i].Peers))
			}
			fmt.Fprintf(out, "genesis %s (chain %s, %d validators, %d funded accounts)\n", filepath.Join(dir, "genesis.json"), chainID, len(cfgs), len(spec.Funded))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&chainID, "chain-id", "", "chain ID (required)")
	f.StringVar(&dir, "dir", "", "directory for genesis.json (required)")
	f.StringArrayVar(&validators, "validator", nil, "validator node home, optionally =HOST:PORT to advertise (repeat)")
	f.StringArrayVar(&funds, "fund", nil, "ACCOUNT=AMOUNT funded at genesis, micro-units (repeat)")
	f.DurationVar(&blockTime, "block-time", time.Second, "pause after each block (timeout_commit)")
	f.DurationVar(&idle, "empty-blocks-interval", consensus.DefaultEmptyBlocksInterval,
		"with no transaction waiting, make a block only this often (create_empty_blocks_interval; 0 = every block time)")
	f.Uint64Var(&stake, "stake", 0, "each validator's stake in micro-units (0 = 100 voting power)")
	return cmd
}
