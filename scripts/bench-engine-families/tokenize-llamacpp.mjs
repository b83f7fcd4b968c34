// llama.cpp's side of the tokenizer report of scripts/bench-engine
// --families: loads a GGUF vocabulary-only with node-llama-cpp and prints
// the token IDs of each corpus string (special-token text parsed, no BOS),
// one JSON line each. Usage: node tokenize-llamacpp.mjs GGUF CORPUS_JSON
import fs from "node:fs";
import {getLlama} from "node-llama-cpp";

const [modelPath, corpusPath] = process.argv.slice(2);
const llama = await getLlama({gpu: false, build: "never", logLevel: "error"});
const model = await llama.loadModel({modelPath, vocabOnly: true});
for (const s of JSON.parse(fs.readFileSync(corpusPath, "utf8"))) {
    console.log(JSON.stringify(Array.from(model.tokenize(s, true))));
}
