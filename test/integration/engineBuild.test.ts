import {spawn} from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import {fileURLToPath} from "node:url";
import {afterAll, beforeAll, describe, expect, test} from "vitest";
import type {EngineBuildProgress, EngineStatus} from "../../src/core/common/api/index.js";
import {Core} from "../../src/core/node/Core.js";
import {findLlamaBuildTools} from "../../src/core/node/engine/findLlamaBuildTools.js";
import {loadLlama} from "../../src/core/node/engine/loadLlama.js";
import {findLocalLlamaBuild, llamaBuildSetup} from "../../src/core/node/engine/localLlamaBuild.js";
import {createCoreService, type CoreService} from "../../src/core/node/rpc/createCoreService.js";
import {cliCommand, runCliCapturing} from "../../tools/spawnCli.js";
import {hermeticCliEnv} from "../helpers/cliEnv.js";
import {setEnvForTest} from "../helpers/setEnvForTest.js";
import {tempDir} from "../helpers/tempCore.js";
import {watchOutput} from "../helpers/watchOutput.js";

const standIn = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "helpers", "standInLlamaBuild.mjs");

/** An environment whose engine builds run the stand-in into a fresh folder. */
function standInEnv(label: string, extra: NodeJS.ProcessEnv = {}) {
    const builds = path.join(tempDir(label), "localBuilds");
    const {env} = hermeticCliEnv(label, {CLEANROOM_LLAMA_BUILD_STAND_IN: standIn, CLEANROOM_LLAMA_LOCAL_BUILDS: builds, ...extra});
    return {env, builds};
}

function isRunning(pid: number) {
    try {
        process.kill(pid, 0);
        return true;
    } catch {
        return false;
    }
}

