import {spawn} from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import {describe, expect, it} from "vitest";
import {cliCommand, cliForm, runCliCapturing} from "../../tools/spawnCli.js";
import {loadLlama} from "../../src/core/node/engine/loadLlama.js";
import {Core} from "../../src/core/node/Core.js";
import {startWebMode, webCoreProcessOf} from "../helpers/startWebMode.js";
import {requireTestModel} from "../helpers/testModel.js";
import {tempDir} from "../helpers/tempCore.js";

const modelPath = requireTestModel();

/** Environment of a process as it was started (Linux keeps it in /proc/<pid>/environ; setenv later does not change it). */
function startEnvironment(pid: number) {
    return Object.fromEntries(fs.readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").filter(Boolean)
        .map((entry) => [entry.slice(0, entry.indexOf("=")), entry.slice(entry.indexOf("=") + 1)]));
}

function childrenOf(pid: number) {
    return fs.readdirSync(`/proc/${pid}/task`).flatMap((task) => fs.readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").trim().split(/\s+/))
        .filter(Boolean).map(Number);
}

async function waitUntilGone(pid: number) {
    const deadline = Date.now() + 30_000; // a hang guard, not a timing claim
    while (fs.existsSync(`/proc/${pid}`) && !/^State:\s+Z/m.test(readStatus(pid))) {
        if (Date.now() > deadline)
            throw new Error(`process ${pid} is still running`);
        await new Promise((resolve) => setTimeout(resolve, 100));
    }
}

function readStatus(pid: number) {
    try {
        return fs.readFileSync(`/proc/${pid}/status`, "utf8");
    } catch {
        return "State:\tZ (gone)";
    }
}

/** A user's environment: no UV_THREADPOOL_SIZE, its own home and temp folder. */
function userEnv() {
    const home = tempDir("pool");
    return {CLEANROOM_HOME: home, TMPDIR: home, UV_THREADPOOL_SIZE: undefined};
}

describe.skipIf(process.platform !== "linux")("the core's libuv thread pool", () => {
    it("web mode runs its core in a process started with a one-thread pool, stops it on SIGTERM, and takes it down when killed", async () => {
        const web = await startWebMode(["--no-model"], userEnv());
        try {
            const core = webCoreProcessOf(web);
            expect(core).not.toBeNull();
            expect(startEnvironment(core!).UV_THREADPOOL_SIZE).toBe("1");
            expect(startEnvironment(web.process.pid!).UV_THREADPOOL_SIZE).toBeUndefined();
            expect((await fetch(web.url)).status).toBe(200);

            web.process.kill("SIGKILL"); // the process the user started dies without a word
            await waitUntilGone(core!);
        } finally {
            await web.stop();
        }

        const second = await startWebMode(["--no-model"], userEnv());
        const core = webCoreProcessOf(second);
        const exited = new Promise<number | null>((resolve) => second.process.once("exit", resolve));
        second.process.kill("SIGTERM");
        expect(await exited).toBe(0);
        await waitUntilGone(core!);
    });

    it.skipIf(modelPath == null)("`chat` runs its core with a one-thread pool though started without one, and its output and exit status come through", async () => {
        const env = {...process.env, ...userEnv()};
        const database = path.join(env.CLEANROOM_HOME, "chat.db");
        const turn = await runCliCapturing(["chat", "--model", modelPath!, "--prompt", "Once upon a time", "--max-tokens", "8", "--threads", "2", "--json", "--db", database], {env});
        expect(turn.code).toBe(0);
        expect(JSON.parse(turn.stdout)).toMatchObject({status: "complete"});

        const core = Core.create(await loadLlama(), {database});
        try {
            expect(core.auditEvents({kinds: ["model.loaded"]})[0]!.data).toMatchObject({uvThreadpoolSize: 1, threads: 2});
        } finally {
            await core.dispose();
        }

        const failed = await runCliCapturing(["chat", "--model", "/nowhere/model.gguf", "--prompt", "hi", "--db", database], {env});
        expect(failed.code).not.toBe(0);
        expect(failed.stderr).toMatch(/model/i);
    });

    it.skipIf(modelPath == null || cliForm() !== "compiled")("the compiled CLI sets the pool in its own process (no relaunch), and relaunches only when a module was preloaded", async () => {
        const started = await chatProcesses({UV_THREADPOOL_SIZE: "1"});
        const unset = await chatProcesses({UV_THREADPOOL_SIZE: undefined});
        const four = await chatProcesses({UV_THREADPOOL_SIZE: "4"});
        expect(unset.processes).toBe(1);
        // As many threads as a process started with a one-thread pool; libuv's default pool has three more.
        expect(unset.threads).toBe(started.threads);
        expect(four.threads).toBeGreaterThan(started.threads);

        const preload = path.join(tempDir("preload"), "preload.cjs");
        fs.writeFileSync(preload, "// a module preloaded with --require, which may have started the pool\n");
        const relaunched = await chatProcesses({UV_THREADPOOL_SIZE: undefined}, ["--require", preload]);
        expect(relaunched.processes).toBe(2);
        expect(relaunched.coreStartPool).toBe("1");
    });
});

/**
 * Starts an interactive `chat` and, once its first reply is printed, counts the processes of its
 * tree and the threads of the one that runs the core (the newest), then leaves it with /quit.
 */
async function chatProcesses(extraEnv: NodeJS.ProcessEnv, nodeArgs: string[] = []) {
    const home = tempDir("pool-chat");
    const {command, args} = cliCommand(["chat", "--model", modelPath!, "--db", path.join(home, "chat.db"), "--threads", "2", "--max-tokens", "16"], {nodeArgs});
    const child = spawn(command, args, {env: {...process.env, CLEANROOM_HOME: home, TMPDIR: home, ...extraEnv}, stdio: ["pipe", "pipe", "pipe"]});
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    let output = "";
    const counted = await new Promise<{processes: number, threads: number, coreStartPool: string | undefined}>((resolve, reject) => {
        const guard = setTimeout(() => reject(new Error(`no reply; the CLI printed: ${output}`)), 60_000); // a hang guard
        child.stdout.on("data", (chunk: Buffer) => {
            output += chunk.toString("utf8");
            if (/assistant> [\s\S]*\nyou> $/.test(output)) {
                clearTimeout(guard);
                const pids = [child.pid!, ...childrenOf(child.pid!)];
                const corePid = pids.at(-1)!;
                resolve({
                    processes: pids.length, threads: fs.readdirSync(`/proc/${corePid}/task`).length,
                    coreStartPool: startEnvironment(corePid).UV_THREADPOOL_SIZE
                });
            }
        });
        child.stdin.write("Once upon a time\n");
    });
    child.stdin.end("/quit\n");
    expect(await exited).toBe(0);
    return counted;
}
