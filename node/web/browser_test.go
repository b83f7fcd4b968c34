package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/tenzrod/tenzrod/node"
	"github.com/tenzrod/tenzrod/node/nodetest"
)

// TestPage drives the gateway's page in headless Chromium against a real
// network: it lists every provider with its status and shortened peer ID,
// shows a stopped provider down within 10 s, lists a call made through
// the OpenAI route with its receipt verified, and requests nothing outside
// the node's own origin. It leaves a screenshot of the page.
func TestPage(t *testing.T) {
	m := startMarket(t, 3)
	ctx := browser(t)
	origin := m.gateway.APIURL()

	seen := watch(t, ctx)
	if err := chromedp.Do(ctx, chromedp.Navigate(origin+"/?account="+buyer().String())); err != nil {
		t.Fatal(err)
	}

	t.Run("providers listed up with their peer IDs", func(t *testing.T) {
		nodetest.Eventually(t, 15*time.Second, "every provider listed up on the page", func() bool {
			rs := rows(t, ctx)
			for _, p := range m.providers {
				if rs[p.Host().ID().String()].Status != "up" {
					return false
				}
			}
			return len(rs) == len(m.providers)
		})
		for _, p := range m.providers {
			id := p.Host().ID().String()
			if r := rows(t, ctx)[id]; r.Shown != short(id) || r.Title != id {
				t.Fatalf("row of %s shows %q (title %q), want %q", id, r.Shown, r.Title, short(id))
			}
		}
	})

	var served string // the provider of the first call, whose payment must settle
	t.Run("a call through the OpenAI route is listed with its receipt verified", func(t *testing.T) {
		var nonce string
		nonce, served = chat(t, origin)
		js := fmt.Sprintf(`(() => { const r = document.querySelector('#recent-table tr[data-nonce="%s"]');
			return r ? r.dataset.verified + ' ' + r.dataset.provider : ''; })()`, nonce)
		nodetest.Eventually(t, 10*time.Second, "the call in recent requests", func() bool {
			return eval[string](t, ctx, js) != ""
		})
		if got := eval[string](t, ctx, js); got != "true "+served {
			t.Fatalf("recent row: %q, want verified and served by %s", got, served)
		}
		// A click on the row looks the receipt up and verifies it.
		click(t, ctx, fmt.Sprintf(`#recent-table tr[data-nonce="%s"]`, nonce))
		nodetest.Eventually(t, 10*time.Second, "the receipt verified in the lookup box", func() bool {
			return eval[string](t, ctx, `document.querySelector('#lookup-out [data-verdict]')?.dataset.verdict || ''`) == "valid"
		})
	})

	t.Run("a stopped provider turns down within 10 s", func(t *testing.T) {
		gone := m.providers[0]
		if gone.Host().ID().String() == served {
			gone = m.providers[1]
		}
		id := gone.Host().ID().String()
		// The 10 s run from the stop's start: its heartbeats end first,
		// while the rest of the node (chain, collector) may take a while
		// to wind down on a loaded machine.
		stopped := make(chan error, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 3*nodetest.StopTimeout)
			defer cancel()
			stopped <- gone.Stop(ctx)
		}()
		nodetest.Eventually(t, 10*time.Second, "the stopped provider down on the page", func() bool {
			return rows(t, ctx)[id].Status == "down"
		})
		if err := <-stopped; err != nil {
			t.Fatalf("stop the provider: %v", err)
		}
	})

	t.Run("a settled payment is listed and verifies", func(t *testing.T) {
		nodetest.Eventually(t, 30*time.Second, "the buyer's payments settled on the page", func() bool {
			return eval[int](t, ctx, `document.querySelectorAll('#payments-table:not([hidden]) tbody tr').length`) > 0
		})
		click(t, ctx, `#payments-table tbody tr`)
		nodetest.Eventually(t, 10*time.Second, "the payment found settled by the lookup", func() bool {
			return eval[string](t, ctx, `document.querySelector('#lookup-out [data-verdict]')?.dataset.verdict || ''`) == "settled"
		})
	})

	t.Run("a provider's page says quietly that it routes nothing", func(t *testing.T) {
		tab, cancel := chromedp.NewContext(ctx)
		defer cancel()
		pseen := watch(t, tab)
		var prov *node.Node // the first call's, which keeps running
		for _, p := range m.providers {
			if p.Host().ID().String() == served {
				prov = p
			}
		}
		if prov == nil {
			t.Fatalf("no provider %s in the network", served)
		}
		if err := chromedp.Do(tab, chromedp.Navigate(prov.APIURL()+"/")); err != nil {
			t.Fatal(err)
		}
		nodetest.Eventually(t, 10*time.Second, "the provider's page live", func() bool {
			return eval[string](t, tab, `document.getElementById('live').dataset.state`) == "live"
		})
		got := eval[string](t, tab, `document.getElementById('recent-empty').textContent + ' | ' + document.getElementById('node-info').textContent`)
		if !strings.Contains(got, "routes no requests") || !strings.Contains(got, "provider") {
			t.Fatalf("provider page: %q", got)
		}
		nodetest.Eventually(t, 10*time.Second, "three refreshes of the provider's page", func() bool { return pseen.rpcs() >= 3 })
		pseen.check(t, prov.APIURL())
	})

	t.Run("screenshot", func(t *testing.T) {
		// Let the plots gather a few samples: more calls, some hedged.
		for range 4 {
			chat(t, origin)
		}
		refreshed(t, ctx, 2) // so the picture shows them
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if len(png) < 8 || string(png[1:4]) != "PNG" {
			t.Fatalf("screenshot is not a PNG (%d bytes)", len(png))
		}
		// The same page as an operator with a dark desktop sees it.
		if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}}); err != nil {
			t.Fatal(err)
		}
		refreshed(t, ctx, 1) // redraws the plots in the dark colours
		dark, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		dirs := []string{t.ArtifactDir()}
		if d := os.Getenv("TENZRO_SCREENSHOT_DIR"); d != "" {
			dirs = append(dirs, d)
		}
		for _, d := range dirs {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
			for name, img := range map[string][]byte{"page.png": png, "page-dark.png": dark} {
				p := filepath.Join(d, name)
				if err := os.WriteFile(p, img, 0o644); err != nil {
					t.Fatal(err)
				}
				t.Logf("screenshot: %s", p)
			}
		}
	})

	t.Run("no request leaves the node's origin, no script error", func(t *testing.T) {
		seen.check(t, origin)
	})
}

