package scale

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Config is the shape and timing of one simulated market.
type Config struct {
	Providers  int // simulated providers
	Gateways   int // gateways validating everything
	Validators int // validators: validate everything, publish price observations
	// Links is how many gateways and validators each provider connects to.
	Links int
	// Models is how many catalog models exist besides the popular one every
	// provider serves; each provider serves one of them as well.
	Models int
	// AnnounceInterval is the providers' re-announcement period (node's
	// default: 10 s); heartbeats follow the protocol's 2 s.
	AnnounceInterval time.Duration
	// ProbeInterval is how often each validator probes each provider (the
	// router's default: 20 s): one price observation per probe.
	ProbeInterval time.Duration
	// Measure is the window the steady-state rates are taken over.
	Measure time.Duration
	// Converge bounds the wait for every node to see every provider up.
	Converge time.Duration
	// DHTPeers caps how many providers also run a DHT server (the DHT is
	// the costliest part of a mocknet host); 0 skips the DHT lookup.
	DHTPeers int
	// Publishers caps the provider hosts: with more providers than
	// Publishers, providers share hosts round-robin (0: a host each). The
	// harness's cost is mostly these hosts' routers, and no validator
	// looks at which peer relayed a message.
	Publishers int
	// QuoteRounds is how many requests are quoted and ranked at a gateway.
	QuoteRounds int
	// LibraryQueues runs the gateways and validators with
	// go-libp2p-pubsub's default queue sizes instead of the gossip
	// service's (the before half of the fix's comparison).
	LibraryQueues bool
}

// Defaults returns the configuration of one size with n providers.
func Defaults(n int) Config {
	return Config{
		Providers: n, Gateways: 2, Validators: 2, Links: 2, Models: 9,
		AnnounceInterval: 10 * time.Second, ProbeInterval: 20 * time.Second,
		Measure: 20 * time.Second, Converge: 3 * time.Minute,
		DHTPeers: 64, QuoteRounds: 200, Publishers: 100,
	}
}

// Validate checks the configuration.
func (c Config) Validate() error {
	var errs []error
	if c.Providers < 1 || c.Providers > 20000 {
		errs = append(errs, fmt.Errorf("scale: providers %d outside 1..20000", c.Providers))
	}
	if c.Gateways < 1 || c.Validators < 0 || c.Gateways+c.Validators > 64 {
		errs = append(errs, fmt.Errorf("scale: %d gateways and %d validators (want >= 1 gateway, <= 64 in all)", c.Gateways, c.Validators))
	}
	if c.Links < 1 || c.Links > c.Gateways+c.Validators {
		errs = append(errs, fmt.Errorf("scale: links %d outside 1..%d (gateways + validators)", c.Links, c.Gateways+c.Validators))
	}
	if c.Models < 0 || c.Models > 1000 {
		errs = append(errs, fmt.Errorf("scale: models %d outside 0..1000", c.Models))
	}
	if c.AnnounceInterval < time.Second || c.ProbeInterval < time.Second {
		errs = append(errs, errors.New("scale: announce and probe intervals must be >= 1s"))
	}
	if c.Measure < time.Second || c.Converge < time.Second {
		errs = append(errs, errors.New("scale: measure and converge must be >= 1s"))
	}
	if c.DHTPeers < 0 || c.QuoteRounds < 1 || c.Publishers < 0 {
		errs = append(errs, errors.New("scale: dht peers and publishers must be >= 0 and quote rounds >= 1"))
	}
	return errors.Join(errs...)
}

// ParseSizes reads a comma list of provider counts ("10,100,1000").
func ParseSizes(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("scale: size %q: not a number", f)
		}
		if n < 1 || n > 20000 {
			return nil, fmt.Errorf("scale: size %d outside 1..20000", n)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, errors.New("scale: no sizes")
	}
	return out, nil
}
