package node

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/filecoin-project/go-clock"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tenzrod/tenzrod/router/pricefeed"
)

// dashboardFile is the Grafana dashboard shipped in docs/.
const dashboardFile = "../docs/grafana-dashboard.json"

var familyRef = regexp.MustCompile(`\btenzro_[a-z0-9_]+`)

// dashboardFamilies lists the tenzro_* families the dashboard's queries
// read, a histogram's series (_bucket, _sum, _count) by their family.
func dashboardFamilies(t testing.TB) map[string]bool {
	t.Helper()
	raw, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	out := map[string]bool{}
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			for _, name := range familyRef.FindAllString(tg.Expr, -1) {
				for _, suffix := range []string{"_bucket", "_sum", "_count"} {
					if base, ok := strings.CutSuffix(name, suffix); ok && strings.HasSuffix(base, "_seconds") {
						name = base
					}
				}
				out[name] = true
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s queries no tenzro_* family", dashboardFile)
	}
	return out
}

// checkDashboard fails for each family the dashboard reads under prefix
// that exported does not hold: a renamed family must take the dashboard
// with it.
func checkDashboard(t testing.TB, prefix string, exported map[string]bool, except ...string) {
	t.Helper()
next:
	for name := range dashboardFamilies(t) {
		if !strings.HasPrefix(name, prefix) {
			continue
		}
		for _, e := range except {
			if strings.HasPrefix(name, e) {
				continue next
			}
		}
		if !exported[name] {
			t.Errorf("%s reads %s, which no node exports", dashboardFile, name)
		}
	}
}

// priceFeedFamilies are the families a feed with one successful
// observation exports (a validator's feed fills only from probes).
func priceFeedFamilies(t testing.TB) map[string]bool {
	t.Helper()
	f := pricefeed.New(10*time.Minute, clock.New(), nil)
	f.Add(pricefeed.Observation{Observer: [32]byte{1}, Provider: "p", Machine: "m", Model: "x", Price: 10, LatencyMs: 5,
		InputTokens: 1, OutputTokens: 1, Success: true, Time: time.Now()})
	reg := prometheus.NewRegistry()
	reg.MustRegister(f)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, mf := range mfs {
		out[mf.GetName()] = true
	}
	return out
}
