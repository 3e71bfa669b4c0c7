// One chat turn in a plain node-llama-cpp script, the yardstick of `cleanroom chat --prompt` as a
// whole process (bench/processTimes.ts): load the model, one context, one greedy reply of at most
// N tokens through LlamaChatSession, print it (JSON: reply, tokens generated), exit. Plain JavaScript, run by plain `node`.
//
//   node bench/plainTurn.mjs <model.gguf> <prompt> <maxTokens> <threads> <contextSize>
import {getLlama, LlamaChatSession, LlamaLogLevel} from "node-llama-cpp";

const [modelPath, prompt, maxTokens, threads, contextSize] = process.argv.slice(2);
const llama = await getLlama({gpu: false, build: "never", logLevel: LlamaLogLevel.error});
const model = await llama.loadModel({modelPath, gpuLayers: 0});
const context = await model.createContext({contextSize: Number(contextSize), threads: Number(threads)});
const session = new LlamaChatSession({contextSequence: context.getSequence()});
let tokens = 0;
const reply = await session.prompt(prompt, {maxTokens: Number(maxTokens), temperature: 0, onToken: (chunk) => void (tokens += chunk.length)});
process.stdout.write(JSON.stringify({reply, tokens}) + "\n");
await context.dispose();
await model.dispose();
