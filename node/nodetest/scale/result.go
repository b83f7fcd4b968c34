package scale

import (
	"time"
)

// Rate is what one node receives of one topic, per second.
type Rate struct {
	Msgs       float64 `json:"msgs_per_s"`       // published messages, duplicates included
	Bytes      float64 `json:"bytes_per_s"`      // their protobuf bytes
	Duplicates float64 `json:"duplicates_per_s"` // of Msgs, copies already seen
	// Validated is the messages the topic validator ran on per second,
	// and ValidationCPU the share of one core those validations took.
	Validated     float64 `json:"validated_per_s"`
	ValidationCPU float64 `json:"validation_cpu"`
}

// Result is every figure of one size.
type Result struct {
	Providers  int `json:"providers"`
	Gateways   int `json:"gateways"`
	Validators int `json:"validators"`
	Publishers int `json:"publisher_hosts"`

	Setup    time.Duration `json:"setup_ns"`    // hosts, routers, connections
	Converge time.Duration `json:"converge_ns"` // first publish → every node sees every provider up
	// NotConverged says why the size did not converge within the bound
	// (empty when it did); its window figures still stand.
	NotConverged string `json:"not_converged,omitempty"`
	// LibraryQueues is set when the nodes ran with go-libp2p-pubsub's
	// default queue sizes (the comparison run of the fix).
	LibraryQueues bool          `json:"library_queues,omitempty"`
	Window        time.Duration `json:"window_ns"` // the steady-state window the rates cover

	// Per node, averaged over gateways and validators, by topic short
	// name; "control" is the GossipSub control traffic (bytes only).
	PerNode map[string]Rate `json:"per_node"`
	// Drops are messages the routers dropped (validation queue full,
	// throttled, undeliverable), summed over nodes in the window.
	Drops map[string]uint64 `json:"drops"`
	// DropsBefore are the same drops from the start to the window
	// (convergence included).
	DropsBefore map[string]uint64 `json:"drops_before"`
	// ProcessCPU is the cores the whole simulation used in the window
	// (providers' signing and routers included), from getrusage.
	ProcessCPU float64 `json:"process_cpu"`
	// Down is how many (node, provider) pairs were not up at the end of
	// the window: a node falling behind shows here first.
	Down int `json:"down_at_end"`

	TableBytes          int64         `json:"table_bytes"`           // provider table with every provider
	ValidatorStateBytes int64         `json:"validator_state_bytes"` // the validators' caches with every provider
	Admit               time.Duration `json:"admit_ns"`              // first announcement + heartbeat of a provider (cold certificate)
	Heartbeat           time.Duration `json:"heartbeat_ns"`          // one steady-state heartbeat, validated on one core
	HeartbeatAllocs     float64       `json:"heartbeat_allocs"`

	Newcomer           time.Duration `json:"newcomer_ns"`            // a new gateway until it sees every provider up
	NewcomerValidation time.Duration `json:"newcomer_validation_ns"` // its validators' time meanwhile
	NewcomerErr        string        `json:"newcomer_error,omitempty"`

	Candidates int           `json:"candidates"` // offers of the popular model
	QuoteMean  time.Duration `json:"quote_mean_ns"`
	QuoteP99   time.Duration `json:"quote_p99_ns"`
	RankMean   time.Duration `json:"rank_mean_ns"`

	DHTPeers int           `json:"dht_peers"`
	DHTFirst time.Duration `json:"dht_first_ns"` // newcomer's lookup of a model gossip never showed, to the first provider
	DHTErr   string        `json:"dht_error,omitempty"`

	// Price feed: observations published per second network-wide, and what
	// adding one to a node's feed costs.
	ObsPublished float64       `json:"obs_published_per_s"`
	FeedAdd      time.Duration `json:"feed_add_ns"`
	FeedBuckets  int           `json:"feed_entries"`
}
