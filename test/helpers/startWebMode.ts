import {spawn, type ChildProcess} from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import {WebSocket} from "ws";
import {connectCoreClient, type ConnectedCoreClient} from "../../src/core/common/rpc/index.js";
import {webSocketChannel} from "../../src/web/webSocketChannel.js";
import {preloadsTypeScript, testBuildCommand} from "./testBuild.js";
import {repoRoot} from "./testModel.js";

export type WebMode = {
    url: string,
    /** What the process printed on stdout before its URL line. */
    linesBeforeUrl: string[],
    process: ChildProcess,
    stderr: () => string,
    stop(): Promise<void>
};

/** The launchers users run (`npm run web`, `npm start`): the compiled bundle, rebuilt first when stale. */
const launchers = {web: "bin/web.mjs", start: "bin/start.mjs"} as const;

/**
 * Runs `npm run web`'s launcher (or `entry`'s, such as `npm start`'s) as a child process and resolves
 * with the URL line it prints. `nodeArgs` go to node before it, e.g. `--import` of a forced-fault
 * preload, which web mode's core process inherits (fork passes on execArgv). A preload of
 * test/helpers (`*.preload.ts`) is run compiled, from the test build (testBundle.ts), with that build's
 * web mode, whose modules it shares: no process loads tsx.
 * `stdin` "pipe" gives the test web mode's stdin, which its first core process shares (a hold preload's releases).
 */
export async function startWebMode(args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 180_000, entry: keyof typeof launchers = "web",
    nodeArgs: string[] = [], stdin: "ignore" | "pipe" = "ignore"): Promise<WebMode> {
    const child = spawn(process.execPath, [...await webModeCommand(entry, nodeArgs), ...args], {
        cwd: repoRoot,
        env: {...process.env, ...env},
        stdio: [stdin, "pipe", "pipe"]
    });
    let stdout = "";
    let stderr = "";
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => stderr += chunk);

    const stop = () => new Promise<void>((resolve) => {
        if (child.exitCode != null || child.signalCode != null) {
            resolve();
            return;
        }
        const force = setTimeout(() => child.kill("SIGKILL"), 15_000);
        child.once("exit", () => {
            clearTimeout(force);
            resolve();
        });
        child.kill("SIGTERM");
    });

    return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
            void stop();
            reject(new Error(`web mode printed no URL within ${timeoutMs} ms. stderr:\n${stderr}`));
        }, timeoutMs);
        child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
            stdout += chunk;
            const lines = stdout.split("\n");
            const urlIndex = lines.findIndex((candidate) => candidate.startsWith("http://"));
            if (urlIndex >= 0) {
                clearTimeout(timer);
                resolve({url: lines[urlIndex]!.trim(), linesBeforeUrl: lines.slice(0, urlIndex), process: child, stderr: () => stderr, stop});
            }
        });
        child.once("exit", (code) => {
            clearTimeout(timer);
            reject(new Error(`web mode exited with ${code} before printing its URL. stderr:\n${stderr}`));
        });
    });
}

/** Node's arguments up to web mode's own: `nodeArgs` and the launcher, or with a TypeScript preload the test build's compiled preload and entry. */
async function webModeCommand(entry: keyof typeof launchers, nodeArgs: string[]): Promise<string[]> {
    if (!preloadsTypeScript(nodeArgs))
        return [...nodeArgs, path.join(repoRoot, launchers[entry])];
    const compiled = await testBuildCommand(entry, nodeArgs);
    return [...compiled.nodeArgs, compiled.entry];
}

/** A core client over web mode's WebSocket, as the page connects (its token, its Origin). `close()` ends both. */
export async function connectToWebMode(web: WebMode): Promise<{client: ConnectedCoreClient, close(): void}> {
    const url = new URL(web.url);
    const socket = new WebSocket(`ws://${url.host}/rpc?token=${url.searchParams.get("token")}`, {headers: {origin: url.origin}});
    await new Promise((resolve, reject) => socket.once("open", resolve).once("error", reject));
    const client = connectCoreClient(webSocketChannel(socket));
    return {client, close: () => {
        client.close();
        socket.close();
    }};
}

/** One question to web mode's core over a connection of its own (as another window would ask), closed after. */
export async function askWebMode<T>(web: WebMode, ask: (client: ConnectedCoreClient) => Promise<T>): Promise<T> {
    const connection = await connectToWebMode(web);
    try {
        return await ask(connection.client);
    } finally {
        connection.close();
    }
}

/**
 * Web mode's core process (webCoreEntry.mjs of the compiled bundle, a child of the process serving
 * the page) while exactly one runs; null between two (after a lock or a
 * crash). Linux only (/proc).
 */
export function webCoreProcessOf(web: WebMode): number | null {
    const pid = web.process.pid!;
    const children = fs.readdirSync(`/proc/${pid}/task`).flatMap((task) => {
        try {
            return fs.readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
        } catch {
            return [];
        }
    });
    const cores = children.filter((child) => {
        try {
            return fs.readFileSync(`/proc/${child}/cmdline`, "utf8").includes("webCoreEntry");
        } catch {
            return false;
        }
    });
    return cores.length === 1 ? cores[0]! : null;
}
