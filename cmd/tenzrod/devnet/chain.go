package devnet

import (
	"crypto/ed25519"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/node"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// Chain funding of a new devnet, in micro-units.
const (
	BuyerChainBalance    = 1_000_000_000_000
	OperatorChainBalance = 10_000_000_000
	// ProbeEscrow pays a validator's probes: its escrow with itself.
	ProbeEscrow = 10_000_000_000
	// FaucetChainBalance funds the faucet account, which pays nothing
	// itself: operators joining the devnet are funded from it with
	// tenzrod tx transfer (a provider's bond is 1_000_000_000).
	FaucetChainBalance = 1_000_000_000_000
	// RouterChainBalance funds a gateway's account for the fees of the
	// transactions it signs as settler.
	RouterChainBalance = 1_000_000_000
	// ValidatorChainBalance funds a validator's account for what its own
	// settlements must hold: a validator settles its probes' records
	// itself when their provider did not, and a settlement's signer holds
	// fee_per_record for each of its records up front.
	ValidatorChainBalance = 1_000_000_000
)

// devnetBlockTime is the devnet's timeout_commit: blocks with
// transactions follow each other this fast. With none waiting, the
// validators make a block every consensus.DefaultEmptyBlocksInterval.
const devnetBlockTime = 500 * time.Millisecond

// A devnet's followers (providers, gateways) keep the blocks of its last
// minute or so, not a long-lived network's: snapshots (for nodes that
// join by state sync) are taken every devnetSnapshotInterval heights,
// and blocks older than both the newest snapshot and devnetRetainBlocks
// are pruned. Validators keep the genesis's evidence age besides, so a
// laptop that joins later still block-syncs from them.
const (
	devnetSnapshotInterval = 100
	devnetRetainBlocks     = 100
)

// devnetHourSeconds is the devnet's SLA "hour": validators give verdicts
// on every provider once a minute.
const devnetHourSeconds = 60

// devnetParams are the default parameters with the devnet's short hour
// and a fee on every record (what the fee pool collects shows in
// `payments`): a settled record pays it from its price, a record refused
// after signature work costs its submitter the same; transactions
// themselves are free.
func devnetParams() ledger.Params {
	p := ledger.DefaultParams()
	p.HourSeconds = devnetHourSeconds
	p.FeePerRecord = devnetFeePerRecord
	return p
}

// devnetFeePerRecord is taken from each settled record's price, and from
// the submitter for each record refused after signature work: 1 µ per
// record is ~40× what 4 validators' CPU for a refused record costs at
// 20 µ per core-second (issue 35's note; node/attacktest's fee spam).
const devnetFeePerRecord = 1

// AccountKeyFile is an operator's chain account key inside a node home.
const AccountKeyFile = "account.key"

// BuyerKeyFile is the devnet buyer's chain account key inside Dir.
const BuyerKeyFile = "buyer-account.key"

// FaucetKeyFile is the devnet faucet's chain account key inside Dir.
const FaucetKeyFile = "faucet.key"

// chainInfo is what the manifest reports of the chain.
type chainInfo struct {
	chainID string
	buyer   terms.AccountID
	faucet  terms.AccountID
	peers   []string // the validators' CometBFT addresses, id@host:port
}

// chainID is the devnet chain's ID for a network name.
func chainID(network string) string { return "tenzro-" + network }

// setupChain enables [chain] in every node config: validators from a
// genesis made by consensus.DevnetGenesis (written unless reused), and
// providers and gateways as followers with a copy of it. It funds the
// buyer's chain account and every provider operator's. ports[i] are node
// i's chain p2p and rpc ports.
func setupChain(o Options, cfgs []node.Config, ports []nodePorts) (chainInfo, error) {
	info := chainInfo{chainID: chainID(o.Network)}
	buyerKey, err := consensus.LoadOrCreateAccountKey(filepath.Join(o.Dir, BuyerKeyFile))
	if err != nil {
		return info, err
	}
	info.buyer = terms.AccountOf(buyerKey.Public().(ed25519.PublicKey))
	faucetKey, err := consensus.LoadOrCreateAccountKey(filepath.Join(o.Dir, FaucetKeyFile))
	if err != nil {
		return info, err
	}
	info.faucet = terms.AccountOf(faucetKey.Public().(ed25519.PublicKey))
	spec := consensus.Devnet{Dir: o.Dir, ChainID: info.chainID, BlockTime: devnetBlockTime,
		EmptyBlocksInterval: consensus.DefaultEmptyBlocksInterval, Params: devnetParams(),
		Funded: map[terms.AccountID]uint64{info.buyer: BuyerChainBalance, info.faucet: FaucetChainBalance}}
	var validators []int
	for i := range cfgs {
		c := &cfgs[i]
		c.Chain.Enabled = true
		c.Chain.P2PListen = fmt.Sprintf("tcp://127.0.0.1:%d", ports[i].chainP2P)
		c.Chain.RPCListen = fmt.Sprintf("tcp://127.0.0.1:%d", ports[i].chainRPC)
		c.Chain.PersistentPeers = []string{}
		c.Chain.SnapshotInterval, c.Chain.RetainBlocks = devnetSnapshotInterval, devnetRetainBlocks
		op, err := consensus.LoadOrCreateAccountKey(c.Path(AccountKeyFile))
		if err != nil {
			return info, err
		}
		account := terms.AccountOf(op.Public().(ed25519.PublicKey))
		if len(c.Router.Buyers) > 0 {
			// The buyer pays this router from an escrow opened at genesis
			// with the router's account as settler.
			spec.Escrows = append(spec.Escrows, ledger.GenesisEscrow{Payer: info.buyer, Settler: account, Amount: BuyerCredit})
			for j := range c.Router.Buyers {
				c.Router.Buyers[j].Payer, c.Router.Buyers[j].Account, c.Router.Buyers[j].InitialCredit = info.buyer.String(), "", 0
			}
		}
		switch c.Role {
		case node.RoleValidator:
			// Probes are paid calls from the validator's own escrow.
			spec.Escrows = append(spec.Escrows, ledger.GenesisEscrow{Payer: account, Settler: account, Amount: ProbeEscrow})
			spec.Funded[account] = ValidatorChainBalance
			c.Chain.Role = consensus.ChainValidator
			validators = append(validators, i)
			spec.Validators = append(spec.Validators, consensus.DevnetValidator{Home: c.Path(c.Chain.Home),
				P2PListen: c.Chain.P2PListen, RPCListen: c.Chain.RPCListen, Operator: account})
		case node.RoleProvider:
			c.Chain.Role = consensus.ChainFollower
			spec.Funded[account] = OperatorChainBalance
			if len(c.Provider.RemoteExperts.Models) > 0 {
				// It pays its expert holders from its escrow with itself.
				spec.Escrows = append(spec.Escrows, ledger.GenesisEscrow{Payer: account, Settler: account, Amount: ProbeEscrow})
			}
		default:
			c.Chain.Role = consensus.ChainFollower
			// A gateway signs transactions of its own as its buyers'
			// settler (standby streams, records it settles itself), so
			// its account exists on chain.
			spec.Funded[account] = RouterChainBalance
		}
	}
	genesis := filepath.Join(o.Dir, "genesis.json")
	if _, err := os.Stat(genesis); o.Fresh || err != nil {
		if _, err := consensus.DevnetGenesis(spec); err != nil {
			return info, err
		}
	}
	doc, err := os.ReadFile(genesis)
	if err != nil {
		return info, fmt.Errorf("devnet: %w", err)
	}
	addrs := map[int]string{} // node index -> validator's id@host:port
	for _, i := range validators {
		keys, err := consensus.InitHome(cfgs[i].Path(cfgs[i].Chain.Home))
		if err != nil {
			return info, err
		}
		addrs[i] = fmt.Sprintf("%s@127.0.0.1:%d", keys.NodeID, ports[i].chainP2P)
		info.peers = append(info.peers, addrs[i])
	}
	for i := range cfgs {
		c := &cfgs[i]
		for _, j := range validators {
			if j != i {
				c.Chain.PersistentPeers = append(c.Chain.PersistentPeers, addrs[j])
			}
		}
		if c.Role != node.RoleValidator {
			dst := filepath.Join(c.Path(c.Chain.Home), "config", "genesis.json")
			if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
				return info, fmt.Errorf("devnet: %w", err)
			}
			if err := os.WriteFile(dst, doc, 0o644); err != nil {
				return info, fmt.Errorf("devnet: %w", err)
			}
		}
	}
	return info, nil
}
