// One chat turn in a plain node-llama-cpp script, the yardstick of `cleanroom chat --prompt` as a
// whole process (bench/processTimes.ts): load the model, one context, one greedy reply of at most
// N tokens through LlamaChatSession, print it, exit. Plain JavaScript, run by plain `node`.
// It loads the llama.cpp build Cleanroom's turn ran on and creates its context with the same
// options (bench/processTimes.ts passes what Cleanroom reported), so that the two differ only by
// what Cleanroom adds; it prints which build it ran (`llamaBuild`, the facts describeLlamaBuild reads).
//
//   node bench/plainTurn.mjs --model <gguf> --prompt <text> --system <text> --max-tokens <n> --threads <n>
//       --context-size <n> [--gpu false|metal|cuda|vulkan] [--gpu-layers <n>] [--cmake-options <json>]
import {parseArgs} from "node:util";
import {getLlama, LlamaChatSession, LlamaLogLevel} from "node-llama-cpp";

const {values: args} = parseArgs({options: {
    "model": {type: "string"}, "prompt": {type: "string"}, "system": {type: "string"}, "max-tokens": {type: "string"},
    "threads": {type: "string"}, "context-size": {type: "string"},
    "gpu": {type: "string", default: "false"}, "gpu-layers": {type: "string", default: "0"}, "cmake-options": {type: "string", default: "{}"}
}});
for (const required of ["model", "prompt", "system", "max-tokens", "threads", "context-size"])
    if (args[required] == null)
        throw new Error(`plainTurn.mjs needs --${required}`);
if (!["false", "metal", "cuda", "vulkan"].includes(args.gpu))
    throw new Error(`--gpu must be false, metal, cuda or vulkan, not "${args.gpu}"`);

const contextSize = Number(args["context-size"]);
const llama = await getLlama({
    gpu: args.gpu === "false" ? false : args.gpu, build: "never", cmakeOptions: JSON.parse(args["cmake-options"]), logLevel: LlamaLogLevel.error
});
const model = await llama.loadModel({modelPath: args.model, gpuLayers: Number(args["gpu-layers"])});
// Cleanroom's context options (LocalEngine): one sequence, batch of at most 512, a full sliding-window cache.
const context = await model.createContext({contextSize, threads: Number(args.threads), sequences: 1, batchSize: Math.min(512, contextSize), swaFullCache: true});
const session = new LlamaChatSession({contextSequence: context.getSequence(), systemPrompt: args.system});
let tokens = 0;
let promptTokens = null; // what was in the context when the first token came: the prompt, as Cleanroom's `tokens.prompt`
const reply = await session.prompt(args.prompt, {maxTokens: Number(args["max-tokens"]), temperature: 0, onToken: (chunk) => {
    promptTokens ??= session.sequence.contextTokens.length;
    tokens += chunk.length;
}});
const llamaBuild = {buildType: llama.buildType, release: llama.llamaCppRelease.release, gpu: llama.gpu, openmp: llama.cmakeOptions.GGML_OPENMP ?? null};
process.stdout.write(JSON.stringify({reply, tokens, promptTokens, gpuLayers: model.gpuLayers, llamaBuild}) + "\n");
await context.dispose();
await model.dispose();
