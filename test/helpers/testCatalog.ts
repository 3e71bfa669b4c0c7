import fs from "node:fs";
import path from "node:path";
import type {CatalogEntry, ModelCatalogFile} from "../../src/core/common/models.js";
import {testModelSha256} from "./fakeAppHome.js";

/** The test model's exact size (stories260K.gguf). */
export const testModelBytes = 1_185_376;

export type TestCatalogEntry = {id: string, name: string, url: string, fileName: string, sha256?: string, fileBytes?: number};

/** A catalog entry for the test model served from `url`, with its real size and SHA-256 unless told otherwise. */
export function testCatalogEntry({id, name, url, fileName, sha256 = testModelSha256, fileBytes = testModelBytes}: TestCatalogEntry): CatalogEntry {
    const kvBytesPerToken = 2 * 5 * 64 * 2 * 2;
    const overheadBytes = 8_000_000;
    return {
        id, purpose: "chat", name, url, fileName, sha256, fileBytes,
        family: "TinyStories",
        parameters: "260K",
        quantization: "F32",
        architecture: "llama",
        sourcePage: "https://huggingface.co/ggml-org/models",
        sha256Source: "Measured from the test model in this repository's test setup.",
        license: "MIT",
        licenseUrl: "https://opensource.org/license/mit",
        trainContextSize: 2048,
        memory: {kvBytesPerToken, overheadBytes, ramContextSize: 2048, ramBytes: fileBytes + overheadBytes + 2048 * kvBytesPerToken},
        summary: "A tiny story model, served by the test's own HTTP server."
    };
}

/** Writes a catalog file into `dir` and returns its path. */
export function writeTestCatalog(dir: string, entries: CatalogEntry[]): string {
    const catalogPath = path.join(dir, "catalog.json");
    const file: ModelCatalogFile = {version: 1, entries};
    fs.mkdirSync(dir, {recursive: true});
    fs.writeFileSync(catalogPath, JSON.stringify(file, null, 4));
    return catalogPath;
}