// chat makes one call through the gateway's OpenAI route and returns its
// receipt nonce and serving provider.
func chat(t *testing.T, origin string) (nonce, provider string) {
	t.Helper()
	body := `{"model":"` + node.DevnetModelName + `","messages":[{"role":"user","content":"Hello"}],"max_tokens":8,"tenzro":{"verification":"receipt"}}`
	var raw []byte
	for try := 1; ; try++ {
		req, _ := http.NewRequest(http.MethodPost, origin+"/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+buyerToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			break
		}
		// A busy answer is the market's, not the page's: the page test
		// needs calls, so it retries those (and says so).
		if try == 3 || resp.StatusCode < 429 && resp.StatusCode != http.StatusPaymentRequired {
			t.Fatalf("chat: %d %s", resp.StatusCode, raw)
		}
		t.Logf("chat try %d: %d %s; retrying", try, resp.StatusCode, raw)
		time.Sleep(time.Second)
	}
	var out struct {
		Tenzro struct {
			Provider struct {
				PeerID string `json:"peer_id"`
			} `json:"provider"`
			Receipt struct {
				Verified bool `json:"verified"`
				Receipt  struct {
					Nonce string `json:"nonce"`
				} `json:"receipt"`
			} `json:"receipt"`
		} `json:"tenzro"`
	}
	if err := json.Unmarshal(raw, &out); err != nil || out.Tenzro.Receipt.Receipt.Nonce == "" || !out.Tenzro.Receipt.Verified {
		t.Fatalf("chat answer without a verified receipt: %s (%v)", raw, err)
	}
	return out.Tenzro.Receipt.Receipt.Nonce, out.Tenzro.Provider.PeerID
}
