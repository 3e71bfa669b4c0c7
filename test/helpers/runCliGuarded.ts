import {spawn} from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {cliCommand, type CliRun} from "../../tools/spawnCli.js";

export type GuardedCliRun = CliRun & {
    /** True when the process was still running at the guard's deadline and was killed. */
    hung: boolean
};

/**
 * Runs the CLI from source in its own process, with its own CLEANROOM_HOME and TMPDIR (under a
 * fresh temp folder unless `env` names them), and kills it if it is still running after
 * `hangGuardMs`: a hang is then reported as `hung: true` instead of stalling the test run.
 */
export function runCliGuarded(args: string[], {env = {}, hangGuardMs = 60_000}: {env?: NodeJS.ProcessEnv, hangGuardMs?: number} = {}): Promise<GuardedCliRun> {
    const sandbox = fs.mkdtempSync(path.join(os.tmpdir(), "cleanroom-cli-guarded-"));
    const {command, args: fullArgs} = cliCommand(args);
    return new Promise((resolve, reject) => {
        const child = spawn(command, fullArgs, {
            env: {...process.env, CLEANROOM_HOME: path.join(sandbox, "home"), TMPDIR: sandbox, ...env},
            stdio: ["ignore", "pipe", "pipe"]
        });
        let stdout = "";
        let stderr = "";
        let hung = false;
        const guard = setTimeout(() => {
            hung = true;
            child.kill("SIGKILL");
        }, hangGuardMs);
        child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
        child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
        child.on("error", (error) => {
            clearTimeout(guard);
            reject(error);
        });
        child.on("close", (code) => {
            clearTimeout(guard);
            resolve({code, stdout, stderr, hung});
        });
    });
}
