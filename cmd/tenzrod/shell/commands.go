package shell

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// argKind says what the first positional argument of a command completes to.
type argKind int

const (
	argNone argKind = iota
	argTopic
	argModel
	argMethod
	argCommand
)

type flagSpec struct {
	name  string // without dashes: "n" is given as -n or --n
	value string // placeholder of its value; "" for a boolean flag
	help  string
}

// command is one row of the command table. A command either names a JSON-RPC
// method (with optional params and render functions: the result is rendered
// as a table, or printed raw with --json) or has its own run function.
type command struct {
	name         string // space-separated words, e.g. "dht providers"
	args         string // positional arguments for the usage line
	summary      string
	detail       string
	flags        []flagSpec
	minArgs      int
	maxArgs      int // -1: unlimited
	complete     argKind
	noJSON       bool // the command prints no result, so takes no --json
	lenientFlags bool // unknown -words are positional arguments
	hidden       bool // left out of help and completion

	method string
	params func(inv *invocation) (any, error)
	render func(w io.Writer, result json.RawMessage, inv *invocation) error
	run    func(ctx context.Context, s *session, inv *invocation) error
}

func (c *command) flag(name string) *flagSpec {
	for i := range c.flags {
		if c.flags[i].name == name {
			return &c.flags[i]
		}
	}
	return nil
}

func (c *command) usage() string {
	parts := []string{c.name}
	if c.args != "" {
		parts = append(parts, c.args)
	}
	for _, f := range c.flags {
		if f.value == "" {
			parts = append(parts, "[-"+f.name+"]")
		} else {
			parts = append(parts, "[-"+f.name+" "+f.value+"]")
		}
	}
	if !c.noJSON {
		parts = append(parts, "[--json]")
	}
	return strings.Join(parts, " ")
}

type registry struct{ cmds []*command }

func (r *registry) byName(name string) *command {
	for _, c := range r.cmds {
		if c.name == name {
			return c
		}
	}
	return nil
}

// add registers an embedder's action against the node at api (a
// built-in command of the same name wins); every word after its name
// goes to it as given.
func (r *registry) add(a Action, api string) {
	run := a.Run
	c := &command{name: a.Name, args: a.Args, summary: a.Summary, detail: a.Detail, maxArgs: -1, noJSON: true, lenientFlags: true,
		run: func(ctx context.Context, s *session, inv *invocation) error {
			args := make([]string, len(inv.args))
			for i, t := range inv.args {
				args[i] = t.text
			}
			return run(ctx, api, args, s.out)
		}}
	r.cmds = append(r.cmds, c)
}

var errExit = errors.New("exit")

