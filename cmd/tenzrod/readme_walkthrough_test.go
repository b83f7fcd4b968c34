package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/cmd/internal/devproc"
	"github.com/tenzrod/tenzrod/cmd/tenzrod/devnet"
)

// runScript runs script with sh -e in dir, in a process group of its own
// that is stopped at cleanup (SIGTERM, SIGKILL after 15 s), so what it
// leaves running in the background goes too. It returns the output.
func runScript(t *testing.T, dir, script string, limit time.Duration) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	logPath := filepath.Join(dir, "script.out")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	c := exec.CommandContext(ctx, "sh", "-e", "-c", script)
	c.Dir, c.Stdout, c.Stderr = dir, logf, logf
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := c.Process.Pid
	t.Cleanup(func() { stopGroup(t, pgid) })
	err = c.Wait()
	out, _ := os.ReadFile(logPath)
	return string(out), err
}

// stopGroup stops every process left in process group pgid.
func stopGroup(t *testing.T, pgid int) {
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	deadline := time.Now().Add(15 * time.Second)
	for syscall.Kill(-pgid, 0) == nil {
		if time.Now().After(deadline) {
			t.Errorf("process group %d still running 15 s after SIGTERM", pgid)
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestReadme is #39's acceptance of the README: every ```sh block of
// README.md runs, as written, in order, in one shell (as a reader pastes
// them into one terminal, from the repository's root, with bin/tenzrod
// built), against one fresh devnet; a block that cannot run here is listed
// in notRunnable with the reason. The README's `make devnet` is `tenzrod
// devnet --dir .devnet` after a build; it runs here at 1 validator, 1
// provider and 1 gateway (the Makefile's 4/3/1 does not fit the test
// budget on 2 cores). Among the blocks (#15's operator path): "Add a
// provider to a running network" makes a fresh provider home (init
// --chain-from), funds it from the faucet, registers and starts it and
// gets a call routed to it, with no file edited by hand; "Join from a
// laptop" starts a paying join gateway on a home of its own and pays a
// call from the user's own escrow. Then `tenzrod devnet add-provider`
// adds a provider the devnet supervises and, with --upstream, one
// fronting provider-0's OpenAI route; each serves paid calls and stops
// with the devnet.
func TestReadme(t *testing.T) {
	blocks := readmeShellBlocks(t)
	var walk *readmeBlock
	for i, b := range blocks {
		if b.section == "## Add a provider to a running network" && b.first() != "make devnet" {
			walk = &blocks[i]
		}
	}
	if walk == nil {
		t.Fatal("README.md has no walkthrough under \"## Add a provider to a running network\"")
	}
	for _, edit := range []string{"config.toml", "$EDITOR", "sed ", "cat >"} {
		if strings.Contains(walk.text, edit) {
			t.Fatalf("the walkthrough edits a file by hand (%q)", edit)
		}
	}
	bin := buildBinary(t)
	work := t.TempDir()
	for _, d := range []string{"bin", "home"} {
		if err := os.Mkdir(filepath.Join(work, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(bin, filepath.Join(work, "bin", "tenzrod")); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	ps := startDevnetIn(t, bin, filepath.Join(work, ".devnet"), 1, 1, 1)
	up := time.Since(start)

	script, ran := readmeScript(t, blocks, ps.M.Gateway)
	// HOME is the test's, so ~/.tenzrod and the shell's history stay in it.
	// The limit only stops a hung block: a loaded CI, running the rest of
	// the suite beside it, took over 6 minutes on blocks that take about
	// one minute on a quiet machine.
	out, err := runScript(t, work, "HOME="+filepath.Join(work, "home")+"\n"+script, 12*time.Minute)
	if err != nil {
		t.Fatalf("the README's blocks failed: %v (the last marker names the block)\n%s", err, out)
	}
	walked := time.Since(start) - up
	for _, b := range ran {
		// A block that only prints (curl -s exits 0 on an error answer)
		// is checked for what the README says it shows.
		if want, ok := readmeShows[b.first()]; ok && !strings.Contains(blockOutput(out, b), want) {
			t.Errorf("README.md:%d printed no %q:\n%s", b.line, want, blockOutput(out, b))
		}
	}
	keys, err := runCLI(t, "keys", "show", "--home", filepath.Join(work, "prov"))
	if err != nil {
		t.Fatal(err)
	}
	peer, ok := lineOf(keys, "peer id")
	if !ok {
		t.Fatalf("keys show: %s", keys)
	}
	lines := strings.Split(strings.TrimSpace(blockOutput(out, *walk)), "\n")
	if last := lines[len(lines)-1]; last != peer {
		t.Fatalf("the walkthrough's last line is %q, want the new provider's peer %s\n%s", last, peer, out)
	}
	var answer struct {
		Tenzro struct {
			Provider struct {
				PeerID string `json:"peer_id"`
			} `json:"provider"`
			Payment struct {
				Signed *signedRecord `json:"signed"`
			} `json:"payment"`
		} `json:"tenzro"`
	}
	b, err := os.ReadFile(filepath.Join(work, "answer.json"))
	if err != nil || json.Unmarshal(b, &answer) != nil {
		t.Fatalf("answer.json: %v %s", err, b)
	}
	if answer.Tenzro.Provider.PeerID != peer || answer.Tenzro.Payment.Signed == nil || answer.Tenzro.Payment.Signed.Payer != ps.M.BuyerChainAccount {
		t.Fatalf("the routed call: provider %s (want %s), payment %+v", answer.Tenzro.Provider.PeerID, peer, answer.Tenzro.Payment.Signed)
	}
	// The join block's last line is the payer of the laptop's call: the
	// user's own account, me.key's.
	me, err := runCLI(t, "keys", "account", "show", filepath.Join(work, "me.key"))
	if err != nil || len(strings.Fields(me)) < 2 {
		t.Fatalf("keys account show me.key: %v %s", err, me)
	}
	for _, b := range ran {
		if b.section == "## Join from a laptop" {
			got := strings.Fields(blockOutput(out, b))
			if len(got) == 0 || got[len(got)-1] != strings.Fields(me)[1] {
				t.Errorf("the laptop's call was paid by %v, want the user's account %s", got, strings.Fields(me)[1])
			}
		}
	}

	added := time.Now()
	np := addDevnetProvider(t, ps, "provider-1")
	addTook := time.Since(added)
	// A third fronts provider-0's own OpenAI route as its upstream engine:
	// the same weights, so the same catalog ID (the id rule).
	fronted := addDevnetProvider(t, ps, "provider-2", "--upstream", ps.node("provider-0").API+"/v1", "--upstream-model", ps.M.Model)
	for i, p := range []devnet.NodeEntry{np, fronted, fronted} {
		rec, err := paidChat(context.Background(), ps.M.Gateway, ps.M.BuyerToken, ps.M.Model, chatOpts{pin: peerOf(p), n: i})
		if err != nil {
			t.Fatalf("a paid call pinned to %s: %v", p.Name, err)
		}
		if rec.Payer != ps.M.BuyerChainAccount {
			t.Errorf("%s's call paid by %s, want the buyer %s", p.Name, rec.Payer, ps.M.BuyerChainAccount)
		}
	}
	handStartedNamed(t, ps, work)
	t.Logf("devnet up %s; %d README blocks run %s; add-provider to quoted %s",
		up.Round(time.Millisecond), len(ran), walked.Round(time.Millisecond), addTook.Round(time.Millisecond))
}

// handStartedNamed does what the README's text says of a provider: kill
// it and restart it by hand with ./bin/tenzrod provider --home
// .devnet/provider-0. Ctrl-C of the devnet must then say that it stopped
// each node it supervises and name the one restarted by hand, which it
// does not own, with its pid.
func handStartedNamed(t *testing.T, ps *procSet, work string) {
	t.Helper()
	p0 := ps.node("provider-0")
	_ = syscall.Kill(p0.PID, syscall.SIGKILL)
	waitFor(t, 10*time.Second, "provider-0 killed", func() bool { return !devproc.Alive(p0.PID) })
	logf, err := os.Create(filepath.Join(work, "provider-0-by-hand.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	hand := exec.Command("./bin/tenzrod", "provider", "--home", ".devnet/provider-0")
	hand.Dir, hand.Stdout, hand.Stderr = work, logf, logf
	if err := hand.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = hand.Process.Kill(); _ = hand.Wait() }()
	ps.stop() // the devnet's Ctrl-C (SIGINT); the test's cleanup stops it again, a no-op
	out := ps.Out.String()
	for _, n := range ps.M.Nodes {
		if n.Name != p0.Name && !strings.Contains(out, "devnet: stopped "+n.Name+" (pid ") {
			t.Errorf("the devnet's stop does not say it stopped %s:\n%s", n.Name, out)
		}
	}
	want := fmt.Sprintf("started by hand and not by this devnet: provider-0 (pid %d)", hand.Process.Pid)
	if !strings.Contains(out, want) {
		t.Errorf("the devnet's stop does not name the provider restarted by hand (%q):\n%s", want, out)
	}
}

// addDevnetProvider runs `tenzrod devnet add-provider` with args against
// the test's devnet and checks that the devnet supervises the new provider
// (listed in devnet.json with a live pid, so the devnet's stop must take
// it too) and that the gateway lists it registered and up.
func addDevnetProvider(t *testing.T, ps *procSet, name string, args ...string) devnet.NodeEntry {
	t.Helper()
	dir := filepath.Dir(ps.M.Genesis)
	out, err := exec.Command(ps.bin, append([]string{"devnet", "add-provider", "--dir", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("devnet add-provider %v: %v\n%s", args, err, out)
	}
	m, err := devproc.ReadManifest(dir)
	if err != nil {
		t.Fatalf("devnet.json after add-provider: %v", err)
	}
	ps.M = m
	np := ps.node(name)
	if np.PID == 0 || !devproc.Alive(np.PID) || !strings.Contains(string(out), "the gateway quotes") {
		t.Fatalf("%s in devnet.json: %+v\n%s", name, np, out)
	}
	if !registeredUp(m.Gateway, peerOf(np)) {
		t.Errorf("the gateway does not list %s registered and up", name)
	}
	return np
}
