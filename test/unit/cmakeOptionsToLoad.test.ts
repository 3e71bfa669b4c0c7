import fs from "node:fs";
import path from "node:path";
import {describe, expect, it} from "vitest";
import {cmakeOptionsToLoad, localLlamaBuildCmakeOptions} from "../../src/core/node/engine/localLlamaBuild.js";
import {tempDir} from "../helpers/tempCore.js";

/** A localBuilds folder as node-llama-cpp leaves it: one finished CPU build with Cleanroom's CMake options, or one being made. */
function localBuilds(label: string, build: "finished" | "being made" | "none") {
    const directory = tempDir(label);
    const folder = path.join(directory, "linux-x64-openmp");
    if (build !== "none") {
        fs.mkdirSync(path.join(folder, "Release"), {recursive: true});
        fs.writeFileSync(path.join(folder, "Release", "llama-addon.node"), "\u007fELF");
        fs.writeFileSync(path.join(folder, "Release", "_nlcBuildMetadata.json"),
            JSON.stringify({buildOptions: {gpu: false, customCmakeOptions: localLlamaBuildCmakeOptions}}));
    }
    if (build === "finished")
        fs.writeFileSync(path.join(folder, "buildDone.status"), "");
    return {directory, lock: `${folder}.lock`};
}

/** The lock node-llama-cpp's builder holds on a build folder (proper-lockfile: a folder whose time its holder refreshes), last refreshed at `refreshedAt`. */
function lockBuild(lock: string, refreshedAt: number) {
    fs.mkdirSync(lock);
    fs.utimesSync(lock, refreshedAt / 1000, refreshedAt / 1000);
}

describe("the llama.cpp binary a process starts on, while a local build may be being made", () => {
    it("the finished local build, when no build is being made", () => {
        expect(cmakeOptionsToLoad(localBuilds("finished-build", "finished").directory)).toEqual(localLlamaBuildCmakeOptions);
    });

    it("the prebuilt binary when there is no finished local build, so that node-llama-cpp never waits for one", () => {
        expect(cmakeOptionsToLoad(localBuilds("no-build", "none").directory)).toEqual({});
        expect(cmakeOptionsToLoad(path.join(tempDir("no-folder"), "localBuilds"))).toEqual({});
    });

    it("the prebuilt binary while a build is being made (its lock refreshed within node-llama-cpp's 10 s), instead of waiting minutes for the build to end", () => {
        const now = Date.now();
        const running = localBuilds("build-running", "being made");
        lockBuild(running.lock, now - 2_000);
        expect(cmakeOptionsToLoad(running.directory, now)).toEqual({});

        // A rebuild over a finished build: the folder is being rewritten.
        const rebuilding = localBuilds("rebuilding", "finished");
        lockBuild(rebuilding.lock, now - 2_000);
        expect(cmakeOptionsToLoad(rebuilding.directory, now)).toEqual({});
    });

    it("the finished local build when the lock beside it is stale (its builder was killed), as node-llama-cpp itself counts it", () => {
        const now = Date.now();
        const killed = localBuilds("stale-lock", "finished");
        lockBuild(killed.lock, now - 60_000);
        expect(cmakeOptionsToLoad(killed.directory, now)).toEqual(localLlamaBuildCmakeOptions);
    });
});
