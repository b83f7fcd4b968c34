package grammar

import "fmt"

// Function is a tool the model may call: its name and JSON-schema
// parameters (nil: any object).
type Function struct {
	Name       string
	Parameters []byte
}

// CompileToolCall compiles the grammar of one call to one of fns, as
// compact JSON: {"name":"<a declared name>","arguments":<valid under its
// parameters>}. It is what tool_choice "required" (all of fns) or a named
// function (fns of one) constrains the answer to.
func CompileToolCall(fns []Function) (*Grammar, error) {
	if len(fns) == 0 {
		return nil, fmt.Errorf("grammar: tool call: no functions")
	}
	c := &compiler{memo: map[string]int{}}
	call := c.b.rule()
	for i, fn := range fns {
		var args int
		if len(fn.Parameters) == 0 {
			args = c.anyObject()
		} else {
			v, err := decode(fn.Parameters)
			if err != nil {
				return nil, fmt.Errorf("grammar: tools[%d]: %w", i, err)
			}
			// References resolve within each function's own schema.
			c.root, c.refs = v, map[string]int{}
			if args, err = c.node(v, fmt.Sprintf("tools[%d].parameters", i), 0); err != nil {
				return nil, err
			}
		}
		c.b.alt(call, seq(lit(`{"name":`+encode(fn.Name)+`,"arguments":`), []part{ref(args)}, lit("}")))
	}
	g := c.b.build(call)
	if st := g.Start(); st.Dead() || st.MinBytes() >= inf {
		return nil, fmt.Errorf("grammar: tool call: no finite call matches")
	}
	return g, nil
}
