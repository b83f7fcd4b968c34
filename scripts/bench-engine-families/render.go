//go:build ignore

// render prints, one JSON line per case, what tenzrod's chat-template
// engine renders for the cases of inference/llm/testdata/templates/
// cases.json with a given template (part of scripts/bench-engine
// --families). Usage: go run render.go TEMPLATE CASES BOS EOS
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/tenzrod/tenzrod/inference/llm"
)

type tcase struct {
	Name string `json:"name"`
	llm.ChatInput
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "render:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) != 4 {
		return fmt.Errorf("usage: render TEMPLATE CASES BOS EOS")
	}
	src, err := os.ReadFile(args[0])
	if err != nil {
		return err
	}
	raw, err := os.ReadFile(args[1])
	if err != nil {
		return err
	}
	var cases []tcase
	if err := json.Unmarshal(raw, &cases); err != nil {
		return err
	}
	tmpl, err := llm.CompileChatTemplate(string(src))
	if err != nil {
		return err
	}
	enc := json.NewEncoder(os.Stdout)
	for _, c := range cases {
		out := map[string]string{"name": c.Name}
		if text, err := tmpl.Render(c.ChatInput, args[2], args[3]); err != nil {
			out["error"] = err.Error()
		} else {
			out["text"] = text
		}
		if err := enc.Encode(out); err != nil {
			return err
		}
	}
	return nil
}
