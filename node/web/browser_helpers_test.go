package web_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/tenzrod/tenzrod/node/nodetest"
)

// The browser side of the page tests: finding and starting Chromium, and
// reading and watching a tab.

// chromium finds the browser: $TENZRO_CHROMIUM, /usr/bin/chromium, or a
// chromium or chrome on PATH.
func chromium() (string, error) {
	if p := os.Getenv("TENZRO_CHROMIUM"); p != "" {
		return p, nil
	}
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium", nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("web: no chromium for the browser tests: install Debian's chromium (apt-get install chromium; .ci/run does) or set TENZRO_CHROMIUM")
}

// browser starts one headless Chromium for the test and returns a tab.
func browser(t *testing.T) context.Context {
	t.Helper()
	path, err := chromium()
	if err != nil {
		t.Fatal(err)
	}
	// The profile and Chromium's own scratch directories (it makes
	// org.chromium.Chromium.* in TMPDIR and leaves them when it is killed,
	// as a test's browser is) live under this test's directory, removed
	// once the browser is gone.
	scratch := t.TempDir()
	tmp := filepath.Join(scratch, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.WindowSize(1500, 1900), chromedp.Flag("disable-gpu", true), chromedp.Flag("force-prefers-reduced-motion", true),
		chromedp.UserDataDir(filepath.Join(scratch, "profile")), chromedp.Env("TMPDIR="+tmp))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc() // waits for the browser process
		removeScratch(t, scratch)
	})
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatalf("web: start %s: %v", path, err)
	}
	return ctx
}

// removeScratch removes the browser's directory. Chromium's helper
// processes can still be writing in it for a moment after the browser
// exits, so a "directory not empty" is retried for a few seconds.
func removeScratch(t *testing.T, dir string) {
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := os.RemoveAll(dir)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("web: remove the browser's directory: %v", err)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// eval runs js in the page and decodes its value.
func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

type providerRow struct {
	Peer, Status, Shown, Title string
}

const providerRowsJS = `[...document.querySelectorAll('#providers-table tbody tr')].map(r => ({
	Peer: r.dataset.peer, Status: r.dataset.status, Shown: r.cells[0].textContent, Title: r.cells[0].firstChild.title}))`

func rows(t *testing.T, ctx context.Context) map[string]providerRow {
	out := map[string]providerRow{}
	for _, r := range eval[[]providerRow](t, ctx, providerRowsJS) {
		out[r.Peer] = r
	}
	return out
}

// click clicks the first element sel matches, in one step in the page: a
// query and a click sent apart could meet a table the page redrew between.
func click(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	if !eval[bool](t, ctx, fmt.Sprintf(`(() => { const e = document.querySelector(%q); if (e) e.click(); return !!e; })()`, sel)) {
		t.Fatalf("nothing on the page matches %s", sel)
	}
}

// refreshed waits for n more refreshes of the page.
func refreshed(t *testing.T, ctx context.Context, n int) {
	t.Helper()
	const js = `Number(document.body.dataset.refreshes || 0)`
	want := eval[int](t, ctx, js) + n
	nodetest.Eventually(t, 10*time.Second, fmt.Sprintf("%d refreshes of the page", n), func() bool { return eval[int](t, ctx, js) >= want })
}

func short(id string) string { return id[:6] + "…" + id[len(id)-6:] }

// seen is what a tab did: every URL it requested, every script exception
// and console error (a CSP violation is one).
type seen struct {
	mu       sync.Mutex
	urls     []string
	problems []string
}

// watch records what the tab ctx does from now on, with the network
// domain enabled; call it before the navigation.
func watch(t *testing.T, ctx context.Context) *seen {
	t.Helper()
	s := &seen{}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	err := chromedp.Listen(ctx, func(ev any) {
		s.mu.Lock()
		defer s.mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			s.urls = append(s.urls, e.Request.URL)
		case *runtime.EventExceptionThrown:
			s.problems = append(s.problems, fmt.Sprintf("exception: %s %+v", e.ExceptionDetails.Text, e.ExceptionDetails.Exception))
		case *cdplog.EventEntryAdded:
			if e.Entry.Level == cdplog.EntryLevelError {
				s.problems = append(s.problems, fmt.Sprintf("console %s: %s (%s)", e.Entry.Source, e.Entry.Text, e.Entry.URL))
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (s *seen) rpcs() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, u := range s.urls {
		if strings.HasSuffix(u, "/rpc") {
			n++
		}
	}
	return n
}

// check asserts that every request went to origin, that the page polled
// /rpc, and that no script failed.
func (s *seen) check(t *testing.T, origin string) {
	t.Helper()
	s.mu.Lock()
	urls, problems := append([]string(nil), s.urls...), append([]string(nil), s.problems...)
	s.mu.Unlock()
	want, _ := url.Parse(origin)
	rpcs := 0
	for _, u := range urls {
		p, err := url.Parse(u)
		if err != nil || p.Scheme != want.Scheme || p.Host != want.Host {
			t.Errorf("the page requested %s, outside %s", u, origin)
		}
		if err == nil && p.Path == "/rpc" {
			rpcs++
		}
	}
	if rpcs < 3 {
		t.Errorf("%d requests seen, %d to /rpc: the listener saw too little to judge", len(urls), rpcs)
	}
	for _, p := range problems {
		t.Errorf("page %s: %s", origin, p)
	}
}
