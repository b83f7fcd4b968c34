package netlab

import (
	"fmt"
	"net/netip"
)

// publicAddr hands out the next address of PublicPrefix.
func (l *Lab) publicAddr() (netip.Addr, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	a := PublicPrefix.Addr().As4()
	if l.nextIP > 250 {
		return netip.Addr{}, fmt.Errorf("netlab: %s is full", PublicPrefix)
	}
	a[3] = byte(l.nextIP)
	l.nextIP++
	return netip.AddrFrom4(a), nil
}

// plug links namespace ns to the internet bridge with a veth named dev
// inside ns, addressed ip, and returns nothing else: the internet is one
// flat subnet, so no route is needed and none leads anywhere else.
func (l *Lab) plug(ns, dev string, ip netip.Addr) error {
	l.mu.Lock()
	port := fmt.Sprintf("p%d", len(l.nss)) // unique inside the hub
	l.mu.Unlock()
	steps := [][]string{
		{"link", "add", port, "type", "veth", "peer", "name", dev, "netns", ns},
		{"link", "set", port, "master", bridge, "up"},
	}
	for _, s := range steps {
		if err := ipIn(l.hub, s...); err != nil {
			return err
		}
	}
	if err := ipIn(ns, "addr", "add", fmt.Sprintf("%s/%d", ip, PublicPrefix.Bits()), "dev", dev); err != nil {
		return err
	}
	return ipIn(ns, "link", "set", dev, "up")
}

// AddPublic makes a host on the internet itself, like a server with a
// public address (a validator, a relay).
func (l *Lab) AddPublic(name string) (Host, error) {
	ns := l.prefix + "-" + name
	ip, err := l.publicAddr()
	if err != nil {
		return Host{}, err
	}
	if err := l.addNS(ns); err != nil {
		return Host{}, err
	}
	if err := l.plug(ns, "eth0", ip); err != nil {
		return Host{}, err
	}
	return Host{Name: name, NS: ns, IP: ip, Public: ip}, nil
}

// AddBehindNAT makes a home: a router namespace (name+"-gw") on the
// internet that NATs, as nat says, a host namespace behind it on a
// private subnet of its own (10.0.K.0/24, K counting homes).
//
// The router drops every new connection that arrives on its internet side
// instead of answering it (a closed TCP port would otherwise send a RST,
// a UDP one an ICMP error), as home routers do: a hole punch's first
// packet that arrives before the router has mapped the outgoing one is
// then lost and retried rather than killing the attempt.
func (l *Lab) AddBehindNAT(name string, nat NAT) (Host, error) {
	l.mu.Lock()
	l.homes++
	k := l.homes
	l.mu.Unlock()
	if k > 250 {
		return Host{}, fmt.Errorf("netlab: too many homes")
	}
	router, ns := l.prefix+"-"+name+"-gw", l.prefix+"-"+name
	pub, err := l.publicAddr()
	if err != nil {
		return Host{}, err
	}
	for _, n := range []string{router, ns} {
		if err := l.addNS(n); err != nil {
			return Host{}, err
		}
	}
	if err := l.plug(router, "wan", pub); err != nil {
		return Host{}, err
	}
	gw, ip := fmt.Sprintf("10.0.%d.1", k), fmt.Sprintf("10.0.%d.2", k)
	masq := []string{"iptables", "-t", "nat", "-A", "POSTROUTING", "-o", "wan", "-j", "MASQUERADE"}
	if nat == HardNAT {
		masq = append(masq, "--random-fully")
	}
	steps := [][]string{
		{"ip", "link", "add", "lan", "type", "veth", "peer", "name", "eth0", "netns", ns},
		{"ip", "addr", "add", gw + "/24", "dev", "lan"},
		{"ip", "link", "set", "lan", "up"},
		{"sysctl", "-qw", "net.ipv4.ip_forward=1"},
		masq,
		{"iptables", "-A", "INPUT", "-i", "wan", "-m", "conntrack", "--ctstate", "NEW", "-j", "DROP"},
	}
	for _, s := range steps {
		if err := runIn(router, s...); err != nil {
			return Host{}, err
		}
	}
	for _, s := range [][]string{
		{"addr", "add", ip + "/24", "dev", "eth0"},
		{"link", "set", "eth0", "up"},
		{"route", "add", "default", "via", gw},
	} {
		if err := ipIn(ns, s...); err != nil {
			return Host{}, err
		}
	}
	n := nat
	return Host{Name: name, NS: ns, IP: netip.MustParseAddr(ip), Public: pub, NAT: &n}, nil
}
