package node

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/tenzrod/tenzrod/receipts/terms"
)

// configTemplate renders a Config as commented TOML. Every key Load accepts
// appears here, so an operator reads the whole surface in one file.
var configTemplate = template.Must(template.New("config").Funcs(template.FuncMap{
	"q":      strconv.Quote,
	"list":   quoteList,
	"levels": quoteLevels,
	"dur":    func(d time.Duration) string { return strconv.Quote(d.String()) },
	"float":  tomlFloat,
	"uints":  uintList,
}).Parse(`# tenzrod node configuration. Flags given on the command line override it.
# Relative paths are relative to this file's directory (the node's --home).

# validator | provider | gateway
role = {{q (print .Role)}}
# Network name. Nodes of different networks share no DHT and no topics.
network = {{q .Network}}

[log]
# debug | info | warn | error
level = {{q .Log.Level}}
# text | json
format = {{q .Log.Format}}

[api]
# HTTP API: /healthz, /metrics, /rpc (JSON-RPC 2.0). Keep it on loopback
# unless a reverse proxy with authentication stands in front of it.
listen = {{q .API.Listen}}
# Request bodies read at once: the OpenAI routes' pool (the token is
# checked before the body) and JSON-RPC's own, so clients without a token
# cannot take the slots buyers need; one client address holds at most
# body_slots_per_client of a pool.
body_slots = {{.API.BodySlots}}
rpc_body_slots = {{.API.RPCBodySlots}}
body_slots_per_client = {{.API.BodySlotsPerClient}}
# A body must arrive at body_min_rate bytes a second on average after
# body_grace (0 turns the rate off), and whole within body_timeout.
body_min_rate = {{.API.BodyMinRate}}
body_grace = {{dur .API.BodyGrace}}
body_timeout = {{dur .API.BodyTimeout}}
# SHA-256 (hex) of the operator's bearer token, which may read any buyer's
# session (tenzro_getSession); each buyer reads its own with its token.
# printf %s "$TOKEN" | sha256sum
{{if .API.AdminTokenSHA256}}admin_token_sha256 = {{q .API.AdminTokenSHA256}}{{else}}# admin_token_sha256 = "<64 hex digits>"{{end}}

[p2p]
# libp2p listen addresses (TCP and QUIC v1).
listen = {{list .P2P.Listen}}
# Peers dialled at start: multiaddrs ending in /p2p/<peer id>. Public IPFS
# bootstrap nodes are never used.
bootstrap = {{list .P2P.Bootstrap}}
# Persisted libp2p peer key (Ed25519), created on first start.
key_file = {{q .P2P.KeyFile}}
# Answer DHT queries (validators and providers); laptops only ask.
dht_server = {{.P2P.DHTServer}}
# Connection manager watermarks.
conn_low = {{.P2P.ConnLow}}
conn_high = {{.P2P.ConnHigh}}

[identity]
# Hardware identity key: tpm (/dev/tpmrm0) | tpm-sim (TPM simulator, state
# under identity/) | software (a key file; shown as "software" everywhere).
backend = {{q .Identity.Backend}}
device = {{q .Identity.Device}}
# Lifetime of each session certificate; renewed when a quarter remains.
session_ttl = {{dur .Identity.SessionTTL}}

[gossip]
# Messages stamped further than this from local time are ignored.
window = {{dur .Gossip.Window}}

[router]
# Whole-request deadline (failovers and continuation included), and the
# stream limits that trigger failover instead of waiting.
deadline = {{dur .Router.Deadline}}
first_token_timeout = {{dur .Router.FirstTokenTimeout}}
stall_timeout = {{dur .Router.StallTimeout}}
# A provider that has shown its pace gets 16 x its p95 gap between tokens
# instead, no shorter than this.
stall_min = {{dur .Router.StallMin}}
# Failover rounds after the first (both primary and hedge failed), 0..10.
max_retries = {{.Router.MaxRetries}}
# Output bound of a request that sets no max_tokens: every request needs a
# price ceiling to hold funds against.
default_max_tokens = {{.Router.DefaultMaxTokens}}
# Validator nodes probe each registered, live provider this often for the
# price feed (one tiny call per provider per interval); 0s disables.
probe_interval = {{dur .Router.ProbeInterval}}
# Receipts, payments and balances: "group" = a paid request does not wait
# for the disk, a background fsync follows within about a millisecond (a
# power cut can lose that window: unbilled, never billed twice); "each" =
# every write waits for its own fsync. Credits always wait.
durability = "{{.Router.Durability}}"

# Surcharge per call of each verification level, in micro-units: a FALLBACK
# without a chain (with one, the chain's surcharge_* params are used).
[router.surcharges]
none = {{.Router.Surcharges.None}}
receipt = {{.Router.Surcharges.Receipt}}
optimistic = {{.Router.Surcharges.Optimistic}}
tee = {{.Router.Surcharges.TEE}}

# Weights of the weighted strategy (the default): each signal is scored
# 0..1 across the candidates (price and latency lower is better, standing
# higher, load lower) and the weighted sum ranks them.
[router.weights]
price = {{float .Router.Weights.Price}}
latency = {{float .Router.Weights.Latency}}
standing = {{float .Router.Weights.Standing}}
load = {{float .Router.Weights.Load}}

# Every buyer's fair share unless its [[router.buyers]] entry sets its own:
# requests in flight at once, and new requests per minute (bursts of up to
# 10 s of the rate). Beyond either the buyer gets 429 with Retry-After.
[router.buyer_defaults]
max_concurrent = {{.Router.BuyerDefaults.MaxConcurrent}}
rate_per_minute = {{.Router.BuyerDefaults.RatePerMinute}}

# Sessions (tenzro.session): at most max_sessions held at once (more are
# refused with 503 until idle ones end) and max_per_buyer of one buyer
# (429); a session no turn used for idle_timeout ends and its standby
# stream is stopped; a successor's standby stream is funded for
# standby_horizon at its announced fee.
[router.sessions]
max_sessions = {{.Router.Sessions.MaxSessions}}
max_per_buyer = {{.Router.Sessions.MaxPerBuyer}}
idle_timeout = {{dur .Router.Sessions.IdleTimeout}}
standby_horizon = {{dur .Router.Sessions.StandbyHorizon}}

[chain]
# The ledger: a CometBFT node running the consensus application in-process.
# false runs without it (a laptop gateway); the chain's API methods then
# answer "unavailable".
enabled = {{.Chain.Enabled}}
# validator (votes; its consensus key must be in the genesis) | follower
# (providers, gateways: a full node that syncs and executes every block,
# answers queries with proofs and relays transactions to the validators)
role = {{q .Chain.Role}}
# CometBFT home: config/ (node and consensus keys, genesis, config.toml)
# and data/ (blocks, application state).
home = {{q .Chain.Home}}
# CometBFT peer-to-peer listen address.
p2p_listen = {{q .Chain.P2PListen}}
# CometBFT's own RPC server: loopback only, "" runs none (the chain
# methods of this node's /rpc work either way).
rpc_listen = {{q .Chain.RPCListen}}
# Peers dialled at start and kept: "<node id>@host:port".
persistent_peers = {{list .Chain.PersistentPeers}}
# The chain's genesis file; "" = <home>/config/genesis.json.
genesis_file = {{q .Chain.GenesisFile}}
# Pause after each block (timeout_commit); "0s" keeps the chain home's
# config.toml value (1s without one).
block_time = {{dur .Chain.BlockTime}}
# Heights of application state kept for queries (older ones are pruned);
# 0 keeps every version.
state_versions = {{.Chain.StateVersions}}

[settle]
# Payment records on a chain. A gateway signs one per paid call as its
# buyers' settler, valid for this many blocks (below the chain's escrow
# withdrawal delay, 600 blocks by default)...
validity = {{.Settle.Validity}}
# ...and submits those the serving provider has not settled after this long.
grace = {{dur .Settle.Grace}}
# A provider submits the records it is paid with at least this often, and
# at once when this many wait.
collect_interval = {{dur .Settle.CollectInterval}}
collect_batch = {{.Settle.CollectBatch}}

[telemetry]
# OpenTelemetry traces of the requests this node routes (a gateway's or a
# validator's, not a provider's): one trace each, with a span for intake,
# quote and rank, every attempt, a continuation, the receipt, billing and
# the payment record, exported over OTLP. "" = off. A URL: http:// plain or
# https:// TLS, e.g. "http://127.0.0.1:4317" (grpc) or
# "http://127.0.0.1:4318" (http; the path defaults to /v1/traces).
otlp_endpoint = {{q .Telemetry.OTLPEndpoint}}
# grpc | http
protocol = {{q .Telemetry.Protocol}}
service_name = {{q .Telemetry.ServiceName}}
# Fraction of requests traced, 0..1 (a request with a sampled parent span
# follows its parent).
sample_ratio = {{float .Telemetry.SampleRatio}}

[attest]
# What announced TEE attestations (the evidence behind the tee level) are
# verified against. Certificates are never fetched: providers carry their
# chain, and the roots are AMD's embedded in go-sev-guest unless
# [[attest.roots]] below replace them. CRL files (PEM "X509 CRL" blocks or
# DER, e.g. https://kdsintf.amd.com/vcek/v1/Milan/crl) must be signed by a
# trusted ARK; they are read at start.
crls = {{list .Attest.CRLs}}
# Intel SGX root certificates (PEM files) for TDX quotes; [] = go-tdx-guest's.
tdx_roots = {{list .Attest.TDXRoots}}
# Verified attestations remembered per (attestation, session key), so a
# re-announcement skips the chain check; 0 = verify every announcement.
cache_size = {{.Attest.CacheSize}}
# Minimum reported SEV-SNP TCB, per component (bootloader, TEE, SNP firmware
# 0..127, microcode 0..255). A report below it, or revoked, is set aside:
# the provider is still quoted at other levels, never at tee. This is this
# node's policy, not a chain parameter.
min_tcb = { bl_spl = {{.Attest.MinTCB.BlSpl}}, tee_spl = {{.Attest.MinTCB.TeeSpl}}, snp_spl = {{.Attest.MinTCB.SnpSpl}}, ucode_spl = {{.Attest.MinTCB.UcodeSpl}} }
# TEST-ONLY (devnets): a test root file; set, only test attestations (proving
# nothing) are accepted. Empty on real nodes: they refuse every test one.
test_root = {{q .Attest.TestRoot}}
{{range .Attest.Roots}}
# A trusted AMD product line (replaces the embedded roots): its KDS
# cert_chain (PEM, ASK then ARK) and optionally its VLEK chain.
[[attest.roots]]
product_line = {{q .ProductLine}}
cert_chain = {{q .CertChain}}
vlek_cert_chain = {{q .VLEKCertChain}}
{{end}}{{if not .Router.Tokenizers}}
# A model whose tokenizer this node holds: prompt and output tokens of
# requests for it are counted here and billed by that count (capped by the
# wire), not by the provider's claim. Only the GGUF's tokenizer is loaded;
# the directory is checked against the catalog ID. For example:
# [[router.tokenizers]]
# dir = "models/tiny"
# id = "<64 hex digits: tenzrod model manifest models/tiny>"
{{end}}{{range .Router.Tokenizers}}
# A model whose tokenizer this node holds: prompt and output tokens of
# requests for it are counted here and billed by that count (capped by the
# wire), not by the provider's claim. Only the GGUF's tokenizer is loaded;
# the directory is checked against the catalog ID.
[[router.tokenizers]]
dir = {{q .Dir}}
id = {{q .ID}}
{{end}}{{range .Validator.Models}}
# Weights this validator holds: it declares them on chain at start, sits on
# dispute committees for the model and re-executes disputed answers with
# them (the directory is checked against the catalog ID, if set).
[[validator.models]]
name = {{q .Name}}
dir = {{q .Dir}}
id = {{q .ID}}
{{end}}{{if and (not .Router.Buyers) (ne (print .Role) "provider")}}
# A buyer paying on chain: a bearer token you hand out, whose SHA-256 is
# kept here (never the token), and the payer account whose escrow with this
# node's account (its settler) pays for every call the token makes:
#   TOKEN=sk-tenzro-$(openssl rand -hex 20)      # give it to the buyer
#   printf %s "$TOKEN" | sha256sum               # token_sha256 below
#   tenzrod keys account show account.key        # this node's account (made by init --genesis or the first start): the settler
#   tenzrod tx escrow fund --key buyer.key --amount 50_000_000 --settler <that account>
# The buyer funds the escrow from its own key (tenzrod tx transfer gets it
# funded first); each paid call then draws on it through a payment record
# this node signs. For example:
# [[router.buyers]]
# payer = "<the buyer's account ID: 64 hex digits>"
# token_sha256 = "<64 hex digits: the SHA-256 of the token>"
{{end}}{{range .Router.Buyers}}
# A buyer: requests carrying the token whose SHA-256 this is are paid by
# the payer's on-chain escrow with this node's account as settler (this
# node signs a payment record per call). Off chain (a test mode) account
# and initial_credit (micro-units, credited once) take payer's place.
# max_concurrent and rate_per_minute: its fair share (0 = the defaults).
[[router.buyers]]
{{if .Payer}}payer = {{q .Payer}}
{{else}}account = {{q .Account}}
initial_credit = {{.InitialCredit}}
{{end}}token_sha256 = {{q .TokenSHA256}}
max_concurrent = {{.MaxConcurrent}}
rate_per_minute = {{.RatePerMinute}}
{{end}}{{if eq (print .Role) "provider"}}
[provider]
# Coarse region only: an ISO 3166-1 country code ("DE") or a continent
# ("Europe"). Anything finer is rejected by every peer.
region = {{q .Provider.Region}}
# Your hardware class; buyers see it labelled as your claim.
hardware_class = {{q .Provider.HardwareClass}}
# Requests served concurrently.
capacity = {{.Provider.Capacity}}
# How often the announcement is repeated for nodes that join later.
announce_interval = {{dur .Provider.AnnounceInterval}}
# On a chain every call is paid: it carries its settler's authorization,
# and the payer's escrow must cover it. trusted_callers are peer IDs served
# unpaid (your own tools); without a chain they are the callers served in
# full, and every other caller shares one small budget.
trusted_callers = {{list .Provider.TrustedCallers}}
unknown_concurrency = {{.Provider.UnknownConcurrency}}
unknown_rate_per_minute = {{.Provider.UnknownRatePerMinute}}
# One caller's streams served or waiting at once; 0 = no cap of its own.
max_per_peer = {{.Provider.MaxPerPeer}}
# How long a call from a settler that owes a payment record for an earlier
# call waits for it before it is refused (402 unpaid).
record_wait = {{dur .Provider.RecordWait}}

[provider.standby]
# Stand by warm as the successor of other operators' sessions: the
# primary seals each turn's state to this node's X-Wing key (key_file,
# made on first start), which the announcement carries with the fee. On a
# chain a session is held only against a funded standby stream paying at
# least fee_per_hour (micro-units), claimed every claim_interval.
enabled = {{.Provider.Standby.Enabled}}
fee_per_hour = {{.Provider.Standby.FeePerHour}}
key_file = {{q .Provider.Standby.KeyFile}}
max_sessions = {{.Provider.Standby.MaxSessions}}
claim_interval = {{dur .Provider.Standby.ClaimInterval}}

[provider.remote_experts]
# Served embedded MoE models whose experts run at the holders other
# providers announce ([[provider.experts]]): each layer's batches go to
# each holder at once, every receipt is verified before its rows are used,
# a holder silent past timeout is retired for the batch, and on a chain
# each holder is paid from this operator's escrow with itself.
models = {{list .Provider.RemoteExperts.Models}}
timeout = {{dur .Provider.RemoteExperts.Timeout}}
holder_ttl = {{dur .Provider.RemoteExperts.HolderTTL}}
# A sampled batch whose re-execution differs from what its holder signed
# is evidence; with dispute on, it is disputed on chain once the record
# paying the holder for the call settled, bonding dispute_bond micro-units
# (0 = the chain's dispute_min_bond) from this operator's account. A
# committee convicting pays the bond back with a reward; an acquittal
# gives it to the holder.
dispute = {{.Provider.RemoteExperts.Dispute}}
dispute_bond = {{.Provider.RemoteExperts.DisputeBond}}
dispute_interval = {{dur .Provider.RemoteExperts.DisputeInterval}}

[provider.attestation]
# The TEE attestation announced for the tee level; its REPORT_DATA binds
# the session key (SHA-512("tenzro/attest/session-key/1" || 0 || key DER)),
# so a new one is obtained whenever the key rotates. "" = none (a model may
# then not offer tee) | "sev-snp" (ask this guest's firmware) | "file" |
# "test" (TEST-ONLY devnet device file, accepted only under its test_root).
source = {{q .Provider.Attestation.Source}}
# sev-snp: auto (configfs-tsm, else /dev/sev-guest) | configfs-tsm | a device path
device = {{q .Provider.Attestation.Device}}
# file: an attestation your own tool fetches (CBOR, or an SEV-SNP report
# with its certificate table), re-read at each announcement; the
# REPORT_DATA it must carry is written to FILE.report_data (hex).
file = {{q .Provider.Attestation.File}}
# Optional DER of this chip's VCEK, if the host supplies no certificate table.
ek_cert = {{q .Provider.Attestation.EKCert}}
{{range .Provider.Experts}}
# Experts of a MoE model held for other providers, computed from the
# model directory (verified against model, the catalog ID).
[[provider.experts]]
model = {{q .Model}}
dir = {{q .Dir}}
layers = {{uints .Layers}}
experts = {{uints .Experts}}
# Micro-units per expert-token (one row computed by one expert).
price_per_token = {{.PricePerToken}}
{{end}}
{{- range .Provider.Models}}
[[provider.models]]
name = {{q .Name}}
# Model directory served by the embedded engine (its catalog root is the
# model ID; the files are verified against it before loading).
dir = {{q .Dir}}
# Catalog model ID (Merkle root of the model files) and the hash of the
# weights actually served. With dir set, id may be empty (taken from the
# directory) or must match it.
id = {{q .ID}}
weights_hash = {{q .WeightsHash}}
# embedded (dir) | upstream (an OpenAI-compatible engine at upstream_url;
# its API key, if any, comes from $TENZRO_UPSTREAM_API_KEY)
engine = {{q .Engine}}
upstream_url = {{q .UpstreamURL}}
upstream_model = {{q .UpstreamModel}}
{{- if .UpstreamURL}}
# How the engine continues another provider's broken answer:
# assistant_prefix (a final assistant message to continue) | raw_prompt
# (text completions only) | none; probed at start, never raised beyond this
continuation = {{q .Continuation}}
{{- end}}
# Verification levels offered: none | receipt | optimistic | tee
verification = {{levels .Verification}}
# Prices per unit in integer micro-units, and the per-call minimum.
[provider.models.rate_card]
input_tokens = {{.RateCard.InputTokens}}
output_tokens = {{.RateCard.OutputTokens}}
cached_tokens = {{.RateCard.CachedTokens}}
pixel_steps = {{.RateCard.PixelSteps}}
audio_ms = {{.RateCard.AudioMs}}
minimum = {{.RateCard.Minimum}}
{{- if .RateCard.ExpertTokens}}
# Per expert-token computed at holders (models in provider.remote_experts)
expert_tokens = {{.RateCard.ExpertTokens}}
{{- end}}
{{end}}
# A model an OpenAI-compatible engine you run serves (llama.cpp server,
# vLLM, Ollama); its API key, if any, in $TENZRO_UPSTREAM_API_KEY:
# [[provider.models]]
# name = "llama-3.2-1b"                        # what buyers ask for
# engine = "upstream"
# upstream_url = "http://127.0.0.1:8080/v1"    # the engine's OpenAI base URL
# upstream_model = "llama-3.2-1b-instruct"     # the engine's own name for it
# id = "<64 hex digits: tenzrod model manifest DIR>"
# continuation = "assistant_prefix"            # or raw_prompt | none
# verification = ["none", "receipt"]
# [provider.models.rate_card]
# input_tokens = 1
# output_tokens = 2
# minimum = 10
# The id rule: id is the catalog ID (the Merkle root of the model files,
# which tenzrod model manifest prints for the directory of the exact files
# the engine loaded), never the engine's name for them. A request's model
# resolves to one ID: offers of the same name under another ID are another
# model and are never merged with it, and on a chain the first registered
# provider serving a name binds it to its ID. An upstream model has no dir,
# so its id is required.
{{end}}`))

