import {execFileSync} from "node:child_process";
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

/**
 * The commit whose TypeScript files under `src` are the code corpus: the source as it was when the estimate was
 * calibrated (8d3857d, Baichuan's undercount on code measured at 0.80). The live `src/` grows with
 * every change, and with it Baichuan's ratio drifted (0.85 by e6afeba): a frozen corpus keeps the
 * calibration a claim about the estimate and the tokenizers, not about today's source.
 */
export const codeCorpusCommit = "8d3857d";

/** What the estimate is calibrated on: English prose, and this project's own source code as of `codeCorpusCommit`. */
export function calibrationCorpora() {
    return {english: englishProse(), code: sourceCodeAt(codeCorpusCommit)};
}

/** The TypeScript files under `src` of `commit`, in path order, read from the clone's history (one `git cat-file --batch`). */
function sourceCodeAt(commit: string): string {
    const git = (args: string[], input?: string) => execFileSync("git", ["-C", repoRoot, ...args], {input, maxBuffer: 64 << 20});
    let files: string[];
    try {
        files = git(["ls-tree", "-r", "--name-only", commit, "--", "src"]).toString("utf8").split("\n").filter((file) => file.endsWith(".ts")).sort();
    } catch (error) {
        throw new Error(`the code corpus is src/ as of commit ${codeCorpusCommit}, read with git from this clone's history, which does not have it ` +
            `(a shallow clone or no git?): ${error instanceof Error ? error.message : String(error)}`);
    }
    const batch = git(["cat-file", "--batch"], files.map((file) => `${commit}:${file}\n`).join(""));
    const contents: string[] = [];
    for (let offset = 0; offset < batch.length;) {
        const headerEnd = batch.indexOf(0x0a, offset);
        const size = Number(batch.subarray(offset, headerEnd).toString("utf8").split(" ")[2]);
        contents.push(batch.subarray(headerEnd + 1, headerEnd + 1 + size).toString("utf8"));
        offset = headerEnd + 1 + size + 1;
    }
    return contents.join("\n");
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
