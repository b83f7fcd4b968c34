// Package shell implements `tenzrod shell`, the debug shell of a tenzrod node.
//
// The shell is a client of exactly one surface: the node's JSON-RPC 2.0 API at
// POST {api}/rpc. It runs either interactively (line editing, a history file,
// tab completion of command names and, where the node can tell, of topic
// names, model IDs and RPC method names) or one-shot for scripts (Run with a
// command: the command's output is printed and its error returned, so the
// caller exits non-zero).
//
// Commands are rows of a table (see commands.go): a command that maps one RPC
// method to one table is a single entry naming the method, how its parameters
// are built and how its result is rendered. Every command that prints a result
// accepts --json, which prints the raw JSON result instead of a table.
//
// Commands:
//
//	info                  tenzro_nodeInfo
//	peers                 tenzro_listPeers
//	topics                tenzro_listTopics
//	tail TOPIC [-n N]     tenzro_tailGossip (long poll)
//	providers [-v]        tenzro_listProviders
//	dht providers MODEL   tenzro_findProviders
//	rpc METHOD [PARAMS]   any method, raw
//	help [COMMAND]
//	exit | quit
package shell
