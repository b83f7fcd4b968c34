package main

import (
	"errors"
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

// shellFences are fence languages of shell that are not "sh": a block
// fenced so would escape TestReadme, so the README may not use them.
var shellFences = map[string]bool{"bash": true, "shell": true, "console": true, "zsh": true, "shell-session": true}

// readmeShellBlocks returns every ```sh block of README.md, in order,
// and fails the test on a fence parseShellBlocks refuses.
func readmeShellBlocks(t *testing.T) []readmeBlock {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := parseShellBlocks(string(raw))
	if err != nil {
		t.Fatalf("README.md: %v", err)
	}
	return blocks
}

// parseShellBlocks returns every ```sh block of markdown, in order. It
// refuses a fence that could hide a shell block from TestReadme: one with
// no language, or a shell fenced other than as sh.
func parseShellBlocks(markdown string) ([]readmeBlock, error) {
	var (
		blocks  []readmeBlock
		errs    []error
		section string
		cur     *readmeBlock
		inOther bool // in a fenced block that is not sh (toml, json)
		opened  int  // the line of the open fence
	)
	for i, l := range strings.Split(markdown, "\n") {
		fence, isFence := strings.CutPrefix(strings.TrimSpace(l), "```")
		if isFence && cur == nil && !inOther {
			opened = i + 1
		}
		switch {
		case cur != nil && isFence:
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			cur.text += l + "\n"
		case inOther:
			inOther = !isFence
		case isFence && fence == "sh":
			cur = &readmeBlock{line: i + 1, section: section}
		case isFence && (fence == "" || shellFences[fence]):
			errs = append(errs, fmt.Errorf("line %d: a block fenced %q: fence shell as ```sh (TestReadme runs those) and anything else with its language", i+1, l))
			inOther = true
		case isFence:
			inOther = true
		case strings.HasPrefix(l, "## "):
			section = l
		}
	}
	if cur != nil || inOther {
		errs = append(errs, fmt.Errorf("line %d: an unterminated fenced block", opened))
	}
	return blocks, errors.Join(errs...)
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

// TestReadmeFences: TestReadme sees every shell block, so a README block
// fenced in a way it would not run (bash, console, no language) is an
// error, while sh, toml and json blocks parse, indented or not, each under
// its section.
func TestReadmeFences(t *testing.T) {
	good := "## A\n```sh\necho a\n```\n```toml\n[x]\n```\n## B\n  ```sh\n  echo b\n  ```\n```json\n{}\n```\n"
	blocks, err := parseShellBlocks(good)
	if err != nil || len(blocks) != 2 || blocks[0].first() != "echo a" || blocks[1].section != "## B" || blocks[1].line != 9 {
		t.Fatalf("parse: %v %+v", err, blocks)
	}
	for _, bad := range []string{
		"## A\n```bash\necho a\n```\n",
		"## A\n```console\n$ echo a\n```\n",
		"## A\n```\necho a\n```\n",
		"## A\n```sh\necho a\n",
	} {
		if _, err := parseShellBlocks(bad); err == nil {
			t.Errorf("parse accepts %q", bad)
		}
	}
}
