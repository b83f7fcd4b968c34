package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/tenzrod/tenzrod/cmd/internal/wan"
	"github.com/tenzrod/tenzrod/internal/netlab"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "wanlab:", err)
		os.Exit(1)
	}
}

func run() error {
	bin := flag.String("bin", "bin/tenzrod", "the tenzrod binary the nodes run")
	dir := flag.String("dir", ".wan", "directory for the nodes' homes")
	prefix := flag.String("prefix", "tzlab", "prefix of every namespace (swept at start)")
	spec := wan.Spec{NAT: map[string]netlab.NAT{}}
	flag.IntVar(&spec.Validators, "validators", 1, "validators (public, relays)")
	flag.IntVar(&spec.Providers, "providers", 3, "providers")
	flag.IntVar(&spec.Gateways, "gateways", 1, "gateways")
	easy := flag.String("easy", "provider-0,gateway-0", "nodes behind an easy (hole-punchable) NAT, comma-separated")
	hard := flag.String("hard", "provider-1", "nodes behind a hard (symmetric) NAT, comma-separated")
	flag.Parse()
	for list, nat := range map[string]netlab.NAT{*easy: netlab.EasyNAT, *hard: netlab.HardNAT} {
		for _, n := range strings.Split(list, ",") {
			if n = strings.TrimSpace(n); n != "" {
				spec.NAT[n] = nat
			}
		}
	}
	absBin, err := filepath.Abs(*bin)
	if err != nil {
		return fmt.Errorf("wanlab: %w", err)
	}
	absDir, err := filepath.Abs(*dir)
	if err != nil {
		return fmt.Errorf("wanlab: %w", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	upCtx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	w, err := wan.Up(upCtx, absBin, absDir, *prefix, spec)
	if err != nil {
		return err
	}
	printNet(w, absBin)
	<-ctx.Done()
	fmt.Println("\nstopping every node and deleting the namespaces…")
	if err := w.Close(); err != nil {
		return errors.Join(err, errors.New("wanlab: see `ip netns list`"))
	}
	fmt.Println("done: nothing left")
	return nil
}

func printNet(w *wan.Net, bin string) {
	fmt.Printf("\nWAN testbed %s is up (public range %s, no route out of it):\n", w.Lab.Prefix(), netlab.PublicPrefix)
	var gw *wan.Node
	for _, n := range w.Nodes {
		where := "public"
		if n.Host.NAT != nil {
			where = fmt.Sprintf("behind %s NAT, seen as %s", n.Host.NAT, n.Host.Public)
		}
		fmt.Printf("  %-12s %-9s ns %-22s %-15s %s\n", n.Name, n.Role, n.Host.NS, n.Host.IP, where)
		if n.Role == "gateway" && gw == nil {
			gw = n
		}
	}
	if gw == nil {
		return
	}
	fmt.Printf("\nThe gateway's API is reachable inside its namespace only. Try:\n")
	fmt.Printf("  ip netns exec %s %s shell --api %s -c peers\n", gw.Host.NS, bin, gw.API)
	fmt.Printf("  ip netns exec %s %s shell --api %s -c providers\n", gw.Host.NS, bin, gw.API)
	fmt.Printf("  ip netns exec %s curl -s %s/v1/chat/completions -H 'Authorization: Bearer %s' \\\n", gw.Host.NS, gw.API, w.M.BuyerToken)
	fmt.Printf("    -d '{\"model\":\"%s\",\"messages\":[{\"role\":\"user\",\"content\":\"Hello\"}],\"max_tokens\":16}'\n", w.M.Model)
	fmt.Printf("  ip netns exec %s curl -s %s/metrics | grep -E 'tenzro_p2p_(relayed|relay_res|hole)'\n", gw.Host.NS, gw.API)
	fmt.Printf("\nLogs: <dir>/<node>/node.log. Ctrl-C stops every node and deletes every namespace.\n")
}
