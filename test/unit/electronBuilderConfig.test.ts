import fs from "node:fs";
import {createRequire} from "node:module";
import path from "node:path";
import {describe, expect, it} from "vitest";
import {repoRoot} from "../helpers/testModel.js";

// Both are electron-builder's own transitive dependencies; js-yaml ships no types.
const require = createRequire(import.meta.url);
const yaml = require("js-yaml") as {load(text: string): unknown};
const Ajv = require("ajv") as new (options: object) => {
    compile(schema: object): ((data: unknown) => boolean) & {errors?: Array<{instancePath: string, message?: string}> | null}
};

const schema = JSON.parse(fs.readFileSync(path.join(repoRoot, "node_modules/app-builder-lib/scheme.json"), "utf8")) as object;
const validate = new Ajv({allErrors: true, strict: false}).compile(schema);
const config = yaml.load(fs.readFileSync(path.join(repoRoot, "electron-builder.yml"), "utf8")) as Record<string, unknown>;

describe("electron-builder.yml", () => {
    it("is valid against the JSON schema electron-builder ships", () => {
        const valid = validate(config);
        expect(validate.errors ?? [], JSON.stringify(validate.errors)).toEqual([]);
        expect(valid).toBe(true);
    });

    it("the validator does catch a bad config (so the check above means something)", () => {
        expect(validate({...config, asarUnpack: 42})).toBe(false);
        expect(validate({...config, notAnOption: true})).toBe(false);
    });

    it("builds AppImage, deb, dmg and nsis", () => {
        const targets = [
            ...((config.linux as {target: string[]}).target),
            ...((config.mac as {target: string[]}).target),
            ...((config.win as {target: string[]}).target)
        ];
        expect(targets).toEqual(expect.arrayContaining(["AppImage", "deb", "dmg", "nsis"]));
    });

    it("keeps native code out of the asar archive", () => {
        const unpacked = config.asarUnpack as string[];
        for (const native of ["node-llama-cpp", "@node-llama-cpp", "better-sqlite3-multiple-ciphers"])
            expect(unpacked.some((pattern) => pattern.startsWith(`node_modules/${native}/`))).toBe(true);
        expect(config.asar).toBe(true);
    });

    it("points the app at the built main entry that the build script writes", () => {
        expect((config.extraMetadata as {main: string}).main).toBe("out/main/index.cjs");
        const scripts = JSON.parse(fs.readFileSync(path.join(repoRoot, "package.json"), "utf8")).scripts as Record<string, string>;
        expect(scripts["build:electron"]).toContain("--outfile=out/main/index.cjs");
        expect(scripts["build:electron"]).toContain("--outfile=out/preload/index.cjs");
        expect(scripts["build:electron"]).toContain("--outfile=out/core/utilityEntry.mjs");
        // The desktop core extracts documents in a worker thread that runs this file (runExtractorInWorker.ts).
        expect(scripts["build:electron"]).toContain("extraction/extractorEntry.ts --bundle --platform=node --format=esm --packages=external --outfile=out/core/extractorEntry.mjs");
    });
});
