// Run by test/setup/vocabularyTokenCounts.ts in a process of its own, at the lowest priority, while
// the other files run: counts the calibration corpora with every vocabulary-only tokenizer (about
// half a minute of CPU) and writes the counts (or the error) to the file named by its argument.
import fs from "node:fs";
import path from "node:path";
import {loadLlama} from "../../src/core/node/engine/loadLlama.js";
import {calibrationCorpora, corpusDigest, vocabularyFiles, type VocabularyTokenCounts} from "../helpers/vocabularyTokenCounts.js";

async function countVocabularyTokens(): Promise<VocabularyTokenCounts> {
    const corpora = calibrationCorpora();
    const {dir, files} = vocabularyFiles();
    // The CPU: a vocabulary-only model evaluates nothing, so no device takes part in tokenizing.
    const llama = await loadLlama("off");
    const counts: Array<{file: string, english: number, code: number}> = [];
    for (const file of files) {
        const model = await llama.loadModel({modelPath: path.join(dir, file), vocabOnly: true}).catch(() => null);
        if (model == null)
            continue;
        counts.push({file, english: model.tokenize(corpora.english).length, code: model.tokenize(corpora.code).length});
        await model.dispose();
    }
    return {corpora: {english: corpusDigest(corpora.english), code: corpusDigest(corpora.code)}, vocabularies: files, counts};
}

const output = process.argv[2];
if (output == null)
    throw new Error("usage: countVocabularyTokens.ts <output.json>");
const result = await countVocabularyTokens().catch((error: unknown): VocabularyTokenCounts => ({error: error instanceof Error ? error.stack ?? error.message : String(error)}));
// Written whole, then renamed: a reader never sees half of it.
fs.writeFileSync(`${output}.partial`, JSON.stringify(result));
fs.renameSync(`${output}.partial`, output);
process.exit(0);
