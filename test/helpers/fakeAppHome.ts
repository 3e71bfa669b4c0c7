import fs from "node:fs";
import path from "node:path";

export const testModelSha256 = "270cba1bd5109f42d03350f60406024560464db173c0e387d91f0426d3bd256d";

export type FakeAppHome = {
    home: string,
    /** Absolute paths that detection must report, each with the names it must give. */
    expected: Array<{app: string, path: string, names: string[]}>,
    /** Absolute paths that detection must list as skipped. */
    expectedSkips: string[]
};

/**
 * Lays out, under `home`, the model folders of LM Studio, Ollama, Jan and GPT4All as they are on
 * `platform`, with links to (and one copy of) the test model, plus files detection must skip:
 * a vision projector, part 2 of a split model, a non-GGUF file and an Ollama tag whose blob is gone.
 */
export function buildFakeAppHome(home: string, modelPath: string, platform: "linux" | "darwin" | "win32"): FakeAppHome {
    const expected: FakeAppHome["expected"] = [];
    const expectedSkips: string[] = [];
    const link = (target: string) => {
        fs.mkdirSync(path.dirname(target), {recursive: true});
        fs.symlinkSync(modelPath, target);
        return target;
    };
    const copy = (target: string) => {
        fs.mkdirSync(path.dirname(target), {recursive: true});
        fs.copyFileSync(modelPath, target);
        return target;
    };

    // LM Studio: <models>/<publisher>/<repo>/<file>.gguf, current and legacy folder.
    const lmstudio = path.join(home, ".lmstudio", "models");
    expected.push({app: "lmstudio", path: link(path.join(lmstudio, "lmstudio-community", "Stories-GGUF", "stories-Q8_0.gguf")),
        names: ["lmstudio-community/Stories-GGUF/stories-Q8_0.gguf"]});
    expectedSkips.push(link(path.join(lmstudio, "lmstudio-community", "Stories-GGUF", "mmproj-stories-f16.gguf")));
    expected.push({app: "lmstudio", path: link(path.join(lmstudio, "bartowski", "Split-GGUF", "split-00001-of-00002.gguf")),
        names: ["bartowski/Split-GGUF/split-00001-of-00002.gguf"]});
    expectedSkips.push(link(path.join(lmstudio, "bartowski", "Split-GGUF", "split-00002-of-00002.gguf")));
    expected.push({app: "lmstudio", path: copy(path.join(home, ".cache", "lm-studio", "models", "TheBloke", "old-GGUF", "old.Q4_K_M.gguf")),
        names: ["TheBloke/old-GGUF/old.Q4_K_M.gguf"]});

    // Ollama: JSON manifests name the model layer's blob; two tags share one blob.
    const ollama = path.join(home, ".ollama", "models");
    const blob = copy(path.join(ollama, "blobs", `sha256-${testModelSha256}`));
    const manifest = (relative: string, digest: string) => {
        const manifestPath = path.join(ollama, "manifests", ...relative.split("/"));
        fs.mkdirSync(path.dirname(manifestPath), {recursive: true});
        fs.writeFileSync(manifestPath, JSON.stringify({
            schemaVersion: 2,
            mediaType: "application/vnd.docker.distribution.manifest.v2+json",
            config: {mediaType: "application/vnd.docker.container.image.v1+json", digest: `sha256:${"1".repeat(64)}`, size: 485},
            layers: [
                {mediaType: "application/vnd.ollama.image.model", digest: `sha256:${digest}`, size: 1185376},
                {mediaType: "application/vnd.ollama.image.template", digest: `sha256:${"2".repeat(64)}`, size: 1429}
            ]
        }));
        return manifestPath;
    };
    manifest("registry.ollama.ai/library/stories/260k", testModelSha256);
    manifest("registry.ollama.ai/library/stories/latest", testModelSha256);
    expected.push({app: "ollama", path: blob, names: ["stories:260k", "stories:latest"]});
    manifest("hf.co/bartowski/Gone-GGUF/Q4_K_M", "3".repeat(64));
    expectedSkips.push(path.join(ollama, "blobs", `sha256-${"3".repeat(64)}`));

    // Jan: legacy ~/jan/models, and the per-OS data folder.
    expected.push({app: "jan", path: link(path.join(home, "jan", "models", "stories-260k", "model.gguf")), names: ["stories-260k/model.gguf"]});
    const janData = platform === "win32" ? path.join(home, "AppData", "Roaming", "Jan", "data")
        : platform === "darwin" ? path.join(home, "Library", "Application Support", "Jan", "data")
            : path.join(home, ".config", "Jan", "data");
    expected.push({app: "jan", path: link(path.join(janData, "llamacpp", "models", "stories", "model.gguf")), names: ["stories/model.gguf"]});

    // GPT4All: files directly in its folder.
    const gpt4all = platform === "win32" ? path.join(home, "AppData", "Local", "nomic.ai", "GPT4All")
        : platform === "darwin" ? path.join(home, "Library", "Application Support", "nomic.ai", "GPT4All")
            : path.join(home, ".local", "share", "nomic.ai", "GPT4All");
    expected.push({app: "gpt4all", path: link(path.join(gpt4all, "stories-260k.Q8_0.gguf")), names: ["stories-260k.Q8_0.gguf"]});
    const fake = path.join(gpt4all, "not-a-model.gguf");
    fs.writeFileSync(fake, "GGML? no: plain text pretending to be a model\n");
    expectedSkips.push(fake);

    return {home, expected, expectedSkips};
}
