package devnet

import (
	"fmt"
	"io"
	"strings"

	"github.com/tenzrod/tenzrod/node"
)

// minJudges is how many validators should hold each served model: a
// committee is drawn from the holders other than the accused's operator,
// and three leave a 2/3 verdict possible with one of them down.
const minJudges = 3

// printJudges says, before the nodes start, which models each validator
// holds and so can judge disputes over, and warns of a model fewer than
// minJudges validators hold (a dispute over it may find no committee and
// is then refused by the chain, bond untouched).
func printJudges(w io.Writer, plans []nodePlan) error {
	held := map[string]int{}
	var order []string
	for _, p := range plans {
		if p.entry.Role != string(node.RoleValidator) {
			continue
		}
		cfg, err := node.Load(p.entry.Home)
		if err != nil {
			return fmt.Errorf("devnet: %s: %w", p.entry.Name, err)
		}
		var names []string
		for _, m := range cfg.Validator.Models {
			names = append(names, m.Name)
			if held[m.Name] == 0 {
				order = append(order, m.Name)
			}
			held[m.Name]++
		}
		if len(names) == 0 {
			names = []string{"nothing (holds no model's weights)"}
		}
		fmt.Fprintf(w, "devnet: %s judges disputes over %s\n", p.entry.Name, strings.Join(names, ", "))
	}
	for _, m := range order {
		if held[m] < minJudges {
			fmt.Fprintf(w, "devnet: only %d validator(s) hold %s: its dispute committees have fewer than %d members\n", held[m], m, minJudges)
		}
	}
	return nil
}
