package consensus

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// DevnetValidator is one validator of a new network.
type DevnetValidator struct {
	Home      string          // node home; created with fresh keys if missing
	Moniker   string          // "" = base name of Home
	P2PListen string          // tcp://host:port
	RPCListen string          // "" = no CometBFT RPC server
	Advertise string          // host:port the other validators dial; "" = P2PListen's
	Operator  terms.AccountID // account that owns the stake
	Stake     uint64          // micro-units; 0 = 100 × PowerUnit
}

// Devnet describes a new network.
type Devnet struct {
	Dir         string                     // the shared genesis.json is written here
	ChainID     string                     // required
	GenesisTime time.Time                  // zero = now
	Params      ledger.Params              // zero = DefaultParams()
	Funded      map[terms.AccountID]uint64 // balances at genesis
	Escrows     []ledger.GenesisEscrow     // spend escrows open at genesis
	Validators  []DevnetValidator
	BlockTime   time.Duration // timeout_commit; 0 = 1s
	// EmptyBlocksInterval is the longest pause between blocks when no
	// transaction waits (create_empty_blocks_interval); 0 makes a block
	// every BlockTime. DefaultEmptyBlocksInterval is the idle default.
	EmptyBlocksInterval time.Duration
}

// DevnetGenesis creates a network: each validator's home and keys, one
// genesis (Dir/genesis.json, also copied to every home's
// config/genesis.json so a home is self-contained), and each home's
// config.toml with the listen addresses given and every other validator
// as a persistent peer. It returns the configurations to start the
// validators with (New, then Start); LoadConfig(home) returns the same.
func DevnetGenesis(d Devnet) ([]Config, error) {
	if d.ChainID == "" || len(d.Validators) == 0 {
		return nil, fmt.Errorf("consensus: devnet needs a chain ID and validators")
	}
	if d.GenesisTime.IsZero() {
		d.GenesisTime = time.Now()
	}
	if d.Params == (ledger.Params{}) {
		d.Params = ledger.DefaultParams()
	}
	app := ledger.AppGenesis{Params: d.Params, Escrows: d.Escrows}
	for _, a := range slices.SortedFunc(maps.Keys(d.Funded), func(x, y terms.AccountID) int { return bytes.Compare(x[:], y[:]) }) {
		app.Accounts = append(app.Accounts, ledger.GenesisAccount{Account: a, Balance: d.Funded[a]})
	}
	cfgs := make([]Config, len(d.Validators))
	addrs := make([]string, len(d.Validators))
	for i, v := range d.Validators {
		keys, err := InitHome(v.Home)
		if err != nil {
			return nil, err
		}
		stake := v.Stake
		if stake == 0 {
			stake = 100 * ledger.PowerUnit
		}
		app.Validators = append(app.Validators, ledger.GenesisValidator{Operator: v.Operator, ConsPubKey: keys.ConsPubKey, Stake: stake})
		host := v.Advertise
		if host == "" {
			host = strings.TrimPrefix(v.P2PListen, "tcp://")
		}
		addrs[i] = keys.NodeID + "@" + host
		moniker := v.Moniker
		if moniker == "" {
			moniker = filepath.Base(v.Home)
		}
		cfgs[i] = Config{Home: v.Home, Moniker: moniker, P2PListen: v.P2PListen, RPCListen: v.RPCListen,
			BlockTime: d.BlockTime, EmptyBlocksInterval: d.EmptyBlocksInterval}
	}
	doc, err := NewGenesisDoc(d.ChainID, d.GenesisTime, app)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(d.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("consensus: devnet dir: %w", err)
	}
	if err := WriteGenesisDoc(doc, filepath.Join(d.Dir, "genesis.json")); err != nil {
		return nil, err
	}
	for i := range cfgs {
		for j, a := range addrs {
			if j != i {
				cfgs[i].Peers = append(cfgs[i].Peers, a)
			}
		}
		if err := WriteGenesisDoc(doc, filepath.Join(cfgs[i].Home, "config", "genesis.json")); err != nil {
			return nil, err
		}
		if err := WriteConfig(cfgs[i]); err != nil {
			return nil, err
		}
		loaded, err := LoadConfig(cfgs[i].Home)
		if err != nil {
			return nil, err
		}
		cfgs[i] = loaded
	}
	return cfgs, nil
}
