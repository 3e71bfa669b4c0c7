import fs from "node:fs";
import path from "node:path";
import {describe, expect, it} from "vitest";
import {resolveStartupModel} from "../../src/core/node/host/resolveStartupModel.js";
import {ModelRegistry} from "../../src/core/node/models/ModelRegistry.js";
import {tempDir} from "../helpers/tempCore.js";

describe("the startup model (one resolver for the CLI, web mode and the app)", () => {
    it("takes the first that applies: --model, CLEANROOM_MODEL, the registry's default, a folder's first GGUF, the saved one", () => {
        const root = tempDir("startup");
        const modelsDir = path.join(root, "models");
        const folder = path.join(root, "folder");
        fs.mkdirSync(folder);
        fs.writeFileSync(path.join(folder, "b.gguf"), "");
        fs.writeFileSync(path.join(folder, "a.gguf"), "");
        const registry = ModelRegistry.open(modelsDir);
        const registered = registry.add({
            name: "default", path: path.join(root, "default.gguf"), origin: "import", fileBytes: 0,
            sha256: null, catalogId: null, sourceRef: null, architecture: null
        });
        registry.setDefault(registered.id);

        const all = {explicit: "given.gguf", env: {CLEANROOM_MODEL: "/env.gguf"}, modelsDir, folders: [folder], saved: "/saved.gguf"};
        expect(resolveStartupModel(all)).toEqual({path: path.resolve("given.gguf"), source: "explicit"});
        expect(resolveStartupModel({...all, explicit: undefined})).toEqual({path: "/env.gguf", source: "env"});
        expect(resolveStartupModel({...all, explicit: "", env: {}})).toEqual({path: registered.path, source: "default"});
        expect(resolveStartupModel({...all, explicit: undefined, env: {}, modelsDir: path.join(root, "none")})).toEqual({path: path.join(folder, "a.gguf"), source: "folder"});
        expect(resolveStartupModel({env: {}, folders: [path.join(root, "none")], saved: "/saved.gguf"})).toEqual({path: "/saved.gguf", source: "settings"});
        expect(resolveStartupModel({env: {}})).toBeNull();
    });

    it("a damaged registry counts as no default", () => {
        const modelsDir = tempDir("startup-damaged");
        fs.writeFileSync(path.join(modelsDir, "registry.json"), "{not json");
        expect(resolveStartupModel({env: {}, modelsDir, saved: "/saved.gguf"})).toEqual({path: "/saved.gguf", source: "settings"});
    });
});
