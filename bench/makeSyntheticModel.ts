import path from "node:path";
import {Command} from "commander";
import {makeSyntheticLlama} from "../src/core/node/gguf/makeSyntheticLlama.js";

// A model of realistic per-token cost with the test model's tokenizer. Defaults: about 86M
// parameters in F16, like the model the engine issue measured raw llama.cpp on.
const options = new Command()
    .option("--out <file>", "where to write it", path.resolve("bench-results/synthetic-86m.gguf"))
    .option("--tokenizer-from <gguf>", "model whose tokenizer is carried over", process.env.CLEANROOM_TEST_MODEL ?? path.resolve("../shared/models/stories260K.gguf"))
    .option("--embedding <n>", "embedding width", Number, 768)
    .option("--layers <n>", "blocks", Number, 12)
    .option("--heads <n>", "attention heads", Number, 12)
    .option("--kv-heads <n>", "KV heads", Number, 12)
    .option("--feed-forward <n>", "feed-forward width", Number, 2048)
    .option("--context <n>", "trained context", Number, 2048)
    .parse()
    .opts<{out: string, tokenizerFrom: string, embedding: number, layers: number, heads: number, kvHeads: number, feedForward: number, context: number}>();

const parameters = makeSyntheticLlama(options.out, {
    tokenizerFrom: options.tokenizerFrom, embedding: options.embedding, layers: options.layers, heads: options.heads,
    kvHeads: options.kvHeads, feedForward: options.feedForward, contextLength: options.context
});
process.stdout.write(`${options.out}: ${(parameters / 1e6).toFixed(1)}M parameters\n`);
