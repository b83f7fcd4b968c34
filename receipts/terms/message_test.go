package terms

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/tenzrod/tenzrod/receipts/cborx"
)

func TestParseMessageForms(t *testing.T) {
	cases := []struct {
		in   string
		want Message
	}{
		{`{"role":"user","content":"hi"}`, Message{Role: "user", Content: "hi"}},
		{`{"role":"user","content":[{"type":"text","text":"h"},{"type":"text","text":"i"}]}`,
			Message{Role: "user", Parts: []ContentPart{{Type: PartText, Text: "h"}, {Type: PartText, Text: "i"}}}},
		{`{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,AA","detail":"auto"}}]}`,
			Message{Role: "user", Parts: []ContentPart{{Type: PartImageURL, URL: "data:image/png;base64,AA", Detail: "auto"}}}},
		{`{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"AA","format":"wav"}}],"name":"ann"}`,
			Message{Role: "user", Name: "ann", Parts: []ContentPart{{Type: PartInputAudio, Data: "AA", Format: "wav"}}}},
		{`{"role":"assistant","content":null,"refusal":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}`,
			Message{Role: "assistant", ToolCalls: []ToolCall{{ID: "c1", Name: "f", Arguments: "{}"}}}},
		{`{"role":"tool","tool_call_id":"c1","content":"42"}`, Message{Role: "tool", ToolCallID: "c1", Content: "42"}},
	}
	for _, c := range cases {
		got, err := ParseMessage([]byte(c.in))
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %+v, %v; want %+v", c.in, got, err, c.want)
			continue
		}
		// OpenAI's shape round-trips.
		out, err := json.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseMessage(out)
		if err != nil || !reflect.DeepEqual(back, got) {
			t.Errorf("%s re-encodes as %s, which reads %+v, %v", c.in, out, back, err)
		}
	}
}

// TestParseMessageNamesTheField: whatever is refused is named by its path
// in the message, never dropped.
func TestParseMessageNamesTheField(t *testing.T) {
	for _, c := range []struct{ in, field string }{
		{`{"role":"robot","content":"x"}`, "role"},
		{`{"role":"user","content":"x","temperature":1}`, "temperature"},
		{`{"role":"assistant","content":"x","refusal":"no"}`, "refusal"},
		{`{"role":"user","content":7}`, "content"},
		{`{"role":"user","content":[]}`, "content"},
		{`{"role":"user","content":[{"type":"text","text":"a"},{"type":"video","video":{}}]}`, "content[1]"},
		{`{"role":"user","content":[{"type":"text","text":"a"},{"type":"video"}]}`, "content[1].type"},
		{`{"role":"user","content":[{"type":"text"}]}`, "content[0].type"},
		{`{"role":"user","content":[{"type":"text","text":"a","image_url":{"url":"u"}}]}`, "content[0].type"},
		{`{"role":"user","content":[{"type":"image_url","image_url":{"url":""}}]}`, "content[0].image_url.url"},
		{`{"role":"user","content":[{"type":"image_url","image_url":{"url":"u","detail":"max"}}]}`, "content[0].image_url.detail"},
		{`{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"AA"}}]}`, "content[0].input_audio"},
		{`{"role":"tool","content":"x"}`, "tool_call_id"},
		{`{"role":"user","content":"x","tool_call_id":"c"}`, "tool_call_id"},
		{`{"role":"user","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":""}}]}`, "tool_calls"},
		{`{"role":"assistant","tool_calls":[{"id":"c","type":"custom","function":{"name":"f","arguments":""}}]}`, "tool_calls[0].type"},
		{`{"role":"assistant","tool_calls":[{"id":"","type":"function","function":{"name":"f","arguments":""}}]}`, "tool_calls[0].id"},
		{`{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"","arguments":""}}]}`, "tool_calls[0].function.name"},
		{`{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"","strict":true}}]}`, "tool_calls[0]"},
		{`{"role":"assistant","tool_calls":{}}`, "tool_calls"},
		{`[]`, "message"},
	} {
		_, err := ParseMessage([]byte(c.in))
		if err == nil || FieldOf(err) != c.field {
			t.Errorf("%s: error %v names %q, want %q", c.in, err, FieldOf(err), c.field)
		}
	}
}

