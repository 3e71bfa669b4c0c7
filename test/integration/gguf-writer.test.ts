import {execFileSync, spawnSync} from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import {describe, expect, it} from "vitest";
import {makeSyntheticLlama} from "../../tools/gguf/makeSyntheticLlama.js";
import {modelArchitectures} from "../../tools/gguf/makeModel.js";
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

describe.skipIf(modelPath == null)("npm run make-model", () => {
    it("writes a model of each architecture, under 1 MB, that llama.cpp loads as that architecture; an unknown one is refused", async () => {
        const dir = tempDir("make-model");
        for (const architecture of Object.keys(modelArchitectures)) {
            const out = path.join(dir, `${architecture}.gguf`);
            const printed = execFileSync(process.execPath, ["--import", "tsx", "tools/gguf/makeModelCli.ts", "--arch", architecture, "--out", out, "--tokenizer-from", modelPath!], {encoding: "utf8"});
            expect(printed).toContain(`${out}: ${architecture}`);
            expect(fs.statSync(out).size).toBeLessThan(1 << 20);
            expect(await validateModelFile(await loadLlama(), out)).toMatchObject({architecture});
        }
        const refused = spawnSync(process.execPath, ["--import", "tsx", "tools/gguf/makeModelCli.ts", "--arch", "gpt-5", "--out", path.join(dir, "x.gguf")], {encoding: "utf8"});
        expect(refused.status).toBe(2);
        expect(refused.stderr).toContain('Unknown architecture "gpt-5"');
        expect(fs.existsSync(path.join(dir, "x.gguf"))).toBe(false);
    });
});
