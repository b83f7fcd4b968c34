package main

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/internal/freeport"
	"github.com/tenzrod/tenzrod/node/openai"
	"github.com/tenzrod/tenzrod/receipts/terms"

	"github.com/spf13/cobra"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/node"
)

// newJoinHome writes a first-run join home: a gateway config and keys and,
// with --genesis, the chain's genesis, the user's account key as this
// gateway's settler key, and a bearer token paid from the user's escrow.
func newJoinHome(cmd *cobra.Command, home string, nf nodeFlags, jf joinFlags) (node.Config, error) {
	fs := cmd.Flags()
	switch {
	case !fs.Changed("bootstrap"):
		return node.Config{}, fmt.Errorf("--bootstrap is required the first time (no config at %s)", filepath.Join(home, node.ConfigFile))
	case jf.genesis == "" && (jf.accountKey != "" || len(jf.chainPeers) > 0 || len(jf.sync.rpc) > 0):
		return node.Config{}, errors.New("--account-key, --chain-peer and --chain-rpc need --genesis (the chain they pay on)")
	case jf.genesis == "" && fs.Changed("deposit"):
		return node.Config{}, fmt.Errorf("--deposit needs --genesis: a gateway that follows no chain cannot pay providers and has no bearer token, so every call to its OpenAI API would be refused (401); nothing was written in %s;\n%s", home, howToPay)
	case jf.genesis != "" && jf.accountKey == "":
		return node.Config{}, errors.New("--genesis needs --account-key: the account that pays for your calls")
	case jf.genesis != "" && len(jf.chainPeers) == 0:
		return node.Config{}, errors.New("--genesis needs at least one --chain-peer ID@HOST:PORT (a validator's CometBFT address; a devnet lists them in devnet.json as chain_peers)")
	}
	cfg := node.Default(node.RoleGateway)
	cfg.Home = home
	cfg.P2P.Listen = []string{"/ip4/0.0.0.0/tcp/0", "/ip4/0.0.0.0/udp/0/quic-v1"}
	nf.apply(&cfg, fs)
	// Checked before joinChain copies the genesis and the key in, so a
	// refused flag leaves no half-made home.
	if err := cfg.Validate(); err != nil {
		return node.Config{}, fmt.Errorf("config: %w", err)
	}
	var token string
	if jf.genesis != "" {
		var err error
		if token, err = joinChain(cmd.OutOrStdout(), &cfg, jf, !fs.Changed("network")); err != nil {
			return node.Config{}, err
		}
	}
	if err := cfg.Validate(); err != nil {
		return node.Config{}, fmt.Errorf("config: %w", err)
	}
	if err := node.WriteConfig(cfg, false); err != nil {
		return node.Config{}, err
	}
	out := cmd.OutOrStdout()
	if err := initKeys(out, cfg); err != nil {
		return node.Config{}, err
	}
	if token != "" {
		fmt.Fprintf(out, "payer        %s\n", cfg.Router.Buyers[0].Payer)
		fmt.Fprintf(out, "\nyour bearer token (shown once; only its SHA-256 is kept in the config):\n  %s\n\n", token)
	}
	return cfg, nil
}

// joinChain sets cfg up to follow the chain of jf.genesis and pay from the
// account of jf.accountKey; it returns the new bearer token.
func joinChain(out io.Writer, cfg *node.Config, jf joinFlags, networkFromChain bool) (string, error) {
	key, err := consensus.ReadAccountKey(jf.accountKey)
	if err != nil {
		return "", fmt.Errorf("--account-key: %w", err)
	}
	if _, err := followChain(cfg, followSpec{genesis: jf.genesis, peers: jf.chainPeers, peersFlag: "--chain-peer", p2pListen: jf.chainP2P,
		networkFromChain: networkFromChain, sync: jf.sync, out: out}); err != nil {
		return "", err
	}
	keyPEM, err := os.ReadFile(jf.accountKey)
	if err != nil {
		return "", fmt.Errorf("--account-key: %w", err)
	}
	if err := writePrivate(cfg.Path(node.AccountKeyFile), keyPEM, 0o600); err != nil {
		return "", err
	}
	var b [20]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("token: %w", err)
	}
	token := "sk-tenzro-" + hex.EncodeToString(b[:])
	payer := terms.AccountOf(key.Public().(ed25519.PublicKey))
	cfg.Router.Buyers = []node.BuyerConfig{{Payer: payer.String(), TokenSHA256: openai.TokenHash(token)}}
	return token, nil
}

// writePrivate writes b to path (its directory 0700), refusing to
// overwrite a file.
func writePrivate(path string, b []byte, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("join: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return fmt.Errorf("join: %w", err)
	}
	if _, err := f.Write(b); err != nil {
		_ = f.Close()
		return fmt.Errorf("join: write %s: %w", path, err)
	}
	return f.Close()
}

// freeLoopbackTCP picks a free loopback port for CometBFT, as tcp://addr.
func freeLoopbackTCP() (string, error) {
	addr, err := freeport.Addr()
	if err != nil {
		return "", err
	}
	return "tcp://" + addr, nil
}

// runJoined runs the joined node; with a deposit it first moves that
// much from the user's account into its escrow with this gateway, once
// the chain has caught up.
func runJoined(ctx context.Context, out io.Writer, cfg node.Config, deposit uint64) error {
	if !cfg.Chain.Enabled {
		return runNode(ctx, cfg)
	}
	return runNodeThen(ctx, cfg, func(n *node.Node, log *slog.Logger) error {
		key, err := consensus.ReadAccountKey(cfg.Path(node.AccountKeyFile))
		if err != nil {
			return err
		}
		me := terms.AccountOf(key.Public().(ed25519.PublicKey))
		ready := func(ctx context.Context) bool { return consensus.Ready(ctx, n.Chain()) }
		if err := waitSynced(ctx, out, n.Chain(), ready); err != nil {
			return err
		}
		wait, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		if deposit > 0 {
			sub, err := consensus.NewSubmitter(n.Chain(), key, log)
			if err != nil {
				return err
			}
			// Calls the escrow cannot cover until the deposit's block are
			// told to wait for it (503 warming_up), not refused (402).
			done := n.ExpectDeposit(me, deposit)
			res, err := sub.Submit(wait, &ledger.EscrowFund{Amount: deposit, Settler: me})
			done()
			if err != nil {
				return fmt.Errorf("join: deposit %d into the escrow: %w", deposit, err)
			}
			fmt.Fprintf(out, "deposited %d micro-units into your escrow with this gateway (block %d)\n", deposit, res.Height)
		}
		pays := false
		for _, b := range cfg.Router.Buyers {
			pays = pays || strings.EqualFold(b.Payer, me.String())
		}
		if !pays {
			// A gateway whose buyers are others (a devnet's gateway runs
			// with join too): their escrows are theirs to fund.
			fmt.Fprintf(out, "OpenAI API   %s/v1\n", n.Info().API)
			return nil
		}
		e, ok, err := n.Chain().Escrow(wait, me, me)
		switch {
		case err != nil:
			return err
		case !ok:
			fmt.Fprintf(out, "no escrow yet: calls are refused (402) until you run join with --deposit AMOUNT\n")
		default:
			fmt.Fprintf(out, "escrow       %d micro-units available to pay for calls\n", e.Available())
		}
		fmt.Fprintf(out, "OpenAI API   %s/v1 (Authorization: Bearer <your token>)\n", n.Info().API)
		return nil
	})
}
