package consensus

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	cmttypes "github.com/cometbft/cometbft/types"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// TestDevnetGenesisHomes creates a 3-validator devnet on disk and checks
// the homes: one genesis (shared and copied) with the validators' keys,
// stakes and funded accounts; config.toml files that LoadConfig reads back
// into the returned configs, with every other validator as a peer; an
// operator's edit of a setting Config does not carry survives into the
// CometBFT configuration, which waits out the empty-blocks interval on an
// idle chain; an idle pause past the mempool's clock skew is refused; and
// a follower refuses a validator's home.
func TestDevnetGenesisHomes(t *testing.T) {
	dir := t.TempDir()
	op := func(i byte) terms.AccountID {
		seed := sha256.Sum256([]byte{i})
		return terms.AccountOf(ed25519.NewKeyFromSeed(seed[:]).Public().(ed25519.PublicKey))
	}
	d := Devnet{Dir: dir, ChainID: "devnet-1", Params: ledger.DefaultParams(), BlockTime: 2 * time.Second, EmptyBlocksInterval: 3 * time.Second,
		Funded: map[terms.AccountID]uint64{op(9): 5_000, op(8): 7}}
	for i := range 3 {
		d.Validators = append(d.Validators, DevnetValidator{
			Home: filepath.Join(dir, fmt.Sprintf("v%d", i)), P2PListen: fmt.Sprintf("tcp://127.0.0.1:%d", 26656+10*i),
			RPCListen: fmt.Sprintf("tcp://127.0.0.1:%d", 26657+10*i), Operator: op(byte(i)), Stake: uint64(i+1) * ledger.PowerUnit,
		})
	}
	cfgs, err := DevnetGenesis(d)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := cmttypes.GenesisDocFromFile(filepath.Join(dir, "genesis.json"))
	if err != nil {
		t.Fatal(err)
	}
	g, err := ledger.ParseAppGenesis(doc.AppState)
	if err != nil || doc.ChainID != "devnet-1" || len(doc.Validators) != 3 || len(g.Accounts) != 2 {
		t.Fatalf("genesis: chain %q, %d validators, %d accounts, %v", doc.ChainID, len(doc.Validators), len(g.Accounts), err)
	}
	shared, _ := os.ReadFile(filepath.Join(dir, "genesis.json"))
	for i, c := range cfgs {
		keys, err := InitHome(c.Home)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(doc.Validators[i].PubKey.Bytes(), keys.ConsPubKey) || doc.Validators[i].Power != int64(i+1) {
			t.Fatalf("validator %d: genesis key/power %X/%d, home key %X", i, doc.Validators[i].PubKey.Bytes(), doc.Validators[i].Power, keys.ConsPubKey)
		}
		if copyB, _ := os.ReadFile(filepath.Join(c.Home, "config", "genesis.json")); !bytes.Equal(copyB, shared) {
			t.Fatalf("home %d genesis differs from the shared one", i)
		}
		loaded, err := LoadConfig(c.Home)
		if err != nil {
			t.Fatal(err)
		}
		if loaded.P2PListen != d.Validators[i].P2PListen || loaded.RPCListen != d.Validators[i].RPCListen ||
			loaded.BlockTime != 2*time.Second || loaded.EmptyBlocksInterval != 3*time.Second || len(loaded.Peers) != 2 || !slices.Equal(loaded.Peers, c.Peers) {
			t.Fatalf("home %d config %+v", i, loaded)
		}
		var want []string
		for j, v := range d.Validators {
			if j != i {
				other, _ := InitHome(v.Home)
				want = append(want, other.NodeID+"@"+strings.TrimPrefix(v.P2PListen, "tcp://"))
			}
		}
		if !slices.Equal(loaded.Peers, want) {
			t.Fatalf("home %d peers %v, want %v", i, loaded.Peers, want)
		}
	}

	// An operator edit of config.toml is honored.
	path := ConfigFile(cfgs[0].Home)
	b, _ := os.ReadFile(path)
	edited := bytes.Replace(b, []byte("size = 20000"), []byte("size = 1234"), 1)
	if bytes.Equal(edited, b) {
		t.Fatal("config.toml has no mempool size = 20000")
	}
	if err := os.WriteFile(path, edited, 0o600); err != nil {
		t.Fatal(err)
	}
	loaded, err := LoadConfig(cfgs[0].Home)
	if err != nil {
		t.Fatal(err)
	}
	ccfg, err := loaded.cometConfig()
	if err != nil || ccfg.Mempool.Size != 1234 || ccfg.P2P.ListenAddress != d.Validators[0].P2PListen {
		t.Fatalf("edited config: mempool %d p2p %s %v", ccfg.Mempool.Size, ccfg.P2P.ListenAddress, err)
	}
	if !ccfg.Consensus.CreateEmptyBlocks || ccfg.Consensus.CreateEmptyBlocksInterval != 3*time.Second || !ccfg.Consensus.WaitForTxs() {
		t.Fatalf("idle blocks: create_empty_blocks %v every %s", ccfg.Consensus.CreateEmptyBlocks, ccfg.Consensus.CreateEmptyBlocksInterval)
	}
	// An idle pause past the clock skew the mempool can bear is refused,
	// naming CometBFT's key.
	slow := bytes.Replace(edited, []byte(`create_empty_blocks_interval = "3s"`), []byte(`create_empty_blocks_interval = "1m0s"`), 1)
	if bytes.Equal(slow, edited) {
		t.Fatal(`config.toml has no create_empty_blocks_interval = "3s"`)
	}
	if err := os.WriteFile(path, slow, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadConfig(cfgs[0].Home); err == nil || !strings.Contains(err.Error(), "create_empty_blocks_interval") {
		t.Fatalf("a 1m idle pause: %v, want refused naming create_empty_blocks_interval", err)
	}

	f := Config{Home: cfgs[1].Home, Moniker: "f", P2PListen: "tcp://127.0.0.1:1", GenesisFile: filepath.Join(dir, "genesis.json"), Follower: true}
	if _, err := New(f); !errors.Is(err, ErrValidatorHome) {
		t.Fatalf("follower on a validator home: %v, want ErrValidatorHome", err)
	}
}
