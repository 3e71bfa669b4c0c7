import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import * as z from "zod";
import {englishProse} from "./englishProse.js";
import {repoRoot} from "./testModel.js";

/** The tokenizers llama.cpp ships as vocabulary-only GGUFs, in the source that scripts/build-llama-cpp.sh fetches. */
export function vocabularyFiles(): {dir: string, files: string[]} {
    const dir = path.join(process.env.CLEANROOM_LLAMA_CPP_DIR ?? path.join(os.homedir(), ".cache", "cleanroom", "llama.cpp"), "src", "models");
    return {dir, files: fs.existsSync(dir) ? fs.readdirSync(dir).filter((file) => /^ggml-vocab-.+\.gguf$/.test(file)).sort() : []};
}

/** What the estimate is calibrated on: English prose, and this project's own source code. */
export function calibrationCorpora() {
    return {
        english: englishProse(),
        code: fs.readdirSync(path.join(repoRoot, "src"), {recursive: true}).map(String).filter((file) => file.endsWith(".ts")).sort()
            .map((file) => fs.readFileSync(path.join(repoRoot, "src", file), "utf8")).join("\n")
    };
}

export const corpusDigest = (text: string) => crypto.createHash("sha256").update(text).digest("hex");

/**
 * Each vocabulary's true token count of each corpus, as test/setup/countVocabularyTokens.ts writes
 * it (a vocabulary that does not load is left out); `corpora` names the texts counted by digest.
 */
export const VocabularyTokenCountsSchema = z.union([
    z.strictObject({
        corpora: z.strictObject({english: z.string(), code: z.string()}),
        vocabularies: z.array(z.string()),
        counts: z.array(z.strictObject({file: z.string(), english: z.number().int().positive(), code: z.number().int().positive()}))
    }),
    z.strictObject({error: z.string()})
]);
export type VocabularyTokenCounts = z.infer<typeof VocabularyTokenCountsSchema>;
