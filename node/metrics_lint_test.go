package node

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/tenzrod/tenzrod/node/nodetest"
)

// tenzroFamilies parses a /metrics answer and keeps the tenzro_*
// families: libp2p's and the Go runtime's are their authors' to name.
func tenzroFamilies(t testing.TB, body string) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	all, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	out := map[string]*dto.MetricFamily{}
	for name, mf := range all {
		if strings.HasPrefix(name, "tenzro_") {
			out[name] = mf
		}
	}
	return out
}

// lintFamilies checks mfs with promlint's rules (client_golang's
// testutil), and with `promtool check metrics` where it is installed
// (.ci/run installs Debian's prometheus package): both must find nothing.
func lintFamilies(t testing.TB, role string, mfs map[string]*dto.MetricFamily) {
	t.Helper()
	list := make([]*dto.MetricFamily, 0, len(mfs))
	for _, mf := range mfs {
		list = append(list, mf)
	}
	problems, err := testutil.GatherAndLint(prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) { return list, nil }))
	if err != nil {
		t.Fatalf("%s: lint: %v", role, err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s: %s", role, p.Metric, p.Text)
	}
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Logf("%s: promtool is not installed: promlint's rules alone were checked", role)
		return
	}
	var text bytes.Buffer
	enc := expfmt.NewEncoder(&text, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range list {
		if err := enc.Encode(mf); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = &text
	out, err := cmd.CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("%s: promtool check metrics: %v\n%s", role, err, out)
	}
}

// sample finds the series of family name whose labels include want.
func sample(mfs map[string]*dto.MetricFamily, name string, want map[string]string) *dto.Metric {
	mf := mfs[name]
	if mf == nil {
		return nil
	}
next:
	for _, m := range mf.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if have[k] != v {
				continue next
			}
		}
		return m
	}
	return nil
}

