import fs from "node:fs";
import path from "node:path";
import {fileURLToPath} from "node:url";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/** The real test model: CLEANROOM_TEST_MODEL, else ../shared/models/stories260K.gguf beside the repository. */
export function testModelPath() {
    return process.env.CLEANROOM_TEST_MODEL ?? path.resolve(repoRoot, "../shared/models/stories260K.gguf");
}

export function hasTestModel() {
    return fs.existsSync(testModelPath());
}

/**
 * Returns the test model's path. Where it is absent the caller skips with a clear message,
 * except under CI=true, where a missing model is a failure, never a silent skip.
 */
export function requireTestModel(): string | null {
    const modelPath = testModelPath();
    if (fs.existsSync(modelPath))
        return modelPath;

    if (process.env.CI === "true")
        throw new Error(`The test model is missing at ${modelPath} (set CLEANROOM_TEST_MODEL). Under CI it must be present.`);

    console.warn(`Skipping: the test model is missing at ${modelPath} (set CLEANROOM_TEST_MODEL).`);
    return null;
}

export {repoRoot};
