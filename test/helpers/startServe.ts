import {spawn, type ChildProcessWithoutNullStreams} from "node:child_process";
import {coreProcessEnv} from "../../src/core/common/coreProcessEnv.js";
import {cliCommand, type CliCommandOptions} from "../../src/cli/cliCommand.js";
import {hermeticCliEnv} from "./cliEnv.js";
import {watchOutput, type WatchedOutput} from "./watchOutput.js";

export type ServeProcess = {
    /** The first line it printed: `http://127.0.0.1:<port>/v1`. */
    baseUrl: string,
    /** Its audit database. */
    db: string,
    child: ChildProcessWithoutNullStreams,
    output: WatchedOutput,
    /** SIGTERM, then its exit code once it has ended. */
    stop(): Promise<number | null>
};

/**
 * A real `cleanroom serve` process on a free port (`--port 0`), in its own CLEANROOM_HOME and
 * database, on the test model with one thread and the core's libuv pool (`extraEnv` may unset it);
 * resolves once it has printed its base URL.
 */
export async function startServe(modelPath: string, args: string[] = [], command: CliCommandOptions = {}, extraEnv: NodeJS.ProcessEnv = {}): Promise<ServeProcess> {
    const {env, db} = hermeticCliEnv("serve", extraEnv);
    const {command: executable, args: fullArgs} = cliCommand(
        ["serve", "--port", "0", "--model", modelPath, "--db", db, "--threads", "1", ...args], command);
    const child = spawn(executable, fullArgs, {env: {...coreProcessEnv, ...env}, stdio: ["pipe", "pipe", "pipe"]});
    const output = watchOutput(child);
    let stdout = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    await output.waitFor(/http:\/\/\S+\/v1\n/, {timeoutMs: 120_000});
    const baseUrl = stdout.split("\n")[0]!;
    return {
        baseUrl, db, child, output,
        stop: async () => {
            if (child.exitCode == null && child.signalCode == null)
                child.kill("SIGTERM");
            return await output.exited;
        }
    };
}