// tomlFloat writes v as a TOML float (always with a point or exponent).
func tomlFloat(v float64) string {
	s := strconv.FormatFloat(v, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eEn") {
		s += ".0"
	}
	return s
}

func quoteList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = strconv.Quote(x)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

func quoteLevels(vs []terms.Verification) string {
	xs := make([]string, len(vs))
	for i, v := range vs {
		xs[i] = string(v)
	}
	return quoteList(xs)
}

// RenderConfig returns cfg as commented TOML.
func RenderConfig(cfg Config) ([]byte, error) {
	var buf bytes.Buffer
	if err := configTemplate.Execute(&buf, cfg); err != nil {
		return nil, fmt.Errorf("config: render: %w", err)
	}
	return buf.Bytes(), nil
}

// WriteConfig writes cfg to HOME/config.toml (cfg.Home), refusing to
// overwrite an existing file unless force is set.
func WriteConfig(cfg Config, force bool) error {
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	b, err := RenderConfig(cfg)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(cfg.Home, 0o700); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	path := filepath.Join(cfg.Home, ConfigFile)
	flag := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if !force {
		flag |= os.O_EXCL
	}
	f, err := os.OpenFile(path, flag, 0o600)
	if err != nil {
		if os.IsExist(err) {
			return fmt.Errorf("config: %s exists (use --force to overwrite)", path)
		}
		return fmt.Errorf("config: %w", err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("config: %w", err)
	}
	return f.Close()
}

// uintList renders indices as a TOML array.
func uintList(v []uint32) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = strconv.FormatUint(uint64(x), 10)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