describe("cleanroom engine (CLI)", () => {
    test("status names the binary a model load uses, its compiler and folder, and the build tools found", async () => {
        const {env} = hermeticCliEnv("engine-status");
        const run = await runCliCapturing(["engine", "status", "--json"], {env});
        expect(run.stderr).toBe("");
        expect(run.code).toBe(0);
        const status = JSON.parse(run.stdout) as EngineStatus;
        // The same question asked of node-llama-cpp's folder in this checkout: a build made here is used when present.
        const local = findLocalLlamaBuild(llamaBuildSetup({}).localBuildsDirectory);
        const usesLocal = local != null && process.env.CLEANROOM_LLAMA_BUILD !== "prebuilt";
        expect(status.inUse.kind).toBe(usesLocal ? "local" : "prebuilt");
        expect(status.inUse.description).toMatch(usesLocal ? /^local v\S+ cpu openmp$/ : /^prebuilt v\S+ (cpu|cuda|vulkan|metal)$/);
        expect(fs.existsSync(path.join(status.inUse.directory!, "llama-addon.node"))).toBe(true);
        expect(status.inUse.compiler).toMatch(/GCC: \(.+\) \d|clang version \d/);
        expect(status.localBuild?.directory ?? null).toBe(local?.binaryDirectory ?? null);
        expect(status.tools).toEqual(findLlamaBuildTools(env));
        expect(status.build).toBeNull();

        const text = await runCliCapturing(["engine", "status"], {env});
        expect(text.stdout).toContain(`In use: ${status.inUse.description}`);
        expect(text.stdout).toContain(`compiler: ${status.inUse.compiler}`);
    });

    test("build (stand-in build) prints its phases and percentages, and status then finds the finished build", async () => {
        const {env, builds} = standInEnv("engine-build");
        const run = await runCliCapturing(["engine", "build"], {env});
        expect(run.code, run.stderr).toBe(0);
        expect(run.stderr).toMatch(/^engine build: looking for cmake, a C\+\+ compiler and make/m);
        expect(run.stderr).toMatch(/^engine build: unpacking and configuring llama\.cpp's source/m);
        // make's `[ NN%]` lines, then Ninja's `[N/M]` ones, each shown once, in order
        const percents = [...run.stderr.matchAll(/^engine build: compiling (\d+)%/gm)].map((match) => Number(match[1]));
        expect(percents).toEqual([3, 25, 50, 100]);
        expect(run.stderr).toMatch(/^engine build: putting the binaries in place/m);
        expect(run.stdout).toContain("Built for this CPU in");
        expect(run.stdout).toContain(path.join(builds, "linux-x64-stand-in", "Release"));
        expect(run.stdout).toContain("GCC: (Stand-in 1.0) 1.0");
        // the build was asked for with the options loadLlama looks for
        expect(findLocalLlamaBuild(builds)?.cmakeOptions).toEqual({GGML_OPENMP: "ON"});

        const status = JSON.parse((await runCliCapturing(["engine", "status", "--json"], {env})).stdout) as EngineStatus;
        expect(status.localBuild).toMatchObject({kind: "local", directory: path.join(builds, "linux-x64-stand-in", "Release"), compiler: "GCC: (Stand-in 1.0) 1.0"});
    });

    test("Ctrl+C stops a build (stand-in build): its compiler ends and no half-made build is left to load", async () => {
        const pidFile = path.join(tempDir("engine-cancel-pid"), "compiler.pid");
        const {env, builds} = standInEnv("engine-cancel", {STAND_IN_MODE: "hang", STAND_IN_PID_FILE: pidFile});
        const {command, args} = cliCommand(["engine", "build"]);
        const child = spawn(command, args, {env, stdio: ["ignore", "pipe", "pipe"]});
        const output = watchOutput(child);
        await output.waitFor(/compiling 51%/);
        const compilerPid = Number(fs.readFileSync(pidFile, "utf8"));
        expect(isRunning(compilerPid)).toBe(true);
        // the half-made build is on disk, without node-llama-cpp's finished marker
        expect(fs.existsSync(path.join(builds, "linux-x64-stand-in", "Release", "llama-addon.node"))).toBe(true);

        child.kill("SIGINT");
        expect(await output.exited).toBe(1);
        expect(output.output()).toContain("[ENGINE_BUILD_CANCELLED]");
        await expect.poll(() => isRunning(compilerPid)).toBe(false);
        expect(fs.readdirSync(builds)).toEqual([]);
        expect(findLocalLlamaBuild(builds)).toBeNull();
    });

    test("build without a C++ compiler fails up front naming the tool and its Debian package, and runs nothing", async () => {
        const bin = tempDir("engine-no-compiler-bin");
        for (const tool of ["cmake", "make"]) {
            const found = findLlamaBuildTools().find((candidate) => candidate.tool === tool)?.path;
            fs.symlinkSync(found ?? process.execPath, path.join(bin, tool));
        }
        const {env, builds} = standInEnv("engine-no-compiler", {PATH: bin, CXX: ""});
        const run = await runCliCapturing(["engine", "build", "--json"], {env});
        expect(run.code).toBe(1);
        const {error} = JSON.parse(run.stderr.trim().split("\n").at(-1)!) as {error: {code: string, message: string, details: Record<string, string>}};
        expect(error.code).toBe("ENGINE_BUILD_TOOLS_MISSING");
        expect(error.details).toEqual({missing: "C++ compiler", debianPackages: "g++"});
        expect(error.message).toContain("sudo apt-get install g++");
        expect(fs.existsSync(builds)).toBe(false);
    });

    test("a disk that fills during the build (stand-in build) is DISK_FULL, and the half-made build is removed", async () => {
        const {env, builds} = standInEnv("engine-disk-full", {STAND_IN_MODE: "diskfull"});
        const run = await runCliCapturing(["engine", "build"], {env});
        expect(run.code).toBe(1);
        expect(run.stderr).toMatch(/The disk is full: building the engine into .* stopped.*\[DISK_FULL\]/);
        expect(fs.readdirSync(builds)).toEqual([]);
    });

    test("a failing compiler (stand-in build) is ENGINE_BUILD_FAILED with the build's last lines", async () => {
        const {env, builds} = standInEnv("engine-fail", {STAND_IN_MODE: "fail"});
        const run = await runCliCapturing(["engine", "build"], {env});
        expect(run.code).toBe(1);
        expect(run.stderr).toContain("Building the engine for this CPU failed (exit code 2)");
        expect(run.stderr).toContain("ggml.c:1:1: error: stand-in failure");
        expect(run.stderr).toContain("[ENGINE_BUILD_FAILED]");
        expect(fs.readdirSync(builds)).toEqual([]);
    });
});

describe("engine.* calls (stand-in build)", () => {
    let core: Core;
    let service: CoreService;
    const progress: EngineBuildProgress[] = [];
    const restore: Array<() => void> = [];
    let builds: string;

    beforeAll(() => {
        builds = path.join(tempDir("engine-rpc"), "localBuilds");
        restore.push(setEnvForTest("CLEANROOM_LLAMA_BUILD_STAND_IN", standIn), setEnvForTest("CLEANROOM_LLAMA_LOCAL_BUILDS", builds));
        core = Core.create(() => loadLlama(), {database: ":memory:"});
        service = createCoreService(core);
        service.events.on("engine.buildProgress", (event) => progress.push(event));
    });
    afterAll(async () => {
        service?.dispose();
        await core?.dispose();
        for (const undo of restore.reverse())
            undo();
    });

    async function call<T>(method: string, input: unknown = {}): Promise<T> {
        const result = await service.call(method, input);
        if (!result.ok)
            throw new Error(`${method}: ${result.error.code} ${result.error.message}`);
        return result.value as T;
    }

    test("a build cancelled from the app leaves no build; a second one reports progress, ends done, and status then offers it for the next start", async () => {
        const pidFile = path.join(tempDir("engine-rpc-pid"), "compiler.pid");
        const undoMode = setEnvForTest("STAND_IN_MODE", "hang");
        const undoPid = setEnvForTest("STAND_IN_PID_FILE", pidFile);
        try {
            const before = await call<EngineStatus>("engine.status");
            expect(before).toMatchObject({localBuild: null, build: null});
            expect(await call("engine.build")).toEqual({started: true});
            await expect.poll(() => progress.at(-1)?.percent).toBe(51);
            const refused = await service.call("engine.build", {});
            expect(refused.ok === false && refused.error.code).toBe("ENGINE_BUILD_RUNNING");
            expect(await call("engine.cancelBuild")).toEqual({cancelled: true});
            await expect.poll(() => progress.at(-1)?.state).toBe("cancelled");
            expect(progress.at(-1)?.error?.code).toBe("ENGINE_BUILD_CANCELLED");
            await expect.poll(() => isRunning(Number(fs.readFileSync(pidFile, "utf8")))).toBe(false);
            expect((await call<EngineStatus>("engine.status")).localBuild).toBeNull();
        } finally {
            undoPid();
            undoMode();
        }

        progress.length = 0;
        await call("engine.build");
        await expect.poll(() => progress.at(-1)?.state).toBe("done");
        expect(progress.map((event) => `${event.phase} ${event.percent}`)).toEqual(
            ["checking null", "preparing null", "compiling 3", "compiling 25", "compiling 50", "compiling 100", "finishing 100", "finishing 100"]);
        const after = await call<EngineStatus>("engine.status");
        expect(after.localBuild?.directory).toBe(path.join(builds, "linux-x64-stand-in", "Release"));
        expect(after.build).toMatchObject({state: "done"});
        // this core keeps the binary it started with; the next start uses the new build
        expect(after.inUse.kind).toBe((await loadLlama()).buildType === "localBuild" ? "local" : "prebuilt");
        expect(after.nextStart).toBe((await loadLlama()).gpu === false ? "local" : after.inUse.kind);
    });
});
