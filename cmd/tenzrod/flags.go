package main

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/tenzrod/tenzrod/node"
)

// nodeFlags are the config keys that can be overridden on the command line.
// Only flags the user actually set override the config file.
type nodeFlags struct {
	network    string
	apiListen  string
	p2pListen  []string
	bootstrap  []string
	keyBackend string
	tpmDevice  string
	logLevel   string
	logFormat  string
	region     string
}

// register adds the flags for a command running role ("" when the role
// is itself a flag, as in init); --region is described for that role.
func (f *nodeFlags) register(fs *pflag.FlagSet, role node.Role) {
	fs.StringVar(&f.network, "network", "", "network name (config: network)")
	fs.StringVar(&f.apiListen, "api-listen", "", "HTTP API listen address, e.g. 127.0.0.1:8545 (config: api.listen)")
	fs.StringSliceVar(&f.p2pListen, "p2p-listen", nil, "libp2p listen multiaddrs (config: p2p.listen)")
	fs.StringSliceVar(&f.bootstrap, "bootstrap", nil, "bootstrap peer multiaddrs ending in /p2p/<id> (config: p2p.bootstrap)")
	fs.StringVar(&f.keyBackend, "key-backend", "", "hardware identity backend: tpm | tpm-sim | software (config: identity.backend)")
	fs.StringVar(&f.tpmDevice, "tpm-device", "", "the TPM device the tpm backend opens, e.g. /dev/tpm0 where there is no resource manager (config: identity.device; default /dev/tpmrm0)")
	fs.StringVar(&f.logLevel, "log-level", "", "debug | info | warn | error (config: log.level)")
	fs.StringVar(&f.logFormat, "log-format", "", "text | json (config: log.format)")
	fs.StringVar(&f.region, "region", "", regionUsage(role))
}

// apply sets in cfg the keys whose flags were given in fs.
func (f *nodeFlags) apply(cfg *node.Config, fs *pflag.FlagSet) {
	for _, o := range []struct {
		flag string
		set  func()
	}{
		{"network", func() { cfg.Network = f.network }},
		{"api-listen", func() { cfg.API.Listen = f.apiListen }},
		{"p2p-listen", func() { cfg.P2P.Listen = f.p2pListen }},
		{"bootstrap", func() { cfg.P2P.Bootstrap = f.bootstrap }},
		{"key-backend", func() { cfg.Identity.Backend = f.keyBackend }},
		{"tpm-device", func() { cfg.Identity.Device = f.tpmDevice }},
		{"log-level", func() { cfg.Log.Level = f.logLevel }},
		{"log-format", func() { cfg.Log.Format = f.logFormat }},
		{"region", func() { cfg.Provider.Region = f.region }},
	} {
		if fs.Changed(o.flag) {
			o.set()
		}
	}
}

// regionUsage says what --region means for role: only a provider announces
// a region, so to a validator or a gateway the flag is a setting kept in
// the home's config that this role never reads.
func regionUsage(role node.Role) string {
	switch role {
	case node.RoleProvider:
		return "the region this provider announces: an ISO 3166-1 country code or a continent, never finer (config: provider.region)"
	case "":
		return "with --role provider, the region it announces: an ISO 3166-1 country code or a continent (config: provider.region); other roles announce none"
	}
	return fmt.Sprintf("not used by a %s: only a provider announces a region (it sets provider.region, which a %s never reads; buyers pick a region per request with X-Tenzro-Region)", role, role)
}
