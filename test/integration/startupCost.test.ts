import fs from "node:fs";
import path from "node:path";
import {fileURLToPath} from "node:url";
import {describe, expect, it} from "vitest";
import {parseStartupTrace, startupTraceEnv} from "../../src/core/node/startupTrace.js";
import {runCliCapturing} from "../../tools/spawnCli.js";
import {hermeticCliEnv} from "../helpers/cliEnv.js";
import {cliWithPreloads} from "../helpers/testBuild.js";
import {requireTestModel} from "../helpers/testModel.js";

const modelPath = requireTestModel();
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const oneTurn = (db: string) => ["chat", "--model", modelPath!, "--db", db, "--prompt", "Once upon a time", "--max-tokens", "8", "--temperature", "0", "--threads", "1", "--json"];

/** The URL of every module one local turn resolved (recordPackageLoads.preload.ts): one run, read by the tests below. */
let turnLoads: Promise<string[]> | undefined;
function recordedTurnLoads() {
    turnLoads ??= (async () => {
        const {env, db, tmp} = hermeticCliEnv("startup-loads");
        const record = path.join(tmp, "loaded.txt");
        // The test build's CLI (testBuild.ts): the same sources and chunks as the bundle users run, with the preload compiled beside them.
        const run = await runCliCapturing(oneTurn(db), {env: {...env, RECORD_PACKAGE_LOADS_TO: record}, ...await cliWithPreloads("recordPackageLoads.preload.ts")});
        expect(run.code, run.stderr).toBe(0);
        return fs.readFileSync(record, "utf8").split("\n").filter((line) => line !== "");
    })();
    return turnLoads;
}

