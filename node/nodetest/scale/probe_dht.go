package scale

import (
	"context"
	"errors"
	"fmt"
	"time"

	dht "github.com/libp2p/go-libp2p-kad-dht"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"

	"github.com/tenzrod/tenzrod/p2p"
)

// dhtProviders is how many providers of the dark model the DHT holds.
const dhtProviders = 3

// measureDHT runs the private DHT (the node's prefix and options) on the
// cores and up to cfg.DHTPeers provider hosts, has dhtProviders of them provide
// a model no announcement carries, and times a newcomer's lookup of it to
// the first provider. A failure is reported in the result, not as an
// error: the gossip figures stand without it.
func measureDHT(ctx context.Context, mk *market, res *Result) {
	if err := runDHT(ctx, mk, res); err != nil {
		res.DHTErr = err.Error()
	}
}

// startDHT links h on the mock network to each of hosts it is not yet
// linked to and starts its DHT in mode.
func (mk *market) startDHT(h host.Host, hosts []host.Host, mode dht.ModeOpt, boot []peer.AddrInfo) (*dht.IpfsDHT, error) {
	for _, o := range hosts {
		if o.ID() != h.ID() && len(mk.mn.LinksBetweenPeers(h.ID(), o.ID())) == 0 {
			if _, err := mk.mn.LinkPeers(h.ID(), o.ID()); err != nil {
				return nil, fmt.Errorf("scale: dht link: %w", err)
			}
		}
	}
	d, err := dht.New(h,
		dht.ProtocolPrefix(protocol.ID("/tenzro/"+network)),
		dht.Mode(mode),
		dht.DisableValues(),
		dht.BootstrapPeers(boot...),
	)
	if err != nil {
		return nil, fmt.Errorf("scale: dht on %s: %w", h.ID(), err)
	}
	return d, nil
}

func runDHT(ctx context.Context, mk *market, res *Result) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var hosts []host.Host
	for _, c := range mk.cores {
		hosts = append(hosts, c.h)
	}
	for _, p := range mk.pubs[:min(len(mk.pubs), mk.cfg.DHTPeers)] {
		hosts = append(hosts, p.h)
	}
	res.DHTPeers = len(hosts)
	boot := []peer.AddrInfo{{ID: mk.cores[0].h.ID(), Addrs: mk.cores[0].h.Addrs()}}
	var dhts []*dht.IpfsDHT
	defer func() {
		for _, d := range dhts {
			_ = d.Close()
		}
	}()
	for _, h := range hosts {
		d, err := mk.startDHT(h, hosts, dht.ModeServer, boot)
		if err != nil {
			return err
		}
		dhts = append(dhts, d)
	}
	for _, d := range dhts {
		if err := waitTable(ctx, d); err != nil {
			return err
		}
	}
	cid := p2p.ModelCID(modelID(darkModel))
	for _, d := range dhts[len(mk.cores):min(len(dhts), len(mk.cores)+dhtProviders)] {
		if err := d.Provide(ctx, cid, true); err != nil {
			return fmt.Errorf("scale: dht provide: %w", err)
		}
	}
	m, err := mk.pool.get("core", mk.cfg.Gateways+mk.cfg.Validators+1)
	if err != nil {
		return err
	}
	h, err := mk.addHost(m)
	if err != nil {
		return err
	}
	client, err := mk.startDHT(h, hosts, dht.ModeClient, boot)
	if err != nil {
		return err
	}
	dhts = append(dhts, client)
	if _, err := mk.mn.ConnectPeers(h.ID(), mk.cores[0].h.ID()); err != nil {
		return fmt.Errorf("scale: dht connect: %w", err)
	}
	if err := waitTable(ctx, client); err != nil {
		return err
	}
	start := time.Now()
	for ai := range client.FindProvidersAsync(ctx, cid, 1) {
		if ai.ID != "" {
			res.DHTFirst = time.Since(start)
			return nil
		}
	}
	return errors.New("scale: dht lookup found no provider")
}

// waitTable waits until d's routing table holds a peer, refreshing it.
func waitTable(ctx context.Context, d *dht.IpfsDHT) error {
	for d.RoutingTable().Size() == 0 {
		d.RefreshRoutingTable()
		select {
		case <-ctx.Done():
			return fmt.Errorf("scale: dht routing table stayed empty: %w", ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}
