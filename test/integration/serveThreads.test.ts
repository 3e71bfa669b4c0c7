import fs from "node:fs";
import os from "node:os";
import {afterEach, describe, expect, it} from "vitest";
import {startServe, type ServeProcess} from "../helpers/startServe.js";
import {requireTestModel} from "../helpers/testModel.js";

const modelPath = requireTestModel();
const cores = os.availableParallelism();
/** A user's environment: no UV_THREADPOOL_SIZE (the tests' own environment gives the core's), so that the launcher sets serve's. */
const userEnv = {UV_THREADPOOL_SIZE: undefined};

const servers: ServeProcess[] = [];
afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.stop()));
});

async function serve(args: string[], env: NodeJS.ProcessEnv = {}) {
    const server = await startServe(modelPath!, args, {}, {...userEnv, ...env});
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

describe.skipIf(modelPath == null || process.platform !== "linux")("cleanroom serve's threads: the core's pool of 1 by default; with a larger pool, the cores shared among the requests decoding at once", () => {
    it("started as a user starts it, decodes one request at a time; with UV_THREADPOOL_SIZE=2, two at once on a real pool of 2, all their threads within the cores, and answers requests at once alike", async () => {
        const byDefault = await serve(["--parallel", "2", "--threads", "2"]);
        expect(await threadingOf(byDefault)).toEqual({pool: 1, perContext: 2, inAll: null});
        expect(startEnvironment(byDefault.child.pid!).UV_THREADPOOL_SIZE).toBeUndefined(); // set by the launcher in its own process

        const two = await serve(["--parallel", "2", "--threads", "2"], {UV_THREADPOOL_SIZE: "2"});
        // Two contexts decoding at once share the cores: each alone may take its 2 threads (at most the cores), both together at most the cores.
        expect(await threadingOf(two)).toEqual({pool: 2, perContext: Math.min(2, cores), inAll: cores});
        // The pool is real: libuv's threads are there from its first use (a file read at start), before any request (at least one
        // more: a lazily started thread of another library must not fail this).
        expect(threadCount(two.child.pid!) - threadCount(byDefault.child.pid!)).toBeGreaterThanOrEqual(1);

        // Two requests decoding at once give what each gives alone (greedy: nothing shared between their contexts).
        const alone = [await complete(two, "Once upon a time, a cat"), await complete(two, "The little dog ran")];
        expect(await Promise.all([complete(two, "Once upon a time, a cat"), complete(two, "The little dog ran")])).toEqual(alone);
    });
});
