// llama.cpp side of scripts/bench-engine (node-llama-cpp, CPU build):
// prefill of the given token IDs (fastest of reps), greedy decoding after a
// prompt, as one JSON line in enginebench's format.
// Usage: node bench-engine.mjs MODEL THREADS PREFILL_JSON PROMPT_JSON DECODE REPS
import {getLlama} from "node-llama-cpp";

const [modelPath, threadsArg, prefillJSON, promptJSON, decodeArg, repsArg] = process.argv.slice(2);
const threads = Number(threadsArg), decode = Number(decodeArg), reps = Number(repsArg);
const prefill = JSON.parse(prefillJSON), prompt = JSON.parse(promptJSON);

const llama = await getLlama({gpu: false, build: "never", maxThreads: threads, logLevel: "error"});
const model = await llama.loadModel({modelPath, gpuLayers: 0});
const context = await model.createContext({
    contextSize: Math.max(prefill.length, prompt.length + decode) + 16,
    batchSize: 512, threads: {ideal: threads, min: threads}, sequences: 1,
});
const seq = context.getSequence();

let best = Infinity;
for (let i = 0; i < reps; i++) {
    await seq.clearHistory();
    const t0 = performance.now();
    await seq.evaluateWithoutGeneratingNewTokens(prefill);
    best = Math.min(best, performance.now() - t0);
}
await seq.clearHistory();

const greedy = [];
let first = 0;
for await (const tok of seq.evaluate(prompt, {temperature: 0})) {
    if (greedy.length === 0) first = performance.now();
    greedy.push(tok);
    if (greedy.length >= decode) break;
}
const el = performance.now() - first;
console.log(JSON.stringify({
    engine: "llama.cpp", kernels: "ggml-cpu",
    prefill_tokens: prefill.length, prefill_tok_s: prefill.length / (best / 1000),
    decode_tokens: decode - 1, decode_tok_s: (decode - 1) / (el / 1000),
    greedy,
}));
await context.dispose();
await model.dispose();
await llama.dispose();
