import fs from "node:fs";
import path from "node:path";
import {makeSyntheticLlama, type SyntheticLlamaOptions} from "../tools/gguf/makeSyntheticLlama.js";

/** About 86M parameters in F16, like the model the engine issue measured raw llama.cpp on. */
export const synthetic86m = {embedding: 768, layers: 12, heads: 12, kvHeads: 12, feedForward: 2048, contextLength: 2048} as const;
export const defaultSyntheticModelPath = path.resolve("bench-results/synthetic-86m.gguf");

/** Writes the synthetic model (creating its folder) and returns its parameter count. */
export function writeSyntheticModel(outPath: string, options: SyntheticLlamaOptions) {
    fs.mkdirSync(path.dirname(outPath), {recursive: true});
    return makeSyntheticLlama(outPath, options);
}

/** The default synthetic model, written first if it is not there yet. */
export function ensureSyntheticModel(tokenizerFrom: string, outPath = defaultSyntheticModelPath) {
    if (!fs.existsSync(outPath))
        writeSyntheticModel(outPath, {tokenizerFrom, ...synthetic86m});
    return outPath;
}
