package netlab

import (
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// PublicPrefix is the internet's address range. manet.IsPublicAddr must
// call it public, or libp2p never treats an observed address as one and
// hole punching never starts: that rules out RFC 1918, CGNAT
// (100.64/10), loopback, link-local, benchmarking (198.18/15), class E and
// the documentation ranges. 100.128.0.0/24 is the first /24 past the
// CGNAT block, rarely seen in private networks. A clash with its real
// owner is harmless: the namespaces have no link to the machine's own
// namespace nor to any physical interface and no default route, so a
// packet to it cannot leave, and the machine's own routing table is never
// touched.
var PublicPrefix = netip.MustParsePrefix("100.128.0.0/24")

// NAT is how a home router maps its hosts' connections.
type NAT int

const (
	// EasyNAT keeps a connection's source port when it can (MASQUERADE
	// without --random), so one local port maps to one public port
	// whatever the destination: endpoint-independent, hole-punchable.
	EasyNAT NAT = iota
	// HardNAT draws a random public port for every new connection
	// (--random-fully): the port one peer observes is not the port another
	// must dial, so hole punching must fail and only a relay helps.
	HardNAT
)

func (n NAT) String() string {
	if n == HardNAT {
		return "hard"
	}
	return "easy"
}

// Host is one namespace a process runs in.
type Host struct {
	Name string     // the name given to Add*
	NS   string     // the network namespace
	IP   netip.Addr // its own address
	// Public is the address the internet sees it as: IP for a public
	// host, its router's for one behind NAT.
	Public netip.Addr
	NAT    *NAT // nil: on the internet itself
}

// Lab is one testbed. Its methods are safe for one goroutine at a time.
type Lab struct {
	prefix string
	hub    string // the internet namespace, holding the bridge
	mu     sync.Mutex
	nss    []string // every namespace made, the hub first
	nextIP int      // last octet of the next public address
	homes  int
}

// bridge is the internet's bridge inside the hub namespace.
const bridge = "inet0"

// New sweeps what an earlier Lab with prefix left and makes the internet:
// a namespace prefix+"-net" holding a bridge. prefix is short (≤ 8
// characters of [a-z0-9]), unique to the caller (a sweep removes every
// namespace starting with it).
func New(prefix string) (*Lab, error) {
	if prefix == "" || len(prefix) > 8 || strings.Trim(prefix, "abcdefghijklmnopqrstuvwxyz0123456789") != "" {
		return nil, fmt.Errorf("netlab: prefix %q: want 1-8 characters of [a-z0-9]", prefix)
	}
	if err := Sweep(prefix); err != nil {
		return nil, err
	}
	l := &Lab{prefix: prefix, hub: prefix + "-net", nextIP: 10}
	if err := l.addNS(l.hub); err != nil {
		return nil, err
	}
	if err := ipIn(l.hub, "link", "add", bridge, "type", "bridge"); err != nil {
		return nil, errors.Join(err, l.Close())
	}
	if err := ipIn(l.hub, "link", "set", bridge, "up"); err != nil {
		return nil, errors.Join(err, l.Close())
	}
	return l, nil
}

// Prefix is the prefix every name of l starts with.
func (l *Lab) Prefix() string { return l.prefix }

// addNS makes namespace ns with its loopback up, and records it for Close.
func (l *Lab) addNS(ns string) error {
	if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
		return fmt.Errorf("netlab: ip netns add %s: %w: %s (netlab needs root: CAP_NET_ADMIN and CAP_SYS_ADMIN)", ns, err, bytes.TrimSpace(out))
	}
	l.mu.Lock()
	l.nss = append(l.nss, ns)
	l.mu.Unlock()
	return ipIn(ns, "link", "set", "lo", "up")
}

// Close deletes every namespace of l, last made first; their veths,
// bridge and iptables rules go with them. Processes still running inside
// keep a namespace alive without its name, so stop them first.
func (l *Lab) Close() error {
	l.mu.Lock()
	nss := l.nss
	l.nss = nil
	l.mu.Unlock()
	var errs []error
	for i := len(nss) - 1; i >= 0; i-- {
		errs = append(errs, deleteNS(nss[i]))
	}
	return errors.Join(errs...)
}

// deleteNS deletes namespace ns. A process still inside would keep the
// namespace, its veths and rules alive without a name, so each is killed
// first (by its PID, as `ip netns pids` lists them) and named in the
// error: its owner should have stopped it.
func deleteNS(ns string) error {
	var errs []error
	out, err := exec.Command("ip", "netns", "pids", ns).CombinedOutput()
	if err != nil {
		errs = append(errs, fmt.Errorf("netlab: ip netns pids %s: %w: %s", ns, err, bytes.TrimSpace(out)))
	}
	for _, f := range strings.Fields(string(out)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			continue
		}
		errs = append(errs, fmt.Errorf("netlab: process %d still running in %s; killed", pid, ns))
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	if out, err := exec.Command("ip", "netns", "delete", ns).CombinedOutput(); err != nil {
		errs = append(errs, fmt.Errorf("netlab: ip netns delete %s: %w: %s", ns, err, bytes.TrimSpace(out)))
	}
	return errors.Join(errs...)
}

// Sweep deletes every namespace whose name starts with prefix+"-": what a
// run killed before its Close left behind.
func Sweep(prefix string) error {
	left, err := Leftovers(prefix)
	if err != nil {
		return err
	}
	for _, ns := range left {
		// What a crashed run left is swept, processes included; only a
		// namespace that cannot be deleted is an error.
		if err := deleteNS(ns); err != nil {
			if all, lerr := listNS(); lerr != nil || slices.Contains(all, ns) {
				return fmt.Errorf("netlab: sweep: %w", errors.Join(err, lerr))
			}
		}
	}
	return nil
}

// Leftovers are the namespaces named with prefix+"-" that exist now.
// Every interface and rule of a Lab lives inside one of them, so none
// left means nothing left.
func Leftovers(prefix string) ([]string, error) {
	all, err := listNS()
	if err != nil {
		return nil, err
	}
	var left []string
	for _, ns := range all {
		if strings.HasPrefix(ns, prefix+"-") {
			left = append(left, ns)
		}
	}
	return left, nil
}

// listNS is every named network namespace.
func listNS() ([]string, error) {
	out, err := exec.Command("ip", "netns", "list").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("netlab: ip netns list: %w: %s", err, bytes.TrimSpace(out))
	}
	var all []string
	for _, line := range strings.Split(string(out), "\n") {
		// A line is "name" or "name (id: N)".
		if f := strings.Fields(line); len(f) > 0 {
			all = append(all, f[0])
		}
	}
	return all, nil
}

// ipIn runs `ip -n ns args…`.
func ipIn(ns string, args ...string) error {
	return runIn(ns, append([]string{"ip"}, args...)...)
}

// runIn runs argv inside namespace ns.
func runIn(ns string, argv ...string) error {
	out, err := exec.Command("ip", append([]string{"netns", "exec", ns}, argv...)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("netlab: in %s: %s: %w: %s", ns, strings.Join(argv, " "), err, bytes.TrimSpace(out))
	}
	return nil
}
