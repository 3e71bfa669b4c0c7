import fs from "node:fs";
import path from "node:path";
import {Command} from "commander";
import {isModelArchitectureName, makeModel, modelArchitectures} from "./makeModel.js";

// `npm run make-model -- --arch <name> --out <file>`: a tiny random-weight model of one architecture (see makeModel.ts).
const options = new Command()
    .requiredOption("--arch <name>", `one of ${Object.keys(modelArchitectures).join(", ")}`)
    .requiredOption("--out <file>", "where to write it (never inside the repository: models are not committed)")
    .option("--tokenizer-from <gguf>", "model whose tokenizer is carried over", process.env.CLEANROOM_TEST_MODEL ?? path.resolve("../shared/models/stories260K.gguf"))
    .option("--context <n>", "trained context", Number, 2048)
    .option("--seed <n>", "seed of the random weights", Number, 1)
    .option("--sliding-window <n>", "gemma3 and gpt-oss: the sliding window (at least --context: a window node-llama-cpp does not see)", Number, 32)
    .parse()
    .opts<{arch: string, out: string, tokenizerFrom: string, context: number, seed: number, slidingWindow: number}>();

if (!isModelArchitectureName(options.arch)) {
    process.stderr.write(`Unknown architecture "${options.arch}": one of ${Object.keys(modelArchitectures).join(", ")}.\n`);
    process.exit(2);
}
const parameters = makeModel(options.out, options.arch, {
    tokenizerFrom: options.tokenizerFrom, contextLength: options.context, seed: options.seed, slidingWindow: options.slidingWindow
});
const {description, memory} = modelArchitectures[options.arch];
process.stdout.write(`${options.out}: ${options.arch} (${description}; state: ${memory}), ${parameters} parameters, ${fs.statSync(options.out).size} bytes\n`);
