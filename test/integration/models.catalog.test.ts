import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {describe, expect, test} from "vitest";
import {ModelCatalog} from "../../src/core/node/models/ModelCatalog.js";

describe("model catalog and models folder", () => {
    test("the catalog validates and offers a small, a medium and a large instruct model in Q4_K_M", () => {
        const catalog = ModelCatalog.load();
        const chatModels = catalog.entries.filter((entry) => entry.purpose === "chat");
        expect(chatModels.length).toBeGreaterThanOrEqual(3);
        for (const entry of chatModels) {
            expect(entry.quantization).toBe("Q4_K_M");
            expect(entry.url.endsWith(entry.fileName)).toBe(true);
            expect(entry.sha256 == null || /^[0-9a-f]{64}$/.test(entry.sha256)).toBe(true);
        }
        const sizes = chatModels.map((entry) => entry.fileBytes);
        expect(Math.min(...sizes)).toBeLessThan(1.5e9);
        expect(Math.max(...sizes)).toBeGreaterThan(4e9);
        expect(() => catalog.require("nope")).toThrow(/Catalog ids: /);
    });

    test("the catalog offers one small embedding model for documents, pinned by size and SHA-256 (#23)", () => {
        const embedding = ModelCatalog.load().entries.filter((entry) => entry.purpose === "embedding");
        expect(embedding.map((entry) => entry.id)).toEqual(["bge-small-en-v1.5-q8_0"]);
        expect(embedding[0]!.fileBytes).toBeLessThan(100e6);
        expect(embedding[0]!.sha256).toMatch(/^[0-9a-f]{64}$/);
        expect(embedding[0]!.url.endsWith(embedding[0]!.fileName)).toBe(true);
    });

    test("a damaged catalog is refused with the problems found", () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cleanroom-catalog-"));
        const file = path.join(dir, "catalog.json");
        fs.writeFileSync(file, JSON.stringify({version: 1, entries: [{id: "x", fileBytes: -1}]}));
        expect(() => ModelCatalog.load(file)).toThrow(expect.objectContaining({code: "MODEL_CATALOG_INVALID"}));
        fs.rmSync(dir, {recursive: true});
    });
});
