import fs from "node:fs";

/** Set to `1`: the process prints when each phase of its start and of its turn ended, on stderr, as it exits. */
export const startupTraceEnv = "CLEANROOM_TRACE_STARTUP";
/** The line's prefix; the JSON of `StartupTrace` follows it. */
export const startupTracePrefix = "cleanroom startup trace: ";
/** Where bin/cleanroom.cjs leaves `performance.now()` at its first line and once the compiled CLI was checked. */
const launcherMarksKey = Symbol.for("cleanroom.launcherMarks");

export type StartupTrace = {
    /**
     * Each phase in the order it ended: when (ms since the process started) and how long it took;
     * `cpuMs`, the CPU time (user + system, all threads of this process) since the previous phase
     * that has one: the launcher's two marks have none, so the first phase of the CLI counts from the process's start.
     */
    phases: Array<{phase: string, endedAtMs: number, ms: number, cpuMs?: number}>,
    /** What the phases found out, e.g. `llamaBuild` (see `describeLlamaBuild`). */
    facts: Record<string, string | number>
};

const traced = process.env[startupTraceEnv] === "1";
const phases: StartupTrace["phases"] = [];
const facts: StartupTrace["facts"] = {};
let printsAtExit = false;

/**
 * Notes that `phase` ended now, with what it found out; does nothing unless CLEANROOM_TRACE_STARTUP=1.
 * Normal output is never touched: the trace is one line on stderr when the process exits.
 */
export function traceStartup(phase: string, found?: Record<string, string | number>) {
    if (!traced)
        return;
    if (!printsAtExit) {
        printsAtExit = true;
        const launcher = (globalThis as Record<symbol, {startedMs?: number, bundleCheckedMs?: number} | undefined>)[launcherMarksKey];
        if (launcher?.startedMs != null)
            mark("node started", launcher.startedMs);
        if (launcher?.bundleCheckedMs != null)
            mark("compiled CLI checked", launcher.bundleCheckedMs);
        process.once("exit", () => fs.writeSync(2, startupTracePrefix + JSON.stringify({phases, facts} satisfies StartupTrace) + "\n"));
    }
    const cpu = process.cpuUsage();
    const cpuMs = (cpu.user + cpu.system) / 1000;
    mark(phase, performance.now(), cpuMs - cpuMsAtLastPhase);
    cpuMsAtLastPhase = cpuMs;
    Object.assign(facts, found);
}

let cpuMsAtLastPhase = 0;

function mark(phase: string, atMs: number, cpuMs?: number) {
    const round = (ms: number) => Math.round(ms * 10) / 10;
    phases.push({phase, endedAtMs: round(atMs), ms: round(atMs - (phases.at(-1)?.endedAtMs ?? 0)), ...(cpuMs != null ? {cpuMs: round(cpuMs)} : {})});
}

/** The trace in a process's stderr (`traceStartup`), or null when there is none. */
export function parseStartupTrace(stderr: string): StartupTrace | null {
    const line = stderr.split("\n").find((candidate) => candidate.startsWith(startupTracePrefix));
    return line == null ? null : JSON.parse(line.slice(startupTracePrefix.length)) as StartupTrace;
}
