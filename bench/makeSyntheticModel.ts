import path from "node:path";
import {Command} from "commander";
import {defaultSyntheticModelPath, synthetic86m, writeSyntheticModel} from "./syntheticModel.js";

// A model of realistic per-token cost with the test model's tokenizer. Defaults: about 86M
// parameters in F16, like the model the engine issue measured raw llama.cpp on.
const options = new Command()
    .option("--out <file>", "where to write it", defaultSyntheticModelPath)
    .option("--tokenizer-from <gguf>", "model whose tokenizer is carried over", process.env.CLEANROOM_TEST_MODEL ?? path.resolve("../shared/models/stories260K.gguf"))
    .option("--embedding <n>", "embedding width", Number, synthetic86m.embedding)
    .option("--layers <n>", "blocks", Number, synthetic86m.layers)
    .option("--heads <n>", "attention heads", Number, synthetic86m.heads)
    .option("--kv-heads <n>", "KV heads", Number, synthetic86m.kvHeads)
    .option("--feed-forward <n>", "feed-forward width", Number, synthetic86m.feedForward)
    .option("--context <n>", "trained context", Number, synthetic86m.contextLength)
    .parse()
    .opts<{out: string, tokenizerFrom: string, embedding: number, layers: number, heads: number, kvHeads: number, feedForward: number, context: number}>();

const parameters = writeSyntheticModel(options.out, {
    tokenizerFrom: options.tokenizerFrom, embedding: options.embedding, layers: options.layers, heads: options.heads,
    kvHeads: options.kvHeads, feedForward: options.feedForward, contextLength: options.context
});
process.stdout.write(`${options.out}: ${(parameters / 1e6).toFixed(1)}M parameters\n`);
