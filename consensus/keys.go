package consensus

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/cometbft/cometbft/crypto/ed25519"
	"github.com/cometbft/cometbft/p2p"
	"github.com/cometbft/cometbft/privval"
	cmttypes "github.com/cometbft/cometbft/types"
	"github.com/tenzrod/tenzrod/consensus/ledger"
)

// NodeKeys are the public halves of a node's CometBFT keys.
type NodeKeys struct {
	NodeID     string // p2p node ID (40 hex digits), the "id" of id@host:port
	ConsPubKey []byte // Ed25519 consensus (validator) public key
}

// InitHome creates home/config and home/data and the node and validator
// keys if they do not exist yet, and returns their public halves.
func InitHome(home string) (NodeKeys, error) {
	cfg, err := Config{Home: home}.cometConfig()
	if err != nil {
		return NodeKeys{}, err
	}
	for _, d := range []string{filepath.Join(home, "config"), filepath.Join(home, "data")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return NodeKeys{}, fmt.Errorf("consensus: create %s: %w", d, err)
		}
	}
	nk, err := p2p.LoadOrGenNodeKey(cfg.NodeKeyFile())
	if err != nil {
		return NodeKeys{}, fmt.Errorf("consensus: node key: %w", err)
	}
	pv, err := privval.LoadOrGenFilePV(cfg.PrivValidatorKeyFile(), cfg.PrivValidatorStateFile(), nil)
	if err != nil {
		return NodeKeys{}, fmt.Errorf("consensus: validator key: %w", err)
	}
	pub, err := pv.GetPubKey()
	if err != nil {
		return NodeKeys{}, fmt.Errorf("consensus: validator key: %w", err)
	}
	return NodeKeys{NodeID: string(nk.ID()), ConsPubKey: pub.Bytes()}, nil
}

// NewGenesisDoc builds a CometBFT genesis whose validators and app_state
// both come from app.
func NewGenesisDoc(chainID string, genesisTime time.Time, app ledger.AppGenesis) (*cmttypes.GenesisDoc, error) {
	if err := app.Validate(); err != nil {
		return nil, err
	}
	state, err := json.Marshal(app)
	if err != nil {
		return nil, fmt.Errorf("consensus: encode app genesis: %w", err)
	}
	doc := &cmttypes.GenesisDoc{
		GenesisTime:     genesisTime.UTC(),
		ChainID:         chainID,
		InitialHeight:   1,
		ConsensusParams: cmttypes.DefaultConsensusParams(),
		AppState:        state,
	}
	for i, v := range app.Validators {
		pk := ed25519.PubKey(v.ConsPubKey)
		doc.Validators = append(doc.Validators, cmttypes.GenesisValidator{
			Address: pk.Address(), PubKey: pk, Power: int64(v.Stake / ledger.PowerUnit), Name: fmt.Sprintf("validator-%d", i),
		})
	}
	if err := doc.ValidateAndComplete(); err != nil {
		return nil, fmt.Errorf("consensus: genesis: %w", err)
	}
	return doc, nil
}

// WriteGenesisDoc saves doc as JSON at path.
func WriteGenesisDoc(doc *cmttypes.GenesisDoc, path string) error {
	if err := doc.SaveAs(path); err != nil {
		return fmt.Errorf("consensus: write genesis %s: %w", path, err)
	}
	return nil
}
