package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readmeBlock is one ```sh block of README.md.
type readmeBlock struct {
	line    int    // of its opening fence
	section string // the "## " heading it is under
	text    string
}

// first returns the block's first line, trimmed: its key in notRunnable.
func (b readmeBlock) first() string {
	l, _, _ := strings.Cut(b.text, "\n")
	return strings.TrimSpace(l)
}

// readmeShellBlocks returns every ```sh block of README.md, in order.
func readmeShellBlocks(t *testing.T) []readmeBlock {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var (
		blocks  []readmeBlock
		section string
		cur     *readmeBlock
	)
	for i, l := range strings.Split(string(raw), "\n") {
		switch {
		case cur != nil && strings.HasPrefix(l, "```"):
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			cur.text += l + "\n"
		case l == "```sh":
			cur = &readmeBlock{line: i + 1, section: section}
		case strings.HasPrefix(l, "## "):
			section = l
		}
	}
	if cur != nil {
		t.Fatalf("README.md:%d: unterminated ```sh block", cur.line)
	}
	return blocks
}

// notRunnable are the README's shell blocks TestReadme does not run, by
// their first line, each with the reason. Every other block runs.
var notRunnable = map[string]string{
	"make devnet   # 4 validators, 3 providers, 1 gateway on loopback; prints the gateway URL, its web page and what to try": "" +
		"make devnet is the devnet the test starts itself (at 1 validator, 1 provider and 1 gateway, the budget on 2 cores); make test is the suite this test is part of",
	"make devnet": "the devnet the test starts itself, as above",
	"tenzrod init --home ~/.tenzrod/validator --role validator --bootstrap /ip4/…/tcp/4001/p2p/12D3KooW…": "" +
		"a new network of several machines: the addresses (…, 203.0.113.7) are the other machines'",
	"tenzrod init --home ~/.tenzrod/provider --role provider --key-backend tpm --region DE \\": "" +
		"hardware: a TPM, a running network's bootstrap address (…) and an editor; the devnet blocks init, register and start providers",
	"tenzrod join --bootstrap /ip4/…/tcp/4001/p2p/12D3KooW…": "" +
		"a network's address (…); the section's devnet block runs join",
	"tenzrod keys account new --out me.key        # then get it funded (tx transfer from a funded account)": "" +
		"placeholders (…, NODEID@HOST); the section's devnet block runs this paying form",
	"go test -run '^$' -bench ValidateHeartbeat -cpu 1 ./gossip/   # heartbeat validations per second on one core": "" +
		"measurements (make bench): minutes each, most with devnets of their own",
}

// readmeShows is what blocks that only print must print, by first line.
var readmeShows = map[string]string{
	"./bin/tenzrod shell --api http://127.0.0.1:PORT -c providers":                                           "up",
	`TOKEN=$(python3 -c 'import json;print(json.load(open(".devnet/devnet.json"))["buyer_token"])')`:         `"chat.completion"`,
	`BUYER=$(python3 -c 'import json;print(json.load(open(".devnet/devnet.json"))["buyer_chain_account"])')`: "escrows",
}

// readmeSubst are the README's placeholders for the devnet's gateway URL,
// replaced in every block that runs: PORT is the port `make devnet`
// prints, 8545 a node's default API port.
var readmeSubst = []string{"http://127.0.0.1:PORT", "http://127.0.0.1:8545"}

// readmeScript joins the blocks that run into one sh script, as a reader
// pastes them into one terminal: variables and exports carry over. Each
// block is preceded by a marker line naming it, so its output can be found
// and a failure placed. It fails the test on a block that is listed as
// not runnable but gone from the README (the list must follow it).
func readmeScript(t *testing.T, blocks []readmeBlock, gateway string) (string, []readmeBlock) {
	t.Helper()
	var (
		script strings.Builder
		ran    []readmeBlock
		seen   = map[string]bool{}
	)
	script.WriteString("set -e\n")
	for _, b := range blocks {
		if reason, skip := notRunnable[b.first()]; skip {
			seen[b.first()] = true
			t.Logf("README.md:%d (%s) not run: %s", b.line, b.section, reason)
			continue
		}
		text := b.text
		for _, p := range readmeSubst {
			text = strings.ReplaceAll(text, p, gateway)
		}
		fmt.Fprintf(&script, "echo '%s'\n%s", readmeMarker(b), text)
		ran = append(ran, b)
	}
	for k := range notRunnable {
		if !seen[k] {
			t.Errorf("notRunnable lists a block the README no longer has: %q", k)
		}
	}
	return script.String(), ran
}

func readmeMarker(b readmeBlock) string { return fmt.Sprintf("### README.md:%d", b.line) }

// blockOutput returns what block b printed in the script's output out.
func blockOutput(out string, b readmeBlock) string {
	_, after, ok := strings.Cut(out, readmeMarker(b)+"\n")
	if !ok {
		return ""
	}
	if i := strings.Index(after, "### README.md:"); i >= 0 {
		after = after[:i]
	}
	return after
}
