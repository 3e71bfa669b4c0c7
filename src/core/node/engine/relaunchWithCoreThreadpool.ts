import {spawn} from "node:child_process";
import net from "node:net";
import os from "node:os";
import tty from "node:tty";
import {coreProcessEnv} from "../../common/coreProcessEnv.js";

/** Set in the relaunched process: the file descriptor of the pipe its parent holds open while it lives. */
const lifelineEnv = "CLEANROOM_CORE_LIFELINE";
const lifelineFd = 3;

/**
 * Makes sure the process that is about to run the core has `coreProcessEnv` (a one-thread libuv
 * pool), which only works if it is there when the process starts. Resolves at once in a process
 * that was started with `UV_THREADPOOL_SIZE` set, to any value (a user's own choice is kept).
 * Otherwise runs this same command again with it, on the same terminal and stdio, forwards
 * SIGTERM and SIGHUP (and SIGINT when no terminal delivers it to both), exits with the child's
 * status, and never resolves. The child ends itself at once if this process dies without
 * waiting for it (SIGKILL), so no core outlives the process its caller started.
 */
export async function relaunchWithCoreThreadpool(): Promise<void> {
    if (process.env[lifelineEnv] === String(lifelineFd)) {
        dieWithParent();
        return;
    }
    if (process.env.UV_THREADPOOL_SIZE != null)
        return;

    const child = spawn(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
        stdio: ["inherit", "inherit", "inherit", "pipe"],
        env: {...process.env, ...coreProcessEnv, [lifelineEnv]: String(lifelineFd)}
    });
    // Ctrl-C on a terminal reaches the whole foreground process group, the child included.
    const terminal = tty.isatty(0);
    const forwarded: NodeJS.Signals[] = terminal ? ["SIGTERM", "SIGHUP"] : ["SIGINT", "SIGTERM", "SIGHUP"];
    for (const signal of forwarded)
        process.on(signal, () => child.kill(signal));
    if (terminal)
        process.on("SIGINT", () => undefined); // wait for the child's own exit
    await new Promise<never>(() => {
        child.once("error", (error) => {
            process.stderr.write(`cleanroom: could not start the core process: ${error.message}\n`);
            process.exit(1);
        });
        child.once("exit", (code, signal) => process.exit(code ?? 128 + (signal == null ? 0 : os.constants.signals[signal])));
    });
}

function dieWithParent() {
    delete process.env[lifelineEnv]; // processes this one starts are not relaunched children
    try {
        const lifeline = new net.Socket({fd: lifelineFd, readable: true, writable: false});
        lifeline.on("error", () => undefined);
        lifeline.once("close", () => process.kill(process.pid, "SIGKILL"));
        lifeline.resume();
        lifeline.unref();
    } catch {
        // No pipe at that descriptor: nothing to watch.
    }
}
