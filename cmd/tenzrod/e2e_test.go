package main

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/tenzrod/tenzrod/cmd/internal/devproc"
	"github.com/tenzrod/tenzrod/cmd/tenzrod/devnet"
)

// built is the tenzrod binary the end-to-end tests share: linking it
// takes tens of seconds on a loaded machine, once is enough.
var built struct {
	once sync.Once
	dir  string // removed by TestMain
	bin  string
	err  error
}

// buildBinary compiles tenzrod once for the end-to-end tests.
func buildBinary(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "tenzrod-e2e-"); built.err != nil {
			return
		}
		built.bin, built.err = devproc.Build(".", ".", built.dir)
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.bin
}

// rpcCall makes one JSON-RPC call through the CLI's client and decodes its
// result; the tests poll with it, so a call gives up after 3 s.
func rpcCall(api, method string, params, result any) error {
	return devproc.RPC(api, method, params, result, 3*time.Second)
}

// providerAt is peer's status ("" if unknown) and whether it is
// registered on chain, as the node at api lists it.
func providerAt(api, peer string) (status string, registered bool) {
	var ps []struct {
		PeerID     string `json:"peer_id"`
		Status     string `json:"status"`
		Registered *bool  `json:"registered"`
	}
	if rpcCall(api, "tenzro_listProviders", nil, &ps) != nil {
		return "", false
	}
	for _, p := range ps {
		if p.PeerID == peer {
			return p.Status, p.Registered != nil && *p.Registered
		}
	}
	return "", false
}

// statusAt returns peer's status as the node at api sees it ("" if unknown).
func statusAt(api, peer string) string {
	s, _ := providerAt(api, peer)
	return s
}

// registeredUp reports whether the node at api lists peer registered and up.
func registeredUp(api, peer string) bool {
	s, registered := providerAt(api, peer)
	return s == "up" && registered
}

func peerOf(e devnet.NodeEntry) string {
	a := e.P2P[0]
	return a[strings.LastIndex(a, "/")+1:]
}

// waitAll polls every observer until cond(api) holds at all of them and
// returns, per observer, how long that took.
func waitAll(t *testing.T, observers []devnet.NodeEntry, limit time.Duration, what string, cond func(api string) bool) []time.Duration {
	t.Helper()
	start := time.Now()
	took := make([]time.Duration, len(observers))
	pending := len(observers)
	for pending > 0 {
		if time.Since(start) > limit {
			t.Fatalf("%s: not seen by every node within %s", what, limit)
		}
		for i, o := range observers {
			if took[i] == 0 && cond(o.API) {
				took[i] = time.Since(start)
				pending--
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return took
}

// sdkThroughGateway calls the devnet's gateway with the official OpenAI Go
// SDK and the buyer token from devnet.json, non-stream and stream.
func sdkThroughGateway(t *testing.T, m devnet.Manifest) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	client := openai.NewClient(option.WithBaseURL(m.Gateway+"/v1"), option.WithAPIKey(m.BuyerToken), option.WithMaxRetries(0))
	params := openai.ChatCompletionNewParams{
		Model:     m.Model,
		Messages:  []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Hello from the SDK")},
		MaxTokens: openai.Int(16),
		Seed:      openai.Int(11),
	}
	full, err := client.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatalf("SDK through the devnet gateway: %v", err)
	}
	if full.Choices[0].Message.Content == "" || full.Usage.CompletionTokens == 0 || !strings.Contains(full.RawJSON(), `"verified":true`) {
		t.Fatalf("SDK completion: %s", full.RawJSON())
	}
	stream := client.Chat.Completions.NewStreaming(ctx, params)
	acc := openai.ChatCompletionAccumulator{}
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("SDK stream through the devnet gateway: %v", err)
	}
	if acc.Choices[0].Message.Content != full.Choices[0].Message.Content {
		t.Fatalf("stream %q != non-stream %q under one seed", acc.Choices[0].Message.Content, full.Choices[0].Message.Content)
	}
}

// TestDevnetKillProviderGoesDown runs the real binary: a devnet of 2
// validators, 2 providers and a gateway as separate processes. A provider
// is killed with SIGKILL; every other node must mark it down within the
// protocol's 6 s (plus polling slack), then up again once it is restarted.
// TENZRO_E2E_KILLS sets how many kill/restart rounds to run (default 1);
// scripts/bench-killdown runs 10 and reports the distribution.
func TestDevnetKillProviderGoesDown(t *testing.T) {
	kills := 1
	if s := os.Getenv("TENZRO_E2E_KILLS"); s != "" {
		kills, _ = strconv.Atoi(s)
	}
	ps := startDevnet(t, buildBinary(t), 2, 2, 1)
	m := ps.M
	var restarted []int // pids
	var providers, others []devnet.NodeEntry
	for _, n := range m.Nodes {
		if n.Role == "provider" {
			providers = append(providers, n)
		}
	}
	if len(providers) != 2 || m.Gateway == "" {
		t.Fatalf("manifest: %+v", m)
	}
	for _, p := range providers {
		waitAll(t, m.Nodes, 60*time.Second, p.Name+" up", func(api string) bool { return statusAt(api, peerOf(p)) == "up" })
	}

	sdkThroughGateway(t, m)

	var downTimes []time.Duration
	for k := 0; k < kills; k++ {
		victim := providers[k%len(providers)]
		others = others[:0]
		for _, n := range m.Nodes {
			if n.Name != victim.Name {
				others = append(others, n)
			}
		}
		pid := victim.PID
		if k >= len(providers) {
			pid = restarted[len(restarted)-len(providers)]
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatalf("kill %s: %v", victim.Name, err)
		}
		took := waitAll(t, others, 15*time.Second, victim.Name+" down", func(api string) bool {
			return statusAt(api, peerOf(victim)) == "down"
		})
		for i, d := range took {
			if d > 7*time.Second {
				t.Errorf("%s saw %s down only after %s (rule: no clean heartbeat for 6 s)", others[i].Name, victim.Name, d)
			}
		}
		downTimes = append(downTimes, took...)

		restarted = append(restarted, ps.start(filepath.Join(victim.Home, "node.log"), nil, devproc.RestartArgs(victim)...).Process.Pid)
		up := waitAll(t, others, 30*time.Second, victim.Name+" back up", func(api string) bool {
			return statusAt(api, peerOf(victim)) == "up"
		})
		t.Logf("round %d: %s killed; down at others after %v; restarted, up after %v", k+1, victim.Name, took, up)
		// The restarted node must know every provider again before the
		// next round judges what it sees.
		for _, p := range providers {
			waitAll(t, m.Nodes, 30*time.Second, p.Name+" known to all", func(api string) bool { return statusAt(api, peerOf(p)) == "up" })
		}
	}
	sort.Slice(downTimes, func(i, j int) bool { return downTimes[i] < downTimes[j] })
	if len(downTimes) > 0 {
		t.Logf("kill-to-down over %d observations (%d kills): min %s median %s max %s",
			len(downTimes), kills, downTimes[0].Round(time.Millisecond),
			downTimes[len(downTimes)/2].Round(time.Millisecond), downTimes[len(downTimes)-1].Round(time.Millisecond))
	}
}
