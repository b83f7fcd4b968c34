package receipt

import "github.com/tenzrod/tenzrod/receipts/terms"

// formatWire is a response format as the input commitment covers it.
type formatWire struct {
	Type   []byte `cbor:"1,keyasint"`
	Name   []byte `cbor:"2,keyasint,omitempty"`
	Schema []byte `cbor:"3,keyasint,omitempty"`
	Strict bool   `cbor:"4,keyasint,omitempty"`
}

// toolWire is a tool definition as the input commitment covers it.
type toolWire struct {
	Name        []byte `cbor:"1,keyasint"`
	Description []byte `cbor:"2,keyasint,omitempty"`
	Parameters  []byte `cbor:"3,keyasint,omitempty"`
	Strict      bool   `cbor:"4,keyasint,omitempty"`
}

// toolsWire is the tool part of a request: definitions and the choice.
type toolsWire struct {
	Tools      []toolWire `cbor:"1,keyasint,omitempty"`
	Choice     []byte     `cbor:"2,keyasint,omitempty"`
	Name       []byte     `cbor:"3,keyasint,omitempty"`
	NoParallel bool       `cbor:"4,keyasint,omitempty"`
}

// constraintWires returns the commitment's response-format and tool
// fields: nil for a plain request, whose commitment is then what it was
// before requests could carry them.
func constraintWires(s terms.Sampling) (*formatWire, *toolsWire) {
	var f *formatWire
	if s.Format != nil {
		f = &formatWire{Type: []byte(s.Format.Type), Name: bytesOrNil(s.Format.Name), Schema: s.Format.Schema, Strict: s.Format.Strict}
		if len(f.Schema) == 0 {
			f.Schema = nil
		}
	}
	if len(s.Tools) == 0 && s.ToolChoice == "" && s.ToolName == "" && !s.NoParallelToolCalls {
		return f, nil
	}
	t := &toolsWire{Choice: bytesOrNil(s.ToolChoice), Name: bytesOrNil(s.ToolName), NoParallel: s.NoParallelToolCalls}
	for _, tl := range s.Tools {
		p := []byte(tl.Parameters)
		if len(p) == 0 {
			p = nil
		}
		t.Tools = append(t.Tools, toolWire{Name: []byte(tl.Name), Description: bytesOrNil(tl.Description), Parameters: p, Strict: tl.Strict})
	}
	return f, t
}
