package main

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/tenzrod/tenzrod/cmd/tenzrod/devnet"
	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/node/attacktest"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "attack:", err)
		os.Exit(1)
	}
}

func run(args []string, out, errOut io.Writer) error {
	fs := flag.NewFlagSet("attack", flag.ContinueOnError)
	fs.SetOutput(errOut)
	dir := fs.String("dir", ".devnet", "devnet directory whose devnet.json gives the defaults below")
	api := fs.String("api", "", "gateway URL (default: the devnet's gateway)")
	token := fs.String("token", "", "an honest buyer's bearer token (default: the devnet buyer's)")
	buyerKey := fs.String("buyer-key", "", "that buyer's chain account key file (default: the devnet's buyer key)")
	settlerKey := fs.String("settler-key", "", "the gateway's account key file, for the gateway-side attacks (default: HOME/account.key of the devnet node serving --api; none: n/a)")
	model := fs.String("model", "", "model name of honest calls (default: the devnet's)")
	provider := fs.String("provider-addr", "", "a provider's p2p multiaddr with /p2p/ID, for the unregistered peer's attack (default: the devnet's first provider)")
	network := fs.String("network", "", "the network name the provider serves (default: the devnet's)")
	only := fs.String("only", "", "run only scenarios whose name matches this regular expression")
	slow := fs.Int("slow-senders", 40, "slow unauthenticated body senders (half /rpc, half /v1)")
	slowFor := fs.Duration("slow-for", 6*time.Second, "how long the slow senders send")
	spam := fs.Int("spam-txs", 3, "failing settlements the fee-spam scenario sends (200 records each)")
	wait := fs.Duration("settle-wait", 60*time.Second, "bound on every wait for the chain")
	verbose := fs.Bool("v", false, "log each scenario as it runs")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	var m devnet.Manifest
	if raw, err := os.ReadFile(filepath.Join(*dir, devnet.ManifestFile)); err == nil {
		if err := json.Unmarshal(raw, &m); err != nil {
			return fmt.Errorf("%s/devnet.json: %w", *dir, err)
		}
	} else if *api == "" {
		return fmt.Errorf("no --api given and no devnet at %s: %w", *dir, err)
	}
	t := attacktest.Target{API: or(*api, m.Gateway), Token: or(*token, m.BuyerToken), Model: or(*model, m.Model),
		SlowSenders: *slow, SlowFor: *slowFor, SpamTxs: *spam, Settle: *wait}
	t.Network = or(*network, m.Network)
	if *provider != "" {
		t.ProviderAddrs = []string{*provider}
	} else {
		for _, n := range m.Nodes {
			if n.Role == "provider" && len(n.P2P) > 0 && t.ProviderAddrs == nil {
				t.ProviderAddrs = n.P2P
			}
		}
	}
	var err error
	if t.BuyerKey, err = readKey("--buyer-key", or(*buyerKey, m.BuyerKey)); err != nil {
		return err
	}
	sk := *settlerKey
	if sk == "" {
		for _, n := range m.Nodes {
			if strings.TrimRight(n.API, "/") == strings.TrimRight(t.API, "/") && n.Home != "" {
				sk = filepath.Join(n.Home, "account.key")
			}
		}
	}
	if sk != "" && sk != "none" {
		if t.SettlerKey, err = readKey("--settler-key", sk); err != nil {
			return err
		}
	}
	var re *regexp.Regexp
	if *only != "" {
		if re, err = regexp.Compile(*only); err != nil {
			return fmt.Errorf("--only: %w", err)
		}
	}
	// The libp2p host of the unregistered-peer attack logs through the
	// default logger: quiet unless -v, so the table stays readable.
	log := slog.New(slog.DiscardHandler)
	if *verbose {
		log = slog.New(slog.NewTextHandler(errOut, nil))
	}
	slog.SetDefault(log)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	fmt.Fprintf(out, "attacking %s (model %s)\n\n", t.API, t.Model)
	rs, err := attacktest.Run(ctx, t, re, log)
	attacktest.Table(out, rs)
	if err != nil {
		return err
	}
	if n := attacktest.Broken(rs); n > 0 {
		return fmt.Errorf("%d of %d scenarios broke or could not run", n, len(rs))
	}
	return nil
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func readKey(name, path string) (ed25519.PrivateKey, error) {
	if path == "" {
		return nil, errors.New(name + " is required (no devnet.json names one)")
	}
	k, err := consensus.ReadAccountKey(path)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", name, path, err)
	}
	return k, nil
}
