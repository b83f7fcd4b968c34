// The reference side of scripts/bench-engine --families: renders the cases
// with @huggingface/jinja, one JSON line per case (as render.go does).
// Usage: node render.mjs TEMPLATE CASES BOS EOS
import fs from "node:fs";
import {Template} from "@huggingface/jinja";

const [tmplPath, casesPath, bos, eos] = process.argv.slice(2);
const tmpl = new Template(fs.readFileSync(tmplPath, "utf8"));
for (const c of JSON.parse(fs.readFileSync(casesPath, "utf8"))) {
    const messages = c.messages.map((m) => {
        const out = {role: m.role, content: m.content};
        if (m.tool_call_id) out.tool_call_id = m.tool_call_id;
        if (m.name) out.name = m.name;
        if (m.tool_calls) out.tool_calls = m.tool_calls.map((tc) => ({id: tc.id, type: "function", function: {name: tc.name, arguments: tc.arguments}}));
        return out;
    });
    const ctx = {messages, add_generation_prompt: c.add_generation_prompt, bos_token: bos, eos_token: eos, ...(c.extra || {})};
    if (c.tools) ctx.tools = c.tools;
    try {
        console.log(JSON.stringify({name: c.name, text: tmpl.render(ctx)}));
    } catch (e) {
        console.log(JSON.stringify({name: c.name, error: String(e.message || e)}));
    }
}
