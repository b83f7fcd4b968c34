package consensus

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"
	cmtcfg "github.com/cometbft/cometbft/config"
	cmttypes "github.com/cometbft/cometbft/types"
	"github.com/go-viper/mapstructure/v2"
)

// ConfigFile is where a node home keeps its CometBFT configuration.
func ConfigFile(home string) string { return filepath.Join(home, "config", "config.toml") }

// WriteConfig creates cfg.Home (keys included, as InitHome) and writes the
// node's CometBFT configuration to ConfigFile(cfg.Home) in CometBFT's own
// format, so an operator can read and edit it; LoadConfig reads it back.
func WriteConfig(cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if _, err := InitHome(cfg.Home); err != nil {
		return err
	}
	ccfg, err := cfg.cometConfig()
	if err != nil {
		return err
	}
	// CometBFT's writer exits the process on an I/O error; let it write
	// into a fresh private directory, then copy with error handling.
	dir := filepath.Join(cfg.Home, "config")
	tmp, err := os.MkdirTemp(dir, ".config-")
	if err != nil {
		return fmt.Errorf("consensus: write config: %w", err)
	}
	defer os.RemoveAll(tmp) //nolint:errcheck // a scratch directory: a leftover is harmless
	cmtcfg.WriteConfigFile(filepath.Join(tmp, "config.toml"), ccfg)
	b, err := os.ReadFile(filepath.Join(tmp, "config.toml"))
	if err == nil {
		err = os.WriteFile(ConfigFile(cfg.Home), b, 0o600)
	}
	if err != nil {
		return fmt.Errorf("consensus: write config: %w", err)
	}
	return nil
}

// LoadConfig reads the configuration WriteConfig (or an operator) left in
// home. Config's fields come from the file (block time = timeout_commit);
// every other CometBFT setting in it is honored as written. Logger and
// Follower are the caller's to set.
func LoadConfig(home string) (Config, error) {
	b, err := os.ReadFile(ConfigFile(home))
	if err != nil {
		return Config{}, fmt.Errorf("consensus: load config: %w", err)
	}
	ccfg, err := parseCometConfig(b, home)
	if err != nil {
		return Config{}, err
	}
	cfg := Config{
		Home: home, Moniker: ccfg.Moniker, P2PListen: ccfg.P2P.ListenAddress, RPCListen: ccfg.RPC.ListenAddress,
		GenesisFile: ccfg.GenesisFile(), BlockTime: ccfg.Consensus.TimeoutCommit,
		EmptyBlocksInterval: ccfg.Consensus.CreateEmptyBlocksInterval, base: b,
	}
	for _, p := range strings.Split(ccfg.P2P.PersistentPeers, ",") {
		if p = strings.TrimSpace(p); p != "" {
			cfg.Peers = append(cfg.Peers, p)
		}
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, fmt.Errorf("consensus: %s: %w", ConfigFile(home), err)
	}
	return cfg, nil
}

// parseCometConfig decodes a config.toml over CometBFT's defaults the way
// CometBFT's own command does (TOML, then mapstructure with durations as
// strings), roots it at home and validates it.
func parseCometConfig(b []byte, home string) (*cmtcfg.Config, error) {
	var raw map[string]any
	if _, err := toml.NewDecoder(bytes.NewReader(b)).Decode(&raw); err != nil {
		return nil, fmt.Errorf("consensus: parse config.toml: %w", err)
	}
	cfg := cmtcfg.DefaultConfig()
	dec, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{
		Result: cfg, WeaklyTypedInput: true,
		DecodeHook: mapstructure.ComposeDecodeHookFunc(
			mapstructure.StringToTimeDurationHookFunc(), mapstructure.StringToSliceHookFunc(",")),
	})
	if err != nil {
		return nil, fmt.Errorf("consensus: config decoder: %w", err)
	}
	if err := dec.Decode(raw); err != nil {
		return nil, fmt.Errorf("consensus: decode config.toml: %w", err)
	}
	cfg.SetRoot(home)
	if err := cfg.ValidateBasic(); err != nil {
		return nil, fmt.Errorf("consensus: config.toml: %w", err)
	}
	return cfg, nil
}

// ErrValidatorHome is returned by New for a follower whose consensus key
// is a genesis validator's: running it would sign, or double-sign.
var ErrValidatorHome = errors.New("consensus: follower home holds a genesis validator key")

// checkFollower refuses a follower whose consensus key is in the genesis.
func checkFollower(genesisFile string, consPub []byte) error {
	doc, err := cmttypes.GenesisDocFromFile(genesisFile)
	if err != nil {
		return fmt.Errorf("consensus: read genesis: %w", err)
	}
	for _, v := range doc.Validators {
		if bytes.Equal(v.PubKey.Bytes(), consPub) {
			return fmt.Errorf("%w (%s)", ErrValidatorHome, v.Name)
		}
	}
	return nil
}