// commandTable is the shell's command set. A command backed by one RPC method
// and one table is one entry here.
func commandTable() *registry {
	return &registry{cmds: []*command{
		{name: "info", summary: "this node's identity, role, network and key backend",
			method: "tenzro_nodeInfo", render: decoded(renderInfo)},
		{name: "peers", summary: "connected libp2p peers",
			method: "tenzro_listPeers", render: decoded(renderPeers)},
		{name: "topics", summary: "gossip topics with peer counts and validation verdicts",
			method: "tenzro_listTopics", render: decoded(renderTopics)},
		{name: "tail", args: "TOPIC", minArgs: 1, maxArgs: 1, complete: argTopic,
			summary: "follow decoded gossip on a topic live (Ctrl-C stops)",
			detail: "TOPIC is a short name (heartbeat, announce, price-obs) or a full topic string.\n" +
				"Prints one line per message the node validated: time, verdict, topic, reason,\n" +
				"sender and a summary of the decoded message. --json prints each event as JSON.",
			flags: []flagSpec{{name: "n", value: "N", help: "stop after N events (for scripts)"}},
			run:   runTail},
		{name: "providers", summary: "providers this node knows: status, load, models",
			detail: "Hardware class and region are the providers' own claims. TEE is an attestation this\n" +
				"node verified (kind:measurement), the only providers quoted at tee.\n" +
				"Rate cards are integer micro-units per unit.",
			flags:  []flagSpec{{name: "v", help: "also list every model with engine, rate card and verification, and attestations"}},
			method: "tenzro_listProviders", render: decoded(renderProviders)},
		{name: "dht providers", args: "MODEL", minArgs: 1, maxArgs: 1, complete: argModel,
			summary: "look up providers of a catalog model ID in the DHT",
			detail:  "MODEL is the hex catalog model ID.",
			method:  "tenzro_findProviders", params: modelParams, render: decoded(renderDHTProviders)},
		{name: "quote", args: "MODEL", minArgs: 1, maxArgs: 1, complete: argModel,
			summary: "price a request at every provider of MODEL, cheapest first",
			detail:  "MODEL is a model name or hex catalog ID. Units default to 100 input and 100 output tokens.",
			flags: []flagSpec{{name: "in", value: "N", help: "input tokens"}, {name: "out", value: "N", help: "output tokens"},
				{name: "level", value: "L", help: "verification level: none | receipt | optimistic | tee"}},
			method: "tenzro_quoteInference", params: quoteParams, render: decoded(renderQuotes)},
		{name: "pricefeed", summary: "the price feed validators observed: unit price, latency, success, per provider and model",
			detail: "Every observed column comes from calls active validators routed or probed, on their own clocks;\n" +
				"an entry is attested once two validators observed it. Hardware class and region are the\n" +
				"providers' own claims. MODEL is a model name or hex catalog ID (prefix).",
			flags: []flagSpec{{name: "model", value: "MODEL", help: "only this model"},
				{name: "provider", value: "PEER", help: "only this provider (peer ID)"}},
			method: "tenzro_getPriceFeed", params: priceFeedParams, render: decoded(renderPriceFeed)},
		{name: "metrics", summary: "router metrics: requests, hedges, failovers, continuations, per provider",
			method: "tenzro_getRouterMetrics", render: decoded(renderMetrics)},
		{name: "account", args: "ACCOUNT", minArgs: 1, maxArgs: 1,
			summary: "a chain account's balance and next nonce",
			detail:  "ACCOUNT is the 64-hex-digit account ID (`tenzrod keys account new` prints it).",
			method:  "tenzro_getAccount", params: accountParams, render: decoded(renderAccount)},
		{name: "validators", summary: "the chain's validators with stake and voting power",
			method: "tenzro_listValidators", render: decoded(renderValidators)},
		{name: "standing", args: "MACHINE", minArgs: 1, maxArgs: 1,
			summary: "a provider's standing on chain and the inputs that made it",
			detail:  "MACHINE is the provider's hex machine ID. Standing is 0 without a live serving\nbond; else a bonded part plus an availability part from validators' hourly verdicts.",
			method:  "tenzro_getStanding", params: standingParams, render: decoded(renderStanding)},
		{name: "payments payer", args: "ACCOUNT [FROM] [TO]", minArgs: 1, maxArgs: 3,
			summary: "payment records settled for a payer (64-hex-digit account) and their total",
			detail:  paymentsDetail,
			method:  "tenzro_getPayments", params: paymentsParams("payer"), render: decoded(renderPayments)},
		{name: "payments provider", args: "MACHINE [FROM] [TO]", minArgs: 1, maxArgs: 3,
			summary: "payment records settled to a provider (hex machine ID) and their total",
			detail:  paymentsDetail,
			method:  "tenzro_getPayments", params: paymentsParams("provider"), render: decoded(renderPayments)},
		{name: "disputes", summary: "disputes on chain: accused provider, status, committee rounds, slashing",
			detail: "STATUS is drawing | voting | guilty | innocent | lapsed; FROM and TO bound the height\n" +
				"a dispute was opened at.",
			flags: []flagSpec{{name: "status", value: "STATUS", help: "only disputes in this status"},
				{name: "provider", value: "MACHINE", help: "only disputes of this machine (hex ID)"},
				{name: "from", value: "H", help: "opened at or after height H"}, {name: "to", value: "H", help: "opened at or before height H"}},
			method: "tenzro_listDisputes", params: disputesParams, render: decoded(renderDisputes)},
		{name: "dispute", args: "ID", minArgs: 1, maxArgs: 1,
			summary: "one dispute: subject, committee rounds with every member's vote, the verdict's payouts",
			method:  "tenzro_getDispute", params: disputeParams, render: decoded(renderDispute)},
		{name: "session", args: "ID", minArgs: 1, maxArgs: 1,
			summary: "a session this gateway holds: turns, primary, successor and its standby stream",
			detail:  "ID is a response's tenzro.session.id. The stream is the successor's standby\nstream escrow as the chain holds it (claimed, refunded).",
			method:  "tenzro_getSession", params: sessionParams, render: decoded(renderSession)},
		{name: "stream", args: "ID", minArgs: 1, maxArgs: 1,
			summary: "one stream escrow, open or closed: payer, payee, rate, deposit = claimed + refunded + balance",
			detail:  "ID is a session's standby stream_id (shell session ID shows it).",
			method:  "tenzro_getStream", params: streamParams, render: decoded(renderStream)},
		{name: "rpc", args: "METHOD [JSON-PARAMS]", minArgs: 1, maxArgs: -1, complete: argMethod,
			lenientFlags: true, summary: "call any JSON-RPC method and pretty-print its result",
			detail: "JSON-PARAMS is a JSON object or array, e.g.\n" +
				"  rpc tenzro_findProviders {\"model\":\"ab12…\"}",
			run: runRPC},
		{name: "help", args: "[COMMAND]", maxArgs: -1, noJSON: true, complete: argCommand,
			summary: "list commands, or show how to use one", run: runHelp},
		{name: "exit", noJSON: true, summary: "leave the shell (also quit, Ctrl-D)", run: runExit},
		{name: "quit", noJSON: true, hidden: true, run: runExit},
	}}
}