// TestMessageCBOR: a plain message travels as it did before parts and
// tool calls existed; the new fields travel under their own keys and
// decode back; a decoder without them refuses them rather than dropping
// them.
func TestMessageCBOR(t *testing.T) {
	type oldMessage struct{ Role, Content string }
	plain, err := cborx.Marshal(Message{Role: "user", Content: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	old, err := cborx.Marshal(oldMessage{Role: "user", Content: "hi"})
	if err != nil || !bytes.Equal(plain, old) {
		t.Fatalf("a plain message encodes as %x, was %x (%v)", plain, old, err)
	}
	m := Message{Role: "assistant", Name: "n", ToolCalls: []ToolCall{{ID: "c", Name: "f", Arguments: "{}"}}}
	u := Message{Role: "user", Parts: []ContentPart{{Type: PartText, Text: "a"}, {Type: PartImageURL, URL: "u"}}}
	for _, v := range []Message{m, u} {
		enc, err := cborx.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var back Message
		if err := cborx.UnmarshalCanonical(enc, len(enc), &back); err != nil || !reflect.DeepEqual(back, v) {
			t.Fatalf("round trip %+v: %+v %v", v, back, err)
		}
		var o oldMessage
		if err := cborx.Unmarshal(enc, len(enc), &o); err == nil {
			t.Fatalf("a decoder without the new fields accepted %+v", v)
		}
	}
}

// FuzzParseMessage: whatever parses is well formed, and its OpenAI JSON
// reads back as the same message (one value per request, so one digest).
func FuzzParseMessage(f *testing.F) {
	for _, s := range []string{
		`{"role":"user","content":"hi"}`,
		`{"role":"user","content":[{"type":"text","text":"h"},{"type":"image_url","image_url":{"url":"u","detail":"low"}}]}`,
		`{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"AA","format":"wav"}}]}`,
		`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]}`,
		`{"role":"tool","tool_call_id":"c1","content":"42","name":"f"}`,
		`{"role":"user","content":[]}`, `{"role":"user","content":[{"type":"text"}]}`, `null`, `{`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		m, err := ParseMessage(in)
		if err != nil {
			return
		}
		if err := m.Check(); err != nil {
			t.Fatalf("%s parsed to %+v, which fails its check: %v", in, m, err)
		}
		out, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseMessage(out)
		if err != nil || !reflect.DeepEqual(back, m) {
			t.Fatalf("%s parsed to %+v; its JSON %s reads %+v, %v", in, m, out, back, err)
		}
	})
}

// FuzzMessageCBOR: whatever decodes canonically as a Message re-encodes
// to the same bytes.
func FuzzMessageCBOR(f *testing.F) {
	for _, v := range []Message{
		{Role: "user", Content: "hi"},
		{Role: "user", Parts: []ContentPart{{Type: PartText, Text: "a"}, {Type: PartInputAudio, Data: "AA", Format: "wav"}}},
		{Role: "assistant", ToolCalls: []ToolCall{{ID: "c", Name: "f", Arguments: "{}"}}},
		{Role: "tool", ToolCallID: "c", Content: "1", Name: "f"},
	} {
		b, err := cborx.Marshal(v)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var m Message
		if err := cborx.UnmarshalCanonical(in, 1<<12, &m); err != nil {
			return
		}
		out, err := cborx.Marshal(m)
		if err != nil || !bytes.Equal(out, in) {
			t.Fatalf("%+v re-encodes to %x, was %x (%v)", m, out, in, err)
		}
	})
}

// TestCheckRefusesTwoEncodings: a message built in code, or decoded from
// CBOR, that could be written two ways, or says what its role cannot, is
// refused, naming the field.
func TestCheckRefusesTwoEncodings(t *testing.T) {
	text := []ContentPart{{Type: PartText, Text: "a"}}
	call := []ToolCall{{ID: "c", Name: "f"}}
	for _, c := range []struct {
		m     Message
		field string
	}{
		{Message{Role: "user", Content: "a", Parts: text}, "content"},
		{Message{Role: "user", Parts: []ContentPart{}}, "content"},
		{Message{Role: "user", Parts: []ContentPart{{Type: PartText, Text: "a", URL: "u"}}}, "content[0].type"},
		{Message{Role: "user", Parts: []ContentPart{{Type: PartImageURL, URL: "u", Format: "wav"}}}, "content[0].type"},
		{Message{Role: "user", Parts: []ContentPart{{Type: PartInputAudio, Data: "AA", Format: "wav", Detail: "low"}}}, "content[0].type"},
		{Message{Role: "user", Parts: make([]ContentPart, MaxParts+1)}, "content"},
		{Message{Role: "user", ToolCalls: call}, "tool_calls"},
		{Message{Role: "assistant", ToolCalls: make([]ToolCall, MaxToolCalls+1)}, "tool_calls"},
		{Message{Role: "assistant", ToolCalls: []ToolCall{{ID: "c", Name: "f", Arguments: "\xff"}}}, "tool_calls[0].function.arguments"},
		{Message{Role: "user", Content: "\xc3"}, "content"},
		{Message{Role: "user", Content: "a", Name: string(make([]byte, 300))}, "name"},
		{Message{Role: "assistant", ToolCallID: "c"}, "tool_call_id"},
	} {
		if err := c.m.Check(); FieldOf(err) != c.field {
			t.Errorf("%+v: %v, want an error naming %q", c.m, err, c.field)
		}
	}
	ok := Message{Role: "assistant", Name: "a", ToolCalls: call}
	if err := ok.Check(); err != nil {
		t.Fatalf("an assistant turn that only calls a tool: %v", err)
	}
}
