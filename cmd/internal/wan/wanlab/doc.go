// Command wanlab runs a devnet inside a netlab testbed for a person
// (scripts/wan): it builds the namespaces, starts every node in its own,
// prints how to reach the gateway, and on Ctrl-C stops every node and
// deletes every namespace it made.
package main
