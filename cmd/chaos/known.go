package main

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// unreachableProvider names a failure the soak found: after a provider's
// restart a gateway keeps failing to dial it ("failed to dial: no
// addresses") while its heartbeats show it up, and the gateway's circuit
// breaker, whose every half-open probe fails the same way, backs off for
// longer each time. It stays a violation; the label (given only when the
// gateway's own log says so) lets TestChaosShort tell it from any other.
const unreachableProvider = "restarted provider unreachable"

// cannotDial reports whether router r's log says, after since, that it
// could not dial provider peer for want of addresses.
func cannotDial(r *proc, peer string, since time.Time) bool {
	f, err := os.Open(filepath.Join(r.home, "node.log"))
	if err != nil {
		return false
	}
	defer f.Close() //nolint:errcheck // read-only: a close error loses nothing
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if !strings.Contains(l, "no addresses") || !strings.Contains(l, "dial "+peer) {
			continue
		}
		ts, _, _ := strings.Cut(strings.TrimPrefix(l, "time="), " ")
		if t, err := time.Parse(time.RFC3339Nano, ts); err == nil && !t.Before(since) {
			return true
		}
	}
	return false
}