// runMethod is the run function of a command that names a method.
func runMethod(ctx context.Context, s *session, inv *invocation) error {
	c := inv.cmd
	var params any
	if c.params != nil {
		p, err := c.params(inv)
		if err != nil {
			return err
		}
		params = p
	}
	res, err := s.client.Call(ctx, c.method, params)
	if err != nil {
		return err
	}
	if inv.json || c.render == nil {
		return writeJSON(s.out, res, !inv.json)
	}
	if err := c.render(s.out, res, inv); err != nil {
		return fmt.Errorf("%s: %w (use --json to see the raw result)", c.method, err)
	}
	return nil
}

func writeJSON(w io.Writer, raw json.RawMessage, pretty bool) error {
	var buf strings.Builder
	var err error
	if pretty {
		err = indentJSON(&buf, raw)
	} else {
		err = compactJSON(&buf, raw)
	}
	if err != nil {
		return fmt.Errorf("result is not valid JSON: %w", err)
	}
	_, err = fmt.Fprintln(w, buf.String())
	return err
}

func modelParams(inv *invocation) (any, error) {
	model := strings.TrimPrefix(inv.arg(0), "0x")
	if !isHex(model) {
		return nil, fmt.Errorf("model %q: want a hex catalog model ID", inv.arg(0))
	}
	return map[string]string{"model": strings.ToLower(model)}, nil
}

func isHex(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
			return false
		}
	}
	return true
}

// runRPC calls an arbitrary method. The params are the raw text after the
// method name, so JSON need not be quoted for the shell's tokenizer.
func runRPC(ctx context.Context, s *session, inv *invocation) error {
	method := inv.arg(0)
	var params any
	if rest := inv.args[1:]; len(rest) > 0 {
		raw := strings.TrimSpace(inv.line[rest[0].start:rest[len(rest)-1].end])
		if !json.Valid([]byte(raw)) {
			texts := make([]string, len(rest))
			for i, t := range rest {
				texts[i] = t.text
			}
			raw = strings.Join(texts, " ")
		}
		if !json.Valid([]byte(raw)) {
			return fmt.Errorf("params %s: not valid JSON", snippet([]byte(raw)))
		}
		if raw[0] != '{' && raw[0] != '[' {
			return fmt.Errorf("params %s: JSON-RPC params must be an object or an array", snippet([]byte(raw)))
		}
		params = json.RawMessage(raw)
	}
	res, err := s.client.Call(ctx, method, params)
	if err != nil {
		return err
	}
	return writeJSON(s.out, res, !inv.json)
}

func runExit(context.Context, *session, *invocation) error { return errExit }

func runHelp(_ context.Context, s *session, inv *invocation) error {
	if len(inv.args) == 0 {
		tw := tabwriter.NewWriter(s.out, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "commands:")
		for _, c := range s.reg.cmds {
			if !c.hidden {
				fmt.Fprintf(tw, "  %s\t%s\n", strings.TrimSpace(c.name+" "+c.args), c.summary)
			}
		}
		fmt.Fprintln(tw, "every command that prints a result takes --json for the raw JSON result")
		return tw.Flush()
	}
	name := make([]string, len(inv.args))
	for i, a := range inv.args {
		name[i] = a.text
	}
	c := s.reg.byName(strings.Join(name, " "))
	if c == nil {
		if subs := s.reg.nextWords(name); len(subs) > 0 {
			for _, sub := range subs {
				if sc := s.reg.byName(strings.Join(append(name, sub), " ")); sc != nil {
					fmt.Fprintf(s.out, "%s\n    %s\n", sc.usage(), sc.summary)
				}
			}
			return nil
		}
		return fmt.Errorf("no command %q (type \"help\" for the list of commands)", strings.Join(name, " "))
	}
	fmt.Fprintf(s.out, "usage: %s\n", c.usage())
	if c.summary != "" {
		fmt.Fprintf(s.out, "\n%s\n", c.summary)
	}
	if c.detail != "" {
		fmt.Fprintf(s.out, "\n%s\n", c.detail)
	}
	if c.method != "" {
		fmt.Fprintf(s.out, "\nJSON-RPC method: %s\n", c.method)
	}
	if len(c.flags) > 0 || !c.noJSON {
		fmt.Fprintln(s.out, "\nflags:")
		tw := tabwriter.NewWriter(s.out, 0, 0, 2, ' ', 0)
		for _, f := range c.flags {
			fmt.Fprintf(tw, "  -%s\t%s\n", strings.TrimSpace(f.name+" "+f.value), f.help)
		}
		if !c.noJSON {
			fmt.Fprintf(tw, "  --json\tprint the raw JSON result instead of a table\n")
		}
		return tw.Flush()
	}
	return nil
}
