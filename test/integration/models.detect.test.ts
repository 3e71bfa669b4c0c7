import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {afterAll, describe, expect, test} from "vitest";
import {detectInstalledModels} from "../../src/core/node/models/detectInstalledModels.js";
import {buildFakeAppHome, testModelSha256} from "../helpers/fakeAppHome.js";
import {requireTestModel} from "../helpers/testModel.js";

const modelPath = requireTestModel();

describe.skipIf(modelPath == null)("detection of models other apps downloaded", () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "cleanroom-detect-"));
    afterAll(() => fs.rmSync(root, {recursive: true, force: true}));

    test.each(["linux", "darwin", "win32"] as const)("finds LM Studio, Ollama, Jan and GPT4All models in a fake %s home, in place", (platform) => {
        const fake = buildFakeAppHome(path.join(root, platform), modelPath!, platform);
        const before = listTree(fake.home);
        const result = detectInstalledModels({home: fake.home, platform, env: {}});

        const found = result.models.map(({app, path: filePath, names}) => ({app, path: filePath, names})).sort(byPath);
        expect(found).toEqual([...fake.expected].sort(byPath));
        for (const model of result.models)
            expect(model.fileBytes).toBe(1_185_376);
        expect(result.skipped.map((skip) => skip.path).sort()).toEqual([...fake.expectedSkips].sort());
        expect(result.skipped.find((skip) => skip.path.endsWith("not-a-model.gguf"))?.reason).toMatch(/GGUF magic/);
        expect(result.skipped.find((skip) => skip.path.includes(`sha256-${"3".repeat(64)}`))?.reason).toMatch(/missing/);
        expect(listTree(fake.home)).toEqual(before); // nothing copied, moved or written
    });

    test("each OS's own folders only: a macOS layout is not searched on Linux", () => {
        const fake = buildFakeAppHome(path.join(root, "mac-only"), modelPath!, "darwin");
        const result = detectInstalledModels({home: fake.home, platform: "linux", env: {}});
        expect(result.models.some((model) => model.path.includes("Library"))).toBe(false);
        expect(result.models.map((model) => model.app).sort()).toEqual(["jan", "lmstudio", "lmstudio", "lmstudio", "ollama"]);
    });

    test("OLLAMA_MODELS and XDG_DATA_HOME move the folders searched", () => {
        const home = path.join(root, "env-home");
        const ollamaDir = path.join(root, "elsewhere", "ollama-models");
        const manifest = path.join(ollamaDir, "manifests", "registry.ollama.ai", "someone", "stories", "q8");
        fs.mkdirSync(path.dirname(manifest), {recursive: true});
        fs.writeFileSync(manifest, JSON.stringify({layers: [{mediaType: "application/vnd.ollama.image.model", digest: `sha256:${testModelSha256}`}]}));
        fs.mkdirSync(path.join(ollamaDir, "blobs"), {recursive: true});
        fs.symlinkSync(modelPath!, path.join(ollamaDir, "blobs", `sha256-${testModelSha256}`));
        const xdg = path.join(root, "elsewhere", "xdg-data");
        fs.mkdirSync(path.join(xdg, "nomic.ai", "GPT4All"), {recursive: true});
        fs.symlinkSync(modelPath!, path.join(xdg, "nomic.ai", "GPT4All", "m.gguf"));

        const result = detectInstalledModels({home, platform: "linux", env: {OLLAMA_MODELS: ollamaDir, XDG_DATA_HOME: xdg}});
        expect(result.models.map(({app, names}) => ({app, names}))).toEqual([
            {app: "ollama", names: ["someone/stories:q8"]},
            {app: "gpt4all", names: ["m.gguf"]}
        ]);
    });

    test("an empty home finds nothing and says where it looked", () => {
        const home = fs.mkdtempSync(path.join(root, "empty-"));
        const result = detectInstalledModels({home, platform: "win32", env: {}});
        expect(result.models).toEqual([]);
        expect(result.searched.every((dir) => !dir.exists)).toBe(true);
        expect(result.searched.map((dir) => dir.app)).toEqual(expect.arrayContaining(["lmstudio", "ollama", "jan", "gpt4all"]));
        expect(result.searched.find((dir) => dir.app === "gpt4all")?.dir).toBe(path.join(home, "AppData", "Local", "nomic.ai", "GPT4All"));
    });
});

function byPath(a: {path: string}, b: {path: string}) {
    return a.path.localeCompare(b.path);
}

function listTree(dir: string): string[] {
    return fs.readdirSync(dir, {recursive: true, withFileTypes: true})
        .map((entry) => `${path.join(entry.parentPath, entry.name)}:${entry.isSymbolicLink() ? "link" : fs.statSync(path.join(entry.parentPath, entry.name)).size}`)
        .sort();
}
