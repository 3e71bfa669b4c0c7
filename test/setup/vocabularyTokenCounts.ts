// Global setup of the model-serial project (vitest.config.ts), run when the run starts: starts
// counting the calibration corpora with real tokenizers' vocabularies (cloud-token-count.test.ts)
// in a process of its own at the lowest priority, so that the counting takes the CPU the files of
// the first group leave idle instead of holding up the group that runs alone; the test waits for
// the file it writes. The teardown stops it if it still runs and removes its folder.
import {spawn} from "node:child_process";
import {once} from "node:events";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type {TestProject} from "vitest/node";
import {repoRoot} from "../helpers/testModel.js";

declare module "vitest" {
    export interface ProvidedContext {
        /** Where test/setup/countVocabularyTokens.ts writes its counts, once done. */
        vocabularyTokenCountsFile: string
    }
}

export default function startCountingVocabularyTokens(project: TestProject) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cleanroom-vocabulary-counts-"));
    const file = path.join(dir, "counts.json");
    const home = path.join(dir, "home");
    fs.mkdirSync(home, {mode: 0o700});
    const counter = spawn(process.execPath, ["--import", "tsx", path.join(repoRoot, "test", "setup", "countVocabularyTokens.ts"), file], {
        cwd: repoRoot, stdio: ["ignore", "ignore", "inherit"],
        env: {...process.env, HOME: home, CLEANROOM_HOME: home, TMPDIR: dir,
            CLEANROOM_LLAMA_CPP_DIR: process.env.CLEANROOM_LLAMA_CPP_DIR ?? path.join(os.homedir(), ".cache", "cleanroom", "llama.cpp"),
            // Nineteen tokenizers loaded and freed in turn: glibc would give each one's memory back to the system and fault it
            // in again for the next (a sixth of the counting's CPU). Kept, it is reused: 33.0 -> 25.6-27.6 CPU-seconds, same counts.
            MALLOC_TRIM_THRESHOLD_: String(2 ** 34), MALLOC_TOP_PAD_: String(2 ** 28)}
    });
    const exited = once(counter, "exit").catch(() => undefined);
    // Never started: the test reads why.
    counter.on("error", (error) => fs.writeFileSync(file, JSON.stringify({error: `the counting process did not start: ${error.message}`})));
    if (counter.pid != null)
        os.setPriority(counter.pid, 19);
    project.provide("vocabularyTokenCountsFile", file);
    return async () => {
        if (counter.exitCode == null && counter.signalCode == null) {
            counter.kill();
            await exited;
        }
        fs.rmSync(dir, {recursive: true, force: true});
    };
}
