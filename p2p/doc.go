// Package p2p runs a node's libp2p host, the network's private Kademlia DHT,
// and the length-prefixed framing every tenzro stream protocol uses.
//
// # Host
//
// New builds a host with TCP and QUIC v1 transports; TCP connections are
// secured with Noise only and multiplexed with yamux, QUIC uses its built-in
// TLS 1.3. Identify and ping are on. The peer identity is an Ed25519 key
// persisted in Config.KeyFile (LoadOrCreateKey).
//
// Resources are bounded twice: a connection manager trims connections above
// Config.ConnHigh down to Config.ConnLow, and a resource manager applies
// libp2p's default limits scaled to the machine (rcmgr.DefaultLimits with
// libp2p's default service limits, AutoScale'd to 1/8 of RAM and half the file
// descriptors, via rcmgr.NewFixedLimiter) plus the limits of the tenzro
// stream services (AddServiceLimits: at most 64 inbound streams of one
// service per peer). The system connection limits are
// raised to at least ConnHigh so that the connection manager, not the
// resource manager, decides the steady-state peer count. Loopback is exempt
// from libp2p's per-IP connection caps, so a devnet of many nodes on
// 127.0.0.1 works.
//
// Private and loopback addresses are advertised, so devnets and LANs find
// each other. UPnP port mapping is not used.
//
// # NAT traversal
//
// Config.NAT ([p2p.nat]) uses go-libp2p's own services. AutoNAT v2 runs on
// every host (it tells which of its addresses peers can dial back; its
// server half is rate limited); NAT.AutoNATService also answers AutoNAT v1,
// from which go-libp2p 0.52 still derives the host's reachability that
// starts AutoRelay and the relay service. NAT.Reachability "public" or
// "private" skips the probing. A public node with NAT.Relay.Enabled offers
// a circuit relay v2 bounded by the [p2p.nat.relay] limits; a private node
// with NAT.RelayClient reserves slots on up to two relays (NAT.Relays, else
// the bootstrap peers, which are the validators) and announces their
// /p2p-circuit addresses in identify and its DHT provider records, and runs
// its DHT in client mode. Hole punching (DCUtR, NAT.HolePunching) then
// upgrades a relayed connection to a direct one where the NATs allow it.
// QUIC listens beside TCP (Config.Listen), which gives DCUtR its better
// odds. node.Default makes validators public relays and AutoNAT servers;
// providers and gateways find out and use relays.
//
// go-libp2p opens no stream over a relayed (limited) connection unless the
// context allows it; AllowRelayed does, and Call uses it, since a provider
// behind a hard NAT is reachable only through its relay. go-libp2p prefers a
// direct connection when one exists. Relayed, RelayedTo and PeerInfo.Relayed
// say when a connection crosses a relay; tenzro_p2p_relayed_connections,
// tenzro_p2p_relay_reservations and tenzro_p2p_hole_punches_total count it.
// A relay sees only ciphertext: Noise or TLS runs end to end over the
// circuit.
//
// AutoRelay announces a relay only at its public addresses, and DCUtR arms
// itself only once the host has a public address: on loopback a slot is
// reserved and the relayed path works (dialled at the relay's address plus
// /p2p-circuit), but no circuit address is announced and no hole is punched.
// DCUtR counts an address observed by a single peer (identify), so one
// public validator is enough for a host behind NAT to punch; the
// namespace testbed (internal/netlab, TestWANNATTraversal in cmd/tenzrod)
// shows it: through an endpoint-independent NAT the punch succeeds, through
// one that draws a port per connection it fails and the relay carries the
// calls.
//
// # DHT
//
// The DHT speaks /tenzro/<network>/kad/1.0.0, so it never mixes with the
// public IPFS DHT or another tenzro network, and it only ever bootstraps from
// Config.Bootstrap. Validators and providers run it in server mode; gateways
// on laptops in client mode. Its default filters accept private and loopback
// addresses (kad-dht only filters them when configured to, e.g. by its dual
// LAN/WAN wrapper, which is not used here). Value records are disabled; the
// network uses provider records only.
//
// Each catalog model ID (a SHA-256 Merkle root) maps to one key, ModelCID: a
// CIDv1, codec raw, whose sha2-256 multihash digest is the model ID itself.
// ProvideModel announces the host as a provider and re-announces every five
// minutes (faster, with back-off, after failures or when the host regains
// peers after being isolated); provider records expire after 30 minutes on
// the peers that hold them, so a provider that leaves drops out of lookups.
// FindModelProviders returns providers other than the caller.
//
// Start dials the bootstrap peers concurrently with a 5 s timeout each and
// does not fail when they are unreachable: nodes start in any order. While
// the host has neither a DHT peer nor a bootstrap peer it redials them every
// 3 s (clearing libp2p's dial back-off, which would otherwise hold retries
// off for 5 s to 5 min).
//
// # Stream protocols
//
// Stream protocol IDs carry no network name (DESIGN.md lists them, e.g.
// /tenzro/infer/1.0.0), so each request frame names its network and the
// server's first check is CheckNetwork, answered with CodeWrongNetwork:
// streams are scoped to the network like the topics and the DHT.
//
// Every server opens its inbound streams the same way, with Serve (or
// StreamServer.Serve, which adds its PeerLimits and a context that Stop
// cancels): a panic guard counting tenzro_p2p_stream_handler_panics_total
// by protocol, admission, the stream's service (ServiceInfer,
// ServicePayment, ServiceExpert, ServiceSessionCache), its deadlines, and
// a request frame read within its cap and a memory reservation. The
// protocol's code gets the prepared Stream; its error resets the stream,
// its success closes it. The small request/answer servers (payment,
// session-cache, expert) take their bounds as Limits, validated and
// defaulted one way, and their clients make the exchange with Call: one
// frame out on a stream attached to its service, one frame back, ctx's end
// resetting the stream. Their series come from Series, and a reason or
// message a peer is told is bounded by Clip.
//
// # Framing
//
// WriteFrame and ReadFrame carry one message per frame: an unsigned varint
// length (minimally encoded) followed by the payload. ReadFrame enforces a
// caller-chosen maximum before reading or allocating the payload. Keep one
// bufio.Reader per stream.
package p2p
