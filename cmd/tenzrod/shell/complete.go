package shell

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"
)

const (
	// completionTimeout bounds a fetch of topic names or model IDs for
	// completion; completion never waits longer on the node.
	completionTimeout = 2 * time.Second
	// completionTTL is how long fetched names are reused.
	completionTTL = 15 * time.Second
)

// topicShortNames are the topics every node has, completed even when the
// node cannot be asked.
var topicShortNames = []string{"heartbeat", "announce", "price-obs"}

// knownMethods are the node's JSON-RPC methods, completed after "rpc".
var knownMethods = []string{
	"tenzro_nodeInfo", "tenzro_listPeers", "tenzro_listTopics", "tenzro_tailGossip",
	"tenzro_listProviders", "tenzro_findProviders",
	"tenzro_quoteInference", "tenzro_getRouterMetrics", "tenzro_getReceipt",
	"tenzro_verifyReceipt", "tenzro_getPriceFeed", "tenzro_getStanding",
	"tenzro_getAccount", "tenzro_listValidators", "tenzro_getParams", "tenzro_listModelNames", "tenzro_listEscrows",
	"tenzro_sendTx", "tenzro_getTx", "tenzro_getEvidencePack", "tenzro_getPayments",
	"tenzro_listRecentRequests", "tenzro_getLatencies", "tenzro_rpcMethods",
}

type cachedNames struct {
	names []string
	at    time.Time
}

// completer implements readline.AutoCompleter over the command table.
type completer struct {
	s     *session
	mu    sync.Mutex
	cache map[argKind]cachedNames
	now   func() time.Time
}

func newCompleter(s *session) *completer {
	return &completer{s: s, cache: map[argKind]cachedNames{}, now: time.Now}
}

// Do returns the completions of the word before pos, as the suffixes to add
// to it, and the length of that word.
func (c *completer) Do(line []rune, pos int) ([][]rune, int) {
	text := string(line[:pos])
	words := strings.Fields(text)
	partial := ""
	if len(words) > 0 && len(text) > 0 && !unicode.IsSpace(line[pos-1]) {
		partial, words = words[len(words)-1], words[:len(words)-1]
	}
	var out [][]rune
	for _, cand := range c.candidates(words, partial) {
		if strings.HasPrefix(cand, partial) {
			out = append(out, []rune(cand[len(partial):]+" "))
		}
	}
	return out, len([]rune(partial))
}

// candidates lists every word that may stand where partial is typed.
func (c *completer) candidates(words []string, partial string) []string {
	reg := c.s.reg
	cmd, n := c.commandOf(words)
	if cmd == nil {
		return reg.nextWords(words)
	}
	if strings.HasPrefix(partial, "-") {
		var flags []string
		for _, f := range cmd.flags {
			flags = append(flags, "-"+f.name)
		}
		if !cmd.noJSON {
			flags = append(flags, "--json")
		}
		return flags
	}
	args := words[n:]
	if cmd.complete == argCommand {
		return reg.nextWords(args)
	}
	positional := 0
	for i := 0; i < len(args); i++ {
		if f := cmd.flag(strings.TrimLeft(args[i], "-")); strings.HasPrefix(args[i], "-") && f != nil && f.value != "" {
			i++
		} else if !strings.HasPrefix(args[i], "-") {
			positional++
		}
	}
	if positional == 0 {
		return c.values(cmd.complete)
	}
	return nil
}

// commandOf finds the command named by the leading words, if all its words
// have been typed.
func (c *completer) commandOf(words []string) (*command, int) {
	var best *command
	bestN := 0
	for _, cmd := range c.s.reg.cmds {
		name := strings.Fields(cmd.name)
		if len(name) > len(words) || len(name) <= bestN {
			continue
		}
		if strings.Join(words[:len(name)], " ") == cmd.name {
			best, bestN = cmd, len(name)
		}
	}
	return best, bestN
}

// values lists the known values of an argument kind, asking the node for
// topics and model IDs (cached for completionTTL).
func (c *completer) values(kind argKind) []string {
	switch kind {
	case argMethod:
		return knownMethods
	case argTopic, argModel:
	default:
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.cache[kind]; ok && c.now().Sub(e.at) < completionTTL {
		return e.names
	}
	ctx, cancel := context.WithTimeout(context.Background(), completionTimeout)
	defer cancel()
	var names []string
	if kind == argTopic {
		names = append(names, topicShortNames...)
		names = append(names, c.fetchTopics(ctx)...)
	} else {
		names = c.fetchModels(ctx)
	}
	c.cache[kind] = cachedNames{names: names, at: c.now()}
	return names
}

func (c *completer) fetchTopics(ctx context.Context) []string {
	raw, err := c.s.client.Call(ctx, "tenzro_listTopics", nil)
	var topics []topicInfo
	if err != nil || json.Unmarshal(raw, &topics) != nil {
		return nil
	}
	var out []string
	for _, t := range topics {
		out = append(out, t.Topic)
	}
	sort.Strings(out)
	return out
}

func (c *completer) fetchModels(ctx context.Context) []string {
	raw, err := c.s.client.Call(ctx, "tenzro_listProviders", nil)
	var provs []providerInfo
	if err != nil || json.Unmarshal(raw, &provs) != nil {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for _, p := range provs {
		for _, m := range p.Models {
			if m.ModelID != "" && !seen[m.ModelID] {
				seen[m.ModelID] = true
				out = append(out, m.ModelID)
			}
		}
	}
	sort.Strings(out)
	return out
}
