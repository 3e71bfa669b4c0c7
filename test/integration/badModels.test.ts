import fs from "node:fs";
import path from "node:path";
import {beforeAll, describe, expect, it} from "vitest";
import {loadLlama} from "../../src/core/node/engine/loadLlama.js";
import {validateModelFile} from "../../src/core/node/engine/validateModelFile.js";
import {LocalEngine} from "../../src/core/node/engine/LocalEngine.js";
import {AuditLog} from "../../src/core/node/audit/AuditLog.js";
import {requireTestModel} from "../helpers/testModel.js";
import {tempDir} from "../helpers/tempCore.js";

const modelPath = requireTestModel();

/** Same-length patch of the general.architecture value, so the rest of the file stays valid. */
function withArchitecture(model: Buffer, architecture: string) {
    const key = Buffer.from("general.architecture");
    const keyAt = model.indexOf(key);
    const valueAt = keyAt + key.length + 4 + 8; // type (u32) + string length (u64)
    const length = Number(model.readBigUInt64LE(keyAt + key.length + 4));
    if (architecture.length !== length)
        throw new Error("same-length patch only");
    const patched = Buffer.from(model);
    patched.write(architecture, valueAt, "ascii");
    return patched;
}

describe.skipIf(modelPath == null)("bad model files get a clear, specific error before llama.cpp sees them", () => {
    const dir = tempDir("bad-models");
    let original: Buffer;
    beforeAll(() => {
        original = fs.readFileSync(modelPath!);
    });

    const cases: Array<{name: string, code: string, message: RegExp, make: () => string}> = [
        {name: "missing file", code: "MODEL_NOT_FOUND", message: /not found/, make: () => path.join(dir, "absent.gguf")},
        {name: "not a GGUF", code: "MODEL_NOT_GGUF", message: /does not start with "GGUF"/, make: () => {
            const file = path.join(dir, "notes.gguf");
            fs.writeFileSync(file, "These are my notes, not a model.\n".repeat(100));
            return file;
        }},
        {name: "empty file", code: "MODEL_NOT_GGUF", message: /Not a GGUF/, make: () => {
            const file = path.join(dir, "empty.gguf");
            fs.writeFileSync(file, "");
            return file;
        }},
        {name: "truncated inside the weights", code: "MODEL_TRUNCATED", message: /truncated/, make: () => {
            const file = path.join(dir, "cut-weights.gguf");
            fs.writeFileSync(file, original.subarray(0, Math.floor(original.length * 0.7)));
            return file;
        }},
        {name: "truncated inside the header", code: "MODEL_TRUNCATED", message: /truncated/, make: () => {
            const file = path.join(dir, "cut-header.gguf");
            fs.writeFileSync(file, original.subarray(0, 3000));
            return file;
        }},
        {name: "unsupported architecture", code: "MODEL_UNSUPPORTED_ARCHITECTURE", message: /Unsupported model architecture "zzzzz"/, make: () => {
            const file = path.join(dir, "alien.gguf");
            fs.writeFileSync(file, withArchitecture(original, "zzzzz"));
            return file;
        }}
    ];

    for (const testCase of cases)
        it(`${testCase.name} → ${testCase.code}`, async () => {
            const file = testCase.make();
            const llama = await loadLlama();
            await expect(validateModelFile(llama, file)).rejects.toMatchObject({code: testCase.code, message: expect.stringMatching(testCase.message)});

            // The engine refuses it the same way and stays usable.
            const engine = new LocalEngine(llama, new AuditLog(null), null, {threads: 1, contextSize: 256});
            await expect(engine.loadModel(file)).rejects.toMatchObject({code: testCase.code});
            await engine.loadModel(modelPath!);
            expect(engine.info?.architecture).toBe("llama");
            await engine.shutdown();
        });

    it("a model that needs more memory than the machine has → MODEL_TOO_LARGE_FOR_MEMORY (machine size given to the check, since no real model that large exists here)", async () => {
        const llama = await loadLlama();
        await expect(validateModelFile(llama, modelPath!, {totalMemoryBytes: 64 * 1024}))
            .rejects.toMatchObject({code: "MODEL_TOO_LARGE_FOR_MEMORY", message: expect.stringMatching(/needs about .* this machine has 64.0 KiB/)});
        const facts = await validateModelFile(llama, modelPath!);
        expect(facts).toMatchObject({architecture: "llama", layers: 6, trainContextSize: 2048, fileBytes: 1185376});
    });
});
