import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {afterEach, describe, expect, it} from "vitest";
import {startServe, type ServeProcess} from "../helpers/startServe.js";
import {tempDir} from "../helpers/tempCore.js";
import {requireTestModel} from "../helpers/testModel.js";

const modelPath = requireTestModel();
const cores = os.availableParallelism();
/** A user's environment: no UV_THREADPOOL_SIZE, so that serve chooses its pool (the tests' own environment gives the core's). */
const userEnv = {UV_THREADPOOL_SIZE: undefined};

const servers: ServeProcess[] = [];
afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.stop()));
});

async function serve(args: string[], nodeArgs: string[] = []) {
    const server = await startServe(modelPath!, args, {nodeArgs}, userEnv);
    servers.push(server);
    return server;
}

/** Its `Threads:` line: the libuv pool, the threads of a context decoding alone, and the cap on all decodes at once (null: none). */
async function threadingOf(server: ServeProcess) {
    const line = await server.output.waitFor(/Threads: libuv pool \d+ .*\n/);
    return {
        pool: Number(/libuv pool (\d+)/.exec(line)![1]),
        perContext: Number(/(\d+) threads? per context/.exec(line)![1]),
        inAll: /at most (\d+) in all/.exec(line) == null ? null : Number(/at most (\d+) in all/.exec(line)![1])
    };
}

/** The process that runs serve's core: the one started, or the child it relaunched itself as. */
function coreProcessOf(server: ServeProcess) {
    const children = fs.readdirSync(`/proc/${server.child.pid}/task`)
        .flatMap((task) => fs.readFileSync(`/proc/${server.child.pid}/task/${task}/children`, "utf8").trim().split(/\s+/)).filter(Boolean);
    return Number(children.at(-1) ?? server.child.pid);
}

function threadCount(pid: number) {
    return fs.readdirSync(`/proc/${pid}/task`).length;
}

function startEnvironment(pid: number) {
    return Object.fromEntries(fs.readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").filter(Boolean)
        .map((entry) => [entry.slice(0, entry.indexOf("=")), entry.slice(entry.indexOf("=") + 1)]));
}

async function complete(server: ServeProcess, prompt: string) {
    const response = await fetch(`${server.baseUrl}/completions`, {
        method: "POST", headers: {"content-type": "application/json"},
        body: JSON.stringify({model: "stories260K", prompt, max_tokens: 16, temperature: 0})
    });
    expect(response.status).toBe(200);
    return (await response.json() as {choices: Array<{text: string}>}).choices[0]!.text;
}

describe.skipIf(modelPath == null || process.platform !== "linux")("cleanroom serve's threads: a libuv pool thread per request decoding at once, the cores shared among them", () => {
    it("started as a user starts it, runs min(--parallel, cores) decodes at once on as many pool threads, all of them within the cores; answers requests at once alike", async () => {
        const one = await serve(["--parallel", "1"]);
        expect(await threadingOf(one)).toEqual({pool: 1, perContext: 1, inAll: null});
        const server = await serve(["--parallel", "2", "--threads", "2"]);
        const threading = await threadingOf(server);
        const pool = Math.min(2, cores);
        expect(threading.pool).toBe(pool);
        // The pool is real: libuv's threads are there from its first use (a file read at start), before any request; nothing else differs.
        expect(threadCount(server.child.pid!) - threadCount(one.child.pid!)).toBe(pool - 1);
        expect(startEnvironment(server.child.pid!).UV_THREADPOOL_SIZE).toBeUndefined(); // set by the launcher in its own process: no relaunch
        // Two contexts decoding at once share the cores: each alone may take its 2 threads, both together at most the cores.
        expect(threading).toEqual(pool > 1 ? {pool, perContext: 2, inAll: cores} : {pool, perContext: 2, inAll: null});

        // Two requests decoding at once give what each gives alone (greedy: nothing shared between their contexts).
        const alone = [await complete(server, "Once upon a time, a cat"), await complete(server, "The little dog ran")];
        expect(await Promise.all([complete(server, "Once upon a time, a cat"), complete(server, "The little dog ran")])).toEqual(alone);
    });

    it("relaunched after a preload, still gets serve's pool, not the core's", async () => {
        // A preloaded module may have started the pool: the launcher leaves it alone, and the command relaunches itself with serve's pool.
        const preload = path.join(tempDir("serve-preload"), "preload.cjs");
        fs.writeFileSync(preload, "// a module preloaded with --require, which may have started the pool\n");
        const relaunched = await serve(["--parallel", "8"], ["--require", preload]);
        const threading = await threadingOf(relaunched);
        const core = coreProcessOf(relaunched);
        expect(core).not.toBe(relaunched.child.pid);
        expect(startEnvironment(core).UV_THREADPOOL_SIZE).toBe(String(Math.min(8, cores)));
        expect(threading).toEqual({pool: Math.min(8, cores), perContext: 1, inAll: cores > 1 ? cores : null});
    });
});
