package wan

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tenzrod/tenzrod/cmd/internal/devproc"
	"github.com/tenzrod/tenzrod/cmd/tenzrod/devnet"
	"github.com/tenzrod/tenzrod/internal/netlab"
)

// Spec is the network to build: node counts as `tenzrod devnet` takes
// them, and which nodes sit behind which NAT (the rest are public).
type Spec struct {
	Validators, Providers, Gateways int
	NAT                             map[string]netlab.NAT // node name → its home router's NAT
}

// Net is a devnet running in a testbed.
type Net struct {
	Lab   *netlab.Lab
	M     devnet.Manifest
	Nodes []*Node
}

// Node returns the node named name, nil if none.
func (w *Net) Node(name string) *Node {
	for _, n := range w.Nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// stopGrace is how long a node has to stop after SIGTERM.
const stopGrace = 15 * time.Second

// Up writes a devnet of spec into dir with bin (`tenzrod devnet`, run on
// loopback until its manifest is written, then stopped), builds a testbed
// named with prefix, and starts every node in its namespace. On error
// what was built is torn down again; otherwise the caller calls Close.
func Up(ctx context.Context, bin, dir, prefix string, spec Spec) (*Net, error) {
	dn, err := devproc.StartDevnet(ctx, devproc.Command(bin, dir, spec.Validators, spec.Providers, spec.Gateways), dir)
	if dn == nil {
		return nil, err
	}
	left := dn.Stop()
	if err != nil || len(left) > 0 {
		return nil, fmt.Errorf("wan: writing the devnet: %w (left: %s)", err, strings.Join(left, "; "))
	}
	lab, err := netlab.New(prefix)
	if err != nil {
		return nil, err
	}
	w := &Net{Lab: lab, M: dn.M}
	if err := w.place(spec, bin); err != nil {
		return nil, errors.Join(err, w.Close())
	}
	return w, nil
}

// place makes each node's host, moves its config there and starts it.
func (w *Net) place(spec Spec, bin string) error {
	hosts := map[string]netlab.Host{}
	for _, e := range w.M.Nodes {
		name := strings.ReplaceAll(e.Name, "-", "")
		var h netlab.Host
		var err error
		if nat, ok := spec.NAT[e.Name]; ok {
			h, err = w.Lab.AddBehindNAT(name, nat)
		} else {
			h, err = w.Lab.AddPublic(name)
		}
		if err != nil {
			return err
		}
		hosts[e.Name] = h
	}
	apis, err := Relocate(w.M, hosts)
	if err != nil {
		return err
	}
	for _, e := range w.M.Nodes {
		n := &Node{NodeEntry: e, Host: hosts[e.Name], API: apis[e.Name]}
		n.NodeEntry.API = n.API
		if err := n.Start(bin); err != nil {
			return err
		}
		w.Nodes = append(w.Nodes, n)
	}
	return nil
}

// Close stops every node, then deletes the testbed; it fails if a node
// had to be killed or a namespace is left.
func (w *Net) Close() error {
	errs := []error{StopAll(w.Nodes, stopGrace), w.Lab.Close()}
	if left, err := netlab.Leftovers(w.Lab.Prefix()); err != nil || len(left) > 0 {
		errs = append(errs, err, fmt.Errorf("wan: namespaces left: %v", left))
	}
	return errors.Join(errs...)
}
