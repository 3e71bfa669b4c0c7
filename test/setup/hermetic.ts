// Runs before every test file, in its worker: the file, and every process it spawns (they inherit
// the environment), get their own app folder, temp folder, scrub scratch root and home folder,
// so no test reads the user's data or another running Cleanroom's, and none leaves files behind.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {afterAll, beforeEach} from "vitest";
import {failureDiagnostics} from "../helpers/failureDiagnostics.js";

const realFoldersKey = Symbol.for("cleanroom.test.realFolders");

// Where isolation is off (the unit project), one worker runs file after file and this runs again
// before each: the real home and temp folder are those its first run saw, not the last file's (deleted).
const real = ((globalThis as {[realFoldersKey]?: {home: string, tmp: string}})[realFoldersKey] ??= {home: os.homedir(), tmp: os.tmpdir()});
const realHome = real.home;
const root = fs.mkdtempSync(path.join(real.tmp, "cleanroom-test-"));
const folder = (name: string) => {
    const dir = path.join(root, name);
    fs.mkdirSync(dir, {recursive: true, mode: 0o700});
    return dir;
};

// Built once per machine, outside any test's folders: keep pointing at the real cache.
process.env.CLEANROOM_LLAMA_CPP_DIR ??= path.join(realHome, ".cache", "cleanroom", "llama.cpp");
process.env.CLEANROOM_HOME = folder("app-data");
// On RAM-backed /dev/shm, as in the product, but a folder of this test file's own.
const scratch = fs.existsSync("/dev/shm") ? fs.mkdtempSync("/dev/shm/cleanroom-test-scratch-") : folder("scratch");
process.env.CLEANROOM_SCRATCH_DIR = scratch;
process.env.HOME = folder("home");
process.env.XDG_DATA_HOME = path.join(process.env.HOME, ".local", "share");
process.env.XDG_CONFIG_HOME = path.join(process.env.HOME, ".config");
process.env.TMPDIR = folder("tmp");
// tsx keeps its compile cache in $TMPDIR/tsx-<uid>: each spawned tsx process (a tool, a worker, a preload) would otherwise
// compile every module again from an empty cache (half a CPU-second for the core's graph). The cache holds compiled
// sources only, keyed by their content, so sharing the machine's is no leak between tests.
/** This user's name for the folders the tests share across runs (tsx's cache, the machine's facts). */
const userTag = process.geteuid?.() ?? os.userInfo().username;
const tsxCache = `tsx-${userTag}`;
fs.mkdirSync(path.join(real.tmp, tsxCache), {recursive: true, mode: 0o700});
fs.symlinkSync(path.join(real.tmp, tsxCache), path.join(process.env.TMPDIR, tsxCache));
// What Cleanroom learns about the machine (where `--gpu auto` runs, which llama.cpp binaries passed their load test:
// machineFactsDir) is shared by every test, as by every data folder on a user's machine: each record names the machine,
// drivers and build it holds for. A test's own first probe would otherwise cost each fresh data folder two binary-test
// children and a Vulkan start, about 0.8 CPU-seconds. Tests of the probe or the memory set their own folder.
const machineFacts = path.join(real.tmp, `cleanroom-test-machine-facts-${userTag}`);
fs.mkdirSync(machineFacts, {recursive: true, mode: 0o700});
process.env.CLEANROOM_CACHE_DIR = machineFacts;
delete process.env.CLEANROOM_MODEL;
delete process.env.CLEANROOM_CLOUD_API_KEY;
delete process.env.CLEANROOM_PASSPHRASE;
delete process.env.CLEANROOM_NEW_PASSPHRASE;

afterAll(() => {
    if (process.env.CLEANROOM_KEEP_TEST_DIRS === "1")
        console.info(`test folders kept in ${root}`);
    else
        for (const dir of [root, scratch])
            fs.rmSync(dir, {recursive: true, force: true});
});

// What the file's helpers know of a failure (web mode's stderr, kept while its app is open), printed once a test fails.
beforeEach(({onTestFailed}) => {
    onTestFailed(() => {
        for (const text of failureDiagnostics())
            console.error(text);
    });
});
