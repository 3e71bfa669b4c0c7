import path from "node:path";
import {makeSyntheticBert, type SyntheticBertOptions} from "../../tools/gguf/makeSyntheticBert.js";
import {tempDir} from "./tempCore.js";

/**
 * Writes the tiny synthetic BERT embedding model (`tools/gguf/makeSyntheticBert.ts`) into a fresh
 * temp folder of this test and returns its path: made at run time, never committed. Its words of a
 * synonym group ("car", "automobile", "vehicle", "sedan"; see `defaultSynonymGroups`) share one
 * direction; every other word embeds to zero.
 */
export function writeSyntheticBert(options: SyntheticBertOptions = {}): string {
    const modelPath = path.join(tempDir("synthetic-bert"), "cleanroom-test-bert.gguf");
    makeSyntheticBert(modelPath, options);
    return modelPath;
}
