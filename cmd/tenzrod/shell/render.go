package shell

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

func newTable(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0) }

func indentJSON(w io.Writer, raw []byte) error {
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return err
	}
	_, err := buf.WriteTo(w)
	return err
}

func compactJSON(w io.Writer, raw []byte) error {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return err
	}
	_, err := buf.WriteTo(w)
	return err
}

func decodeResult(raw json.RawMessage, v any) error {
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("unexpected result shape: %w", err)
	}
	return nil
}

// decoded makes a command's render of a renderer of one result type: the
// raw result is decoded into T first, and a result of another shape is
// an error.
func decoded[T any](render func(w io.Writer, v T, inv *invocation) error) func(io.Writer, json.RawMessage, *invocation) error {
	return func(w io.Writer, raw json.RawMessage, inv *invocation) error {
		var v T
		if err := decodeResult(raw, &v); err != nil {
			return err
		}
		return render(w, v, inv)
	}
}

// backendLabel says how much a machine ID is worth, by its key backend.
func backendLabel(backend string) string {
	switch backend {
	case "software":
		return "software key — not hardware"
	case "tpm-sim":
		return "TPM simulator"
	case "tpm":
		return "TPM"
	case "":
		return "key backend not reported"
	}
	return "unknown key backend " + strconv.Quote(backend)
}

// shortID abbreviates a peer ID as head…tail.
func shortID(id string) string {
	if len(id) <= 16 {
		return id
	}
	return id[:6] + "…" + id[len(id)-6:]
}

// shortHex abbreviates a hex digest (machine ID, model ID) to its prefix.
func shortHex(h string) string {
	if len(h) <= 12 {
		return h
	}
	return h[:8] + "…"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func formatMillis(ms float64) string {
	d := time.Duration(ms * float64(time.Millisecond))
	switch {
	case d < time.Second:
		return strconv.FormatFloat(ms, 'f', -1, 64) + "ms"
	case d < time.Minute:
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s"
	}
	return d.Round(time.Second).String()
}

// writeRows writes one table row of cols whose last column is list[0], then
// one continuation row per further element of list.
func writeRows(tw io.Writer, list []string, cols ...string) {
	if len(list) == 0 {
		list = []string{"-"}
	}
	blank := strings.Repeat("\t", len(cols))
	for i, v := range list {
		if i == 0 {
			fmt.Fprintf(tw, "%s\t%s\n", strings.Join(cols, "\t"), v)
		} else {
			fmt.Fprintf(tw, "%s%s\n", blank, v)
		}
	}
}

type nodeInfo struct {
	PeerID      string   `json:"peer_id"`
	ListenAddrs []string `json:"listen_addrs"`
	Role        string   `json:"role"`
	Network     string   `json:"network"`
	MachineID   string   `json:"machine_id"`
	KeyBackend  string   `json:"key_backend"`
	Version     string   `json:"version"`
	Height      int64    `json:"height"`
	ChainID     string   `json:"chain_id"`
	Chain       *struct {
		Stalled     bool   `json:"stalled"`
		LastAdvance string `json:"last_advance"`
		Peers       int    `json:"peers"`
		Missing     int    `json:"missing_peers"`
		Redials     uint64 `json:"redials"`
	} `json:"chain"`
}

func renderInfo(w io.Writer, n nodeInfo, _ *invocation) error {
	tw := newTable(w)
	fmt.Fprintf(tw, "peer_id\t%s\n", orDash(n.PeerID))
	fmt.Fprintf(tw, "role\t%s\n", orDash(n.Role))
	fmt.Fprintf(tw, "network\t%s\n", orDash(n.Network))
	fmt.Fprintf(tw, "machine_id\t%s  (%s)\n", orDash(n.MachineID), backendLabel(n.KeyBackend))
	fmt.Fprintf(tw, "key_backend\t%s\n", orDash(n.KeyBackend))
	fmt.Fprintf(tw, "version\t%s\n", orDash(n.Version))
	if n.ChainID != "" {
		fmt.Fprintf(tw, "chain\t%s at height %d\n", n.ChainID, n.Height)
	}
	if c := n.Chain; c != nil {
		state := "advancing"
		if c.Stalled {
			state = "STALLED since " + c.LastAdvance
		}
		fmt.Fprintf(tw, "chain_health\t%s; %d peers, %d persistent peers missing, %d redials\n", state, c.Peers, c.Missing, c.Redials)
	}
	writeRows(tw, n.ListenAddrs, "listen_addrs")
	return tw.Flush()
}

type peerInfo struct {
	PeerID    string   `json:"peer_id"`
	Addrs     []string `json:"addrs"`
	Direction string   `json:"direction"`
	LatencyMS *float64 `json:"latency_ms"`
}

func renderPeers(w io.Writer, peers []peerInfo, _ *invocation) error {
	if len(peers) == 0 {
		_, err := fmt.Fprintln(w, "(no peers connected)")
		return err
	}
	sort.SliceStable(peers, func(i, j int) bool { return peers[i].PeerID < peers[j].PeerID })
	tw := newTable(w)
	fmt.Fprintln(tw, "PEER\tDIRECTION\tLATENCY\tADDRS")
	for _, p := range peers {
		lat := "-"
		if p.LatencyMS != nil && *p.LatencyMS > 0 {
			lat = formatMillis(*p.LatencyMS)
		}
		writeRows(tw, p.Addrs, p.PeerID, orDash(p.Direction), lat)
	}
	fmt.Fprintf(tw, "%d peers\n", len(peers))
	return tw.Flush()
}

type topicInfo struct {
	Topic    string          `json:"topic"`
	Peers    json.RawMessage `json:"peers"` // a count, or the list of peer IDs
	Accepted uint64          `json:"accepted"`
	Ignored  uint64          `json:"ignored"`
	Rejected uint64          `json:"rejected"`
}

func (t topicInfo) peerCount() string {
	var list []json.RawMessage
	if json.Unmarshal(t.Peers, &list) == nil {
		return strconv.Itoa(len(list))
	}
	var n json.Number
	if json.Unmarshal(t.Peers, &n) == nil {
		return n.String()
	}
	return "-"
}

func renderTopics(w io.Writer, topics []topicInfo, _ *invocation) error {
	if len(topics) == 0 {
		_, err := fmt.Fprintln(w, "(no topics joined)")
		return err
	}
	sort.SliceStable(topics, func(i, j int) bool { return topics[i].Topic < topics[j].Topic })
	tw := newTable(w)
	fmt.Fprintln(tw, "TOPIC\tPEERS\tACCEPTED\tIGNORED\tREJECTED")
	for _, t := range topics {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\n", t.Topic, t.peerCount(), t.Accepted, t.Ignored, t.Rejected)
	}
	return tw.Flush()
}

type dhtProvider struct {
	PeerID string   `json:"peer_id"`
	Addrs  []string `json:"addrs"`
}

func renderDHTProviders(w io.Writer, provs []dhtProvider, inv *invocation) error {
	if len(provs) == 0 {
		_, err := fmt.Fprintf(w, "(no providers of %s found in the DHT)\n", inv.arg(0))
		return err
	}
	tw := newTable(w)
	fmt.Fprintln(tw, "PEER\tADDRS")
	for _, p := range provs {
		writeRows(tw, p.Addrs, p.PeerID)
	}
	return tw.Flush()
}
