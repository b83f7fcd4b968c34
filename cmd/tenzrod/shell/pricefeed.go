package shell

import (
	"fmt"
	"io"
	"time"
)

// priceFeedParams builds tenzro_getPriceFeed's params from
// `pricefeed [-model M] [-provider PEER]`.
func priceFeedParams(inv *invocation) (any, error) {
	p := map[string]string{}
	if m := inv.flags["model"]; m != "" {
		p["model"] = m
	}
	if v := inv.flags["provider"]; v != "" {
		p["provider"] = v
	}
	return p, nil
}

type priceClaim struct {
	Value string `json:"value"`
}

type priceEntry struct {
	Provider     string   `json:"provider"`
	Model        string   `json:"model"`
	WindowStart  int64    `json:"window_start_ms"`
	Attested     bool     `json:"attested"`
	Observers    []string `json:"observers"`
	Count        int      `json:"count"`
	SuccessRate  float64  `json:"success_rate"`
	UnitP50      float64  `json:"price_per_unit_p50"`
	UnitP95      float64  `json:"price_per_unit_p95"`
	LatencyP50Ms float64  `json:"latency_p50_ms"`
	LatencyP95Ms float64  `json:"latency_p95_ms"`
	Claims       *struct {
		HardwareClass priceClaim `json:"hardware_class"`
		Region        priceClaim `json:"region"`
	} `json:"provider_claims"`
}

type priceFeed struct {
	WindowMs     int64        `json:"window_ms"`
	MinObservers int          `json:"min_observers"`
	Entries      []priceEntry `json:"entries"`
}

func renderPriceFeed(w io.Writer, f priceFeed, _ *invocation) error {
	if len(f.Entries) == 0 {
		_, err := fmt.Fprintln(w, "(no validator has observed a provider yet)")
		return err
	}
	tw := newTable(w)
	fmt.Fprintln(tw, "PROVIDER\tMODEL\tWINDOW\tATTESTED\tOBS\tN\tOK%\tUNIT p50\tUNIT p95\tLAT p50\tLAT p95\t| HW (claim)\tREGION (claim)")
	for _, e := range f.Entries {
		hw, region := "-", "-"
		if e.Claims != nil {
			hw, region = e.Claims.HardwareClass.Value, e.Claims.Region.Value
		}
		att := "no"
		if e.Attested {
			att = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%.0f\t%.2f\t%.2f\t%.0fms\t%.0fms\t| %s\t%s\n",
			shortID(e.Provider), shortID(e.Model), time.UnixMilli(e.WindowStart).UTC().Format("15:04"), att,
			len(e.Observers), e.Count, 100*e.SuccessRate, e.UnitP50, e.UnitP95, e.LatencyP50Ms, e.LatencyP95Ms, hw, region)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "observed by validators over %s windows; attested at >= %d validators; unit = micro-units per billed token.\n"+
		"HW and REGION are the providers' own claims, not observations.\n", time.Duration(f.WindowMs)*time.Millisecond, f.MinObservers)
	return err
}
