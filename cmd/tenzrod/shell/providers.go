package shell

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

type rateCard struct {
	InputTokens  uint64 `json:"input_tokens"`
	OutputTokens uint64 `json:"output_tokens"`
	CachedTokens uint64 `json:"cached_tokens"`
	PixelSteps   uint64 `json:"pixel_steps"`
	AudioMS      uint64 `json:"audio_ms"`
	Minimum      uint64 `json:"minimum"`
}

type providerModel struct {
	ModelID      string   `json:"model_id"`
	Name         string   `json:"name"`
	Engine       string   `json:"engine"`
	WeightsHash  string   `json:"weights_hash"`
	RateCard     rateCard `json:"rate_card"`
	Verification []string `json:"verification"`
	State        string   `json:"state"`
}

func (m providerModel) label() string {
	if m.Name != "" {
		return m.Name
	}
	return shortHex(m.ModelID)
}

type providerInfo struct {
	PeerID        string `json:"peer_id"`
	MachineID     string `json:"machine_id"`
	KeyBackend    string `json:"key_backend"`
	Region        string `json:"region"`
	HardwareClass struct {
		Value   string `json:"value"`
		Claimed bool   `json:"claimed"`
	} `json:"hardware_class"`
	Models          []providerModel `json:"models"`
	Status          string          `json:"status"`
	LastHeartbeatMS int64           `json:"last_heartbeat_ms"`
	HeartbeatAgeMS  *float64        `json:"heartbeat_age_ms"`
	InFlight        int64           `json:"in_flight"`
	Capacity        int64           `json:"capacity"`
	QueueDepth      int64           `json:"queue_depth"`
	Breaker         string          `json:"breaker"`
	Attested        *attestedInfo   `json:"attested"`
}

func (p providerInfo) hardware() string {
	v := orDash(p.HardwareClass.Value)
	if p.HardwareClass.Claimed && p.HardwareClass.Value != "" {
		v += " (claimed)"
	}
	return v
}

func (p providerInfo) age() string {
	switch {
	case p.LastHeartbeatMS == 0:
		return "never"
	case p.HeartbeatAgeMS == nil:
		return "-"
	}
	return formatMillis(*p.HeartbeatAgeMS)
}

func (p providerInfo) modelStates() string {
	if len(p.Models) == 0 {
		return "-"
	}
	parts := make([]string, len(p.Models))
	for i, m := range p.Models {
		parts[i] = fmt.Sprintf("%s(%s)", m.label(), orDash(m.State))
	}
	return strings.Join(parts, ",")
}

func renderProviders(w io.Writer, provs []providerInfo, inv *invocation) error {
	if len(provs) == 0 {
		_, err := fmt.Fprintln(w, "(no providers known to this node)")
		return err
	}
	sort.SliceStable(provs, func(i, j int) bool { return provs[i].PeerID < provs[j].PeerID })
	tw := newTable(w)
	fmt.Fprintln(tw, "PEER\tMACHINE\tBACKEND\tREGION\tHW\tTEE\tSTATUS\tBREAKER\tAGE\tLOAD\tQUEUE\tMODELS")
	counts := map[string]int{}
	for _, p := range provs {
		counts[p.Status]++
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d/%d\t%d\t%s\n",
			shortID(p.PeerID), orDash(shortHex(p.MachineID)), orDash(p.KeyBackend), orDash(p.Region),
			p.hardware(), teeLabel(p.Attested), orDash(p.Status), orDash(p.Breaker), p.age(), p.InFlight, p.Capacity, p.QueueDepth, p.modelStates())
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "%d providers: %d up, %d degraded, %d down\n",
		len(provs), counts["up"], counts["degraded"], counts["down"])
	if inv != nil && inv.boolFlag("v") {
		fmt.Fprintln(w)
		if err := renderProviderModels(w, provs); err != nil {
			return err
		}
		fmt.Fprintln(w)
		return renderAttested(w, provs)
	}
	return nil
}

// renderProviderModels lists every (provider, model) with its rate card.
func renderProviderModels(w io.Writer, provs []providerInfo) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "PEER\tMODEL\tNAME\tENGINE\tSTATE\tIN\tOUT\tCACHED\tPIXEL\tAUDIO_MS\tMIN\tVERIFICATION\tWEIGHTS")
	for _, p := range provs {
		for _, m := range p.Models {
			rc := m.RateCard
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\n",
				shortID(p.PeerID), orDash(shortHex(m.ModelID)), orDash(m.Name), orDash(m.Engine), orDash(m.State),
				rc.InputTokens, rc.OutputTokens, rc.CachedTokens, rc.PixelSteps, rc.AudioMS, rc.Minimum,
				orDash(strings.Join(m.Verification, ",")), orDash(shortHex(m.WeightsHash)))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "rate card prices are integer micro-units per unit; hardware class and region are claims")
	return err
}