// TestMetricsOfEveryRoleLintClean: a validator, a provider and a gateway
// on loopback; after a streamed call and a refused one, the gateway's
// /metrics has the request, TTFT and inter-token histograms by model and
// status and the token counters by model and provider, and every role's
// tenzro_* families pass promlint (and promtool, where installed); the
// dashboard in docs/ reads only families the nodes export.
func TestMetricsOfEveryRoleLintClean(t *testing.T) {
	dir, id := testModelDir(t)
	m := DevnetModel(dir, id)
	net := nodetest.Build(t, nodetest.Spec{Validators: 1, Gateways: 1, Providers: 1}, func(t testing.TB, r nodetest.Role, _ int, boot []string) *Node {
		cfg := testConfig(t, Role(r), "software", boot)
		switch r {
		case nodetest.RoleGateway:
			cfg.Router.Buyers = []BuyerConfig{{Account: "alice", TokenSHA256: TokenHash(testToken), InitialCredit: 1_000_000}}
		case nodetest.RoleProvider:
			cfg.Provider.Models = []ModelConfig{m}
		}
		return newNode(t, cfg)
	})
	gw, prov := net.Gateways[0], net.Providers[0]
	nodetest.Eventually(t, 30*time.Second, "the provider warm at the gateway", func() bool { return warmOffers(gw, m.Name) == 1 })

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	client := sdkClient(gw, testToken)
	acc, chunks := streamChat(t, ctx, client, openai.ChatCompletionNewParams{
		Model:         DevnetModelName,
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Write about the sea")},
		MaxTokens:     openai.Int(12),
		Seed:          openai.Int(3),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	})
	if chunks < 3 || acc.Usage.CompletionTokens == 0 {
		t.Fatalf("streamed call: %d chunks, usage %+v", chunks, acc.Usage)
	}
	if _, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "no-such-model",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}}); err == nil {
		t.Fatal("a call for an unserved model was answered")
	}

	_, body := send(t, gw.APIURL()+"/metrics", "", "")
	mfs := tenzroFamilies(t, body)
	ok := map[string]string{"model": DevnetModelName, "status": "200"}
	for _, name := range []string{"tenzro_router_request_duration_seconds", "tenzro_router_time_to_first_token_seconds"} {
		if s := sample(mfs, name, ok); s == nil || s.GetHistogram().GetSampleCount() != 1 || s.GetHistogram().GetSampleSum() <= 0 {
			t.Errorf("%s{model=%q,status=\"200\"}: %v", name, DevnetModelName, s)
		}
	}
	// Every piece of text after the first is one gap; a piece holds one
	// token or more.
	if s := sample(mfs, "tenzro_router_inter_token_latency_seconds", ok); s == nil || s.GetHistogram().GetSampleCount() == 0 ||
		s.GetHistogram().GetSampleCount() > uint64(acc.Usage.CompletionTokens-1) {
		t.Errorf("inter-token latency after %d completion tokens: %v", acc.Usage.CompletionTokens, s)
	}
	if s := sample(mfs, "tenzro_router_requests_total", ok); s == nil || s.GetCounter().GetValue() != 1 {
		t.Errorf("requests_total{status=200}: %v", s)
	}
	refused := false
	for _, s := range mfs["tenzro_router_requests_total"].GetMetric() {
		for _, l := range s.GetLabel() {
			refused = refused || (l.GetName() == "status" && l.GetValue() != "200" && l.GetValue() != "")
		}
	}
	if !refused {
		t.Errorf("the refused call is not counted by its status: %v", mfs["tenzro_router_requests_total"])
	}
	byProv := map[string]string{"model": DevnetModelName, "provider": prov.Host().ID().String()}
	if s := sample(mfs, "tenzro_router_completion_tokens_total", byProv); s == nil || s.GetCounter().GetValue() != float64(acc.Usage.CompletionTokens) {
		t.Errorf("completion tokens %v, usage %d", s, acc.Usage.CompletionTokens)
	}
	if s := sample(mfs, "tenzro_router_prompt_tokens_total", byProv); s == nil || s.GetCounter().GetValue() != float64(acc.Usage.PromptTokens) {
		t.Errorf("prompt tokens %v, usage %d", s, acc.Usage.PromptTokens)
	}
	lintFamilies(t, "gateway", mfs)
	exported := priceFeedFamilies(t)
	for name := range mfs {
		exported[name] = true
	}
	for role, n := range map[string]*Node{"validator": net.Validators[0], "provider": prov} {
		_, body := send(t, n.APIURL()+"/metrics", "", "")
		rmfs := tenzroFamilies(t, body)
		lintFamilies(t, role, rmfs)
		for name := range rmfs {
			exported[name] = true
		}
	}
	// The chain's families are checked by TestChainMetricsLintClean; a
	// breaker's state is exported from its first change, which no call
	// here causes.
	checkDashboard(t, "tenzro_", exported, "tenzro_chain_", "tenzro_router_breaker_state")
}

// TestChainMetricsLintClean: a validator of a real chain exports the
// chain's height, rising with its blocks, beside its health gauges, all
// lint-clean and all the dashboard's chain panels read.
func TestChainMetricsLintClean(t *testing.T) {
	c := newChainNet(t, 1, 0, 0, testChainParams(60))
	v := c.validators[0]
	var mfs map[string]*dto.MetricFamily
	nodetest.Eventually(t, 30*time.Second, "tenzro_chain_height past 2", func() bool {
		_, body := send(t, v.APIURL()+"/metrics", "", "")
		mfs = tenzroFamilies(t, body)
		h := mfs["tenzro_chain_height"]
		return h != nil && len(h.GetMetric()) == 1 && h.GetMetric()[0].GetGauge().GetValue() > 2
	})
	if mfs["tenzro_chain_stalled"] == nil {
		t.Fatal("no tenzro_chain_stalled beside the height")
	}
	lintFamilies(t, "validator with a chain", mfs)
	exported := map[string]bool{}
	for name := range mfs {
		exported[name] = true
	}
	checkDashboard(t, "tenzro_chain_", exported)
}
