import path from "node:path";
import {describe, expect, it} from "vitest";
import {makeSyntheticLlama} from "../../tools/gguf/makeSyntheticLlama.js";
import {readGgufMetadata} from "../../tools/gguf/GgufFile.js";
import {loadLlama} from "../../src/core/node/engine/loadLlama.js";
import {validateModelFile} from "../../src/core/node/engine/validateModelFile.js";
import {requireTestModel} from "../helpers/testModel.js";
import {tempDir} from "../helpers/tempCore.js";

const modelPath = requireTestModel();

describe.skipIf(modelPath == null)("the project's GGUF writer", () => {
    it("writes a synthetic Llama model with the test model's tokenizer that llama.cpp loads and runs", async () => {
        const out = path.join(tempDir("gguf"), "synthetic.gguf");
        const parameters = makeSyntheticLlama(out, {tokenizerFrom: modelPath!, embedding: 128, layers: 2, heads: 4, kvHeads: 2, feedForward: 256, contextLength: 512});
        const facts = await validateModelFile(await loadLlama(), out);
        expect(facts).toMatchObject({architecture: "llama", trainContextSize: 512, parameters});

        const original = readGgufMetadata(modelPath!);
        const written = readGgufMetadata(out);
        expect(written.get("tokenizer.ggml.tokens")).toEqual(original.get("tokenizer.ggml.tokens"));

        const model = await (await loadLlama()).loadModel({modelPath: out});
        const reference = await (await loadLlama()).loadModel({modelPath: modelPath!});
        try {
            expect(model.tokenize("Once upon a time")).toEqual(reference.tokenize("Once upon a time"));
            const context = await model.createContext({contextSize: 256, threads: 1});
            const tokens = [];
            for await (const token of context.getSequence().evaluate(model.tokenize("Once upon a time"), {temperature: 0})) {
                tokens.push(token);
                if (tokens.length >= 8)
                    break;
            }
            expect(tokens).toHaveLength(8);
            await context.dispose();
        } finally {
            await model.dispose();
            await reference.dispose();
        }
    });
});