describe.skipIf(modelPath == null)("a chat turn pays only for what it uses (#25)", () => {
    it("CLEANROOM_TRACE_STARTUP=1 prints each phase and the llama.cpp build on stderr at exit; the JSON on stdout is the same as without it", async () => {
        const traced = hermeticCliEnv("startup-trace", {[startupTraceEnv]: "1"});
        const run = await runCliCapturing(oneTurn(traced.db), {env: traced.env});
        expect(run.code, run.stderr).toBe(0);
        expect(JSON.parse(run.stdout)).toMatchObject({route: "local", status: "complete", isolation: {scrub: {verified: true}}});

        const trace = parseStartupTrace(run.stderr);
        expect(trace?.facts.llamaBuild).toMatch(/^(prebuilt|local) v\S+ (cpu|metal|cuda|vulkan)/);
        const phases = trace!.phases.map((entry) => entry.phase);
        for (const [earlier, later] of [["CLI loaded", "llama.cpp loaded"], ["llama.cpp loaded", "database opened"], ["database opened", "model ready"],
            ["model ready", "turn"], ["turn", "session ended (scrub)"], ["session ended (scrub)", "core closed"]])
            expect(phases.indexOf(earlier!), `${earlier} before ${later}`).toBeLessThan(phases.indexOf(later!));
        expect(phases.indexOf("CLI loaded")).toBeGreaterThanOrEqual(0);
        const endings = trace!.phases.map((entry) => entry.endedAtMs);
        expect(endings).toEqual([...endings].sort((a, b) => a - b));
        // CPU time beside each phase of the CLI (the launcher's marks have none): where a process spends its CPU, not only its wall time.
        const cliPhases = trace!.phases.slice(phases.indexOf("CLI loaded"));
        expect(cliPhases.every((entry) => typeof entry.cpuMs === "number" && entry.cpuMs >= 0), JSON.stringify(cliPhases)).toBe(true);
        expect(cliPhases.reduce((sum, entry) => sum + entry.cpuMs!, 0)).toBeGreaterThan(0);

        const plain = hermeticCliEnv("startup-untraced", {[startupTraceEnv]: ""});
        const untraced = await runCliCapturing(oneTurn(plain.db), {env: plain.env});
        expect(untraced.code, untraced.stderr).toBe(0);
        expect(untraced.stderr).toBe("");
        expect(Object.keys(JSON.parse(untraced.stdout) as object)).toEqual(Object.keys(JSON.parse(run.stdout) as object));
    });

    it("a local chat turn loads no package it does not use: not the cloud SDK, the secret scanner, the document readers or the web server", async () => {
        const loads = await recordedTurnLoads();
        // A package is loaded from node_modules (its module's URL), or from a chunk of the compiled CLI that carries it (bin/cliBundle.mjs's
        // bundled packages: esbuild marks where each bundled file begins, `// node_modules/node-llama-cpp/dist/index.js`).
        const chunks = [...new Set(loads.filter((url) => url.startsWith("file:") && /[\\/]out[\\/]cli(-test)?[\\/].*\.mjs$/.test(url)))]
            .map((url) => fs.readFileSync(fileURLToPath(url), "utf8"));
        const packages = new Set([...loads.join("\n").matchAll(/node_modules\/((?:@[^/]+\/)?[^/]+)\//g), ...chunks.flatMap((chunk) => [...chunk.matchAll(/^\/\/ \S*node_modules\/((?:@[^/]+\/)?[^/\s]+)\//gm)])]
            .map((match) => match[1]));
        expect(packages).toContain("node-llama-cpp"); // the recording works (bundled)
        expect(packages).toContain("better-sqlite3-multiple-ciphers"); // the recording works (in node_modules)
        for (const unused of ["openai", "@secretlint/core", "unpdf", "mammoth", "htmlparser2", "hono", "@hono/node-server", "ws"])
            expect(packages, unused).not.toContain(unused);
        // The look-alike letters' table is in the compiled CLI (foldLetter.ts): not the package's module, which builds a 6,311-way regular expression as it loads.
        expect(packages).not.toContain("unhomoglyph");
    });

    it("a local chat turn loads none of the core's own cloud or document-reading code, nor the API's whole schema module: each is imported at first use", async () => {
        const loaded = [...new Set((await recordedTurnLoads()).filter((url) => url.startsWith("file:")).map((url) => fileURLToPath(url)))];
        // The source files the process ran: each one itself (from source, under tsx), or each one a loaded chunk of the compiled CLI
        // carries (esbuild marks where each bundled file begins: `// src/core/node/Core.ts`).
        const sources = new Set(loaded.flatMap((file) => file.endsWith(".mjs") && /[\\/]out[\\/]cli(-test)?[\\/]/.test(file)
            ? [...fs.readFileSync(file, "utf8").matchAll(/^\/\/ (src\/\S+\.ts)$/gm)].map((match) => match[1]!)
            : [path.relative(repoRoot, file).split(path.sep).join("/")]));
        expect(sources).toContain("src/core/node/Core.ts"); // the recording works
        expect(sources).toContain("src/core/node/turns/OnDemandCloudTurns.ts");
        for (const unused of ["src/core/node/turns/CloudTurnService.ts", "src/core/node/cloud/CloudClient.ts", "src/core/common/cloud/CanaryScanner.ts",
            "src/core/common/cloud/fingerprints.ts", "src/core/common/cloud/foldLetter.ts", "src/core/node/cloud/secrets/SecretScanner.ts",
            "src/core/node/documents/extraction/extractDocument.ts", "src/core/node/documents/extraction/runExtractor.ts",
            // Every schema of the API, built as the module loads: a turn needs the --gpu enum (gpuSchemas.ts), not the rest; the import file's schema comes with the first import.
            "src/core/common/api/schemas.ts", "src/core/node/database/parseConversationExport.ts"])
            expect(sources, unused).not.toContain(unused);
    });

    it("node-llama-cpp tests its binary in a child process once: the next turn with the same data folder loads it without one (bindingTestMemory)", async () => {
        // Its own record, in the data folder (the tests share one otherwise: test/setup/hermetic.ts).
        const {env, db, tmp} = hermeticCliEnv("binary-test-memory", {[startupTraceEnv]: "1", CLEANROOM_CACHE_DIR: undefined});
        const preloaded = await cliWithPreloads("recordPackageLoads.preload.ts");
        const turn = async (label: string) => {
            // The child is forked with the parent's Node options: its modules are recorded too.
            const record = path.join(tmp, `${label}.txt`);
            const run = await runCliCapturing(oneTurn(db), {env: {...env, RECORD_PACKAGE_LOADS_TO: record}, ...preloaded});
            expect(run.code, run.stderr).toBe(0);
            return {
                childForked: fs.readFileSync(record, "utf8").split("\n").some((url) => url.endsWith("/testBindingBinary.mjs")),
                bindingTest: parseStartupTrace(run.stderr)?.facts.bindingTest
            };
        };
        expect(await turn("first")).toEqual({childForked: true, bindingTest: "passed in a child"});
        expect(await turn("second")).toEqual({childForked: false, bindingTest: "remembered"});
    });

    it("the compiled CLI carries zod's English messages only, not its other locales (`import * as z`, eslint.config.js)", () => {
        const outDir = path.join(path.dirname(fileURLToPath(import.meta.url)), "../../out/cli");
        const {buildId} = JSON.parse(fs.readFileSync(path.join(outDir, "current.json"), "utf8")) as {buildId: string};
        const bundle = fs.readdirSync(path.join(outDir, buildId)).filter((file) => file.endsWith(".mjs"))
            .map((file) => fs.readFileSync(path.join(outDir, buildId, file), "utf8")).join("\n");
        // esbuild marks where each bundled file begins: `// node_modules/zod/v4/locales/he.js`.
        expect(bundle).toMatch(/^\/\/ \S*node_modules\/zod\/v4\/core\/schemas\.js$/m); // zod is in the bundle
        const locales = new Set([...bundle.matchAll(/^\/\/ \S*node_modules\/zod\/v4\/locales\/(\S+)\.js$/gm)].map((match) => match[1]));
        expect([...locales]).toEqual(["en"]);
    });
});
