import {spawn, spawnSync} from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {pathToFileURL} from "node:url";
import {cliCommand} from "../../../tools/spawnCli.js";
import type {NetAttempt} from "./netGuard.js";
import {testBuildScript} from "../../helpers/testBuild.js";
import {SocketWatcher, type SocketWatchReport} from "./socketWatcher.js";

export type NetworkObservation = {
    exitCode: number | null,
    stdout: string,
    stderr: string,
    /** JS-level attempts recorded by the preloaded guard. */
    guard: NetAttempt[],
    /** /proc poll of the process tree. */
    sockets: SocketWatchReport,
    /** System calls creating or connecting IPv4/IPv6/packet sockets, as strace saw them; null when strace is unavailable. */
    strace: {networkCalls: string[], tracedCalls: number} | null
};

export type ObserveOptions = {
    /** `block` (default): the guard throws on each attempt; `record`: it lets them through for native observers to see. */
    guardMode?: "block" | "record",
    /** Modules to preload after the guard (the controls use one that opens a connection). */
    extraImports?: string[],
    env?: NodeJS.ProcessEnv,
    timeoutMs?: number
};

/** netGuard.ts, compiled in the test build (testBuild.ts): the CLI users run, with no tsx loaded before it. */
const guardPath = await testBuildScript("netGuard");

export function straceAvailable() {
    return process.platform === "linux" && spawnSync("strace", ["-V"], {stdio: "ignore"}).status === 0;
}

/**
 * Runs the CLI with three observers at once: the JS guard (preload), a /proc socket poll of the
 * process tree, and strace on socket/connect/send system calls. Each sees what the others can miss:
 * the guard sees attempts it blocks before any socket exists; /proc sees native sockets; strace sees
 * every socket system call, however short-lived.
 */
export async function observeCli(args: string[], {guardMode = "block", extraImports = [], env = process.env, timeoutMs = 90_000}: ObserveOptions = {}): Promise<NetworkObservation> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cleanroom-net-"));
    const guardLog = path.join(dir, "guard.jsonl");
    const straceLog = path.join(dir, "strace.txt");
    // The guard is preloaded before any app code.
    const cli = cliCommand(args, {
        nodeArgs: ["--import", pathToFileURL(guardPath).href, ...extraImports.flatMap((file) => ["--import", pathToFileURL(file).href])]
    });
    const nodeArgs = cli.args;
    const useStrace = straceAvailable();
    const command = useStrace ? "strace" : cli.command;
    const commandArgs = useStrace
        ? ["-f", "-qq", "--seccomp-bpf", "-e", "trace=execve,socket,connect,sendto,sendmsg,sendmmsg", "-o", straceLog, cli.command, ...nodeArgs]
        : nodeArgs;

    try {
        const child = spawn(command, commandArgs, {
            stdio: ["ignore", "pipe", "pipe"],
            env: {...env, CLEANROOM_NET_GUARD_LOG: guardLog, CLEANROOM_NET_GUARD_MODE: guardMode}
        });
        const watcher = new SocketWatcher(child.pid!, 5).start();
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
        child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
        const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
        const exitCode = await new Promise<number | null>((resolve, reject) => {
            child.on("error", reject);
            child.on("close", (code) => resolve(code));
        });
        clearTimeout(timer);
        const sockets = watcher.stop();

        const guard = fs.existsSync(guardLog)
            ? fs.readFileSync(guardLog, "utf8").trim().split("\n").filter((line) => line !== "").map((line) => JSON.parse(line) as NetAttempt)
            : [];
        let strace: NetworkObservation["strace"] = null;
        if (useStrace) {
            const lines = fs.readFileSync(straceLog, "utf8").split("\n").filter((line) => line.trim() !== "");
            strace = {
                tracedCalls: lines.length,
                networkCalls: lines.filter((line) => /\b(AF_INET6?|AF_PACKET|PF_INET6?)\b/.test(line))
            };
        }
        return {exitCode, stdout, stderr, guard, sockets, strace};
    } finally {
        fs.rmSync(dir, {recursive: true, force: true});
    }
}
