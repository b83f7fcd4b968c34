package gateway

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/filecoin-project/go-clock"
	"github.com/prometheus/client_golang/prometheus"
)

// maxLabelValues bounds the distinct models and providers the request
// families are labelled by: a buyer names any model it likes, and a label
// per name would let it grow the registry without end. Past the bound a
// value is counted as "other".
const maxLabelValues = 256

// otherLabel stands for every value past maxLabelValues.
const otherLabel = "other"

// Buckets in seconds. TTFT and request latency span a cached short answer
// on loopback (milliseconds) to a long generation behind a cold provider
// (minutes); inter-token gaps are one decode step, milliseconds to a
// second on a loaded CPU provider.
var (
	latencyBuckets    = []float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 80, 160, 320}
	interTokenBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.15, 0.2, 0.3, 0.5, 1, 2.5}
)

// requestMetrics are the families dashboards are built on, as vLLM's and
// llama.cpp's servers export them but seen from the buyer's side of the
// gateway: every buyer request (probes excluded), labelled by the model
// and the HTTP status it ended with.
type requestMetrics struct {
	requests                 *prometheus.CounterVec
	duration, ttft, interTok *prometheus.HistogramVec
	prompt, completion       *prometheus.CounterVec
	models, providers        boundedLabels
}

func newRequestMetrics() *requestMetrics {
	hist := func(name, help string, buckets []float64) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "tenzro", Subsystem: "router", Name: name, Help: help,
			Buckets: buckets}, []string{"model", "status"})
	}
	tokens := func(name, help string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "tenzro", Subsystem: "router", Name: name, Help: help},
			[]string{"model", "provider"})
	}
	return &requestMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "tenzro", Subsystem: "router", Name: "requests_total",
			Help: "Buyer requests finished, by model and HTTP status (probes excluded)."}, []string{"model", "status"}),
		duration:   hist("request_duration_seconds", "Time from taking a buyer request to its end, by model and HTTP status.", latencyBuckets),
		ttft:       hist("time_to_first_token_seconds", "Time from taking a buyer request to its first text sent to the buyer, by model and final HTTP status.", latencyBuckets),
		interTok:   hist("inter_token_latency_seconds", "Gaps between successive pieces of text sent to the buyer, by model and final HTTP status.", interTokenBuckets),
		prompt:     tokens("prompt_tokens_total", "Prompt tokens of answered requests (the usage the buyer is told), by model and serving provider."),
		completion: tokens("completion_tokens_total", "Completion tokens of answered requests (the usage the buyer is told), by model and serving provider."),
		models:     boundedLabels{seen: map[string]bool{}},
		providers:  boundedLabels{seen: map[string]bool{}},
	}
}

func (r *requestMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{r.requests, r.duration, r.ttft, r.interTok, r.prompt, r.completion}
}

// boundedLabels admits the first maxLabelValues distinct values of a label.
type boundedLabels struct {
	mu   sync.Mutex
	seen map[string]bool
}

func (b *boundedLabels) value(v string) string {
	if v == "" {
		return otherLabel
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.seen[v] {
		if len(b.seen) >= maxLabelValues {
			return otherLabel
		}
		b.seen[v] = true
	}
	return v
}

// requestTimer times one buyer request: the wrapped onDelta notes when each
// piece of text leaves for the buyer, done files the request.
type requestTimer struct {
	m     *requestMetrics
	clock clock.Clock
	start time.Time
	// first and last are when text was last sent; gaps between them are
	// kept until the status is known (done), since they are labelled by it.
	first, last time.Time
	gaps        []float64
}

func (m *Metrics) timeRequest(clock clock.Clock, start time.Time) *requestTimer {
	return &requestTimer{m: m.req, clock: clock, start: start}
}

// wrap returns onDelta timing each call; the gateway calls it from one
// goroutine per request, in order.
func (t *requestTimer) wrap(onDelta func(Delta) error) func(Delta) error {
	return func(d Delta) error {
		now := t.clock.Now()
		if t.first.IsZero() {
			t.first = now
		} else {
			t.gaps = append(t.gaps, now.Sub(t.last).Seconds())
		}
		t.last = now
		return onDelta(d)
	}
}

// done files the finished request. Probes (a validator's synthetic calls)
// are the validators' figures, not the buyers': they are left out.
func (t *requestTimer) done(req *Request, res *Result, err error) {
	if req.Probe {
		return
	}
	model := req.Model
	if res != nil && res.Model != "" {
		model = res.Model
	}
	model = t.m.models.value(model)
	status := strconv.Itoa(statusOf(err))
	t.m.requests.WithLabelValues(model, status).Inc()
	t.m.duration.WithLabelValues(model, status).Observe(t.clock.Since(t.start).Seconds())
	if !t.first.IsZero() {
		t.m.ttft.WithLabelValues(model, status).Observe(t.first.Sub(t.start).Seconds())
	}
	if len(t.gaps) > 0 {
		h := t.m.interTok.WithLabelValues(model, status)
		for _, g := range t.gaps {
			h.Observe(g)
		}
	}
	if res != nil {
		prov := t.m.providers.value(res.Provider.PeerID)
		t.m.prompt.WithLabelValues(model, prov).Add(float64(res.PromptTokens))
		t.m.completion.WithLabelValues(model, prov).Add(float64(res.CompletionTokens))
	}
}

// statusOf is the HTTP status a request's outcome maps to, as the OpenAI
// API answers it: a routing error keeps its own, a buyer gone is nginx's
// 499, anything else a 500.
func statusOf(err error) int {
	var ge *Error
	switch {
	case err == nil:
		return http.StatusOK
	case errors.As(err, &ge):
		return ge.Status
	case errors.Is(err, errBuyerGone), errors.Is(err, context.Canceled):
		return 499
	}
	return http.StatusInternalServerError
}
