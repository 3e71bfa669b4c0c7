import {toWireError} from "../core/common/errors.js";

/**
 * Exit codes of the CLI. 3: a cloud reply was blocked, or `audit` found a leak or an accepted
 * oversize request. 4: a security fault (a KV scrub that could not be verified, a failed self-test).
 */
export const exitCodes = {ok: 0, error: 1, usage: 2, blocked: 3, leakFound: 3, securityFault: 4} as const;

export function printJson(value: unknown) {
    process.stdout.write(JSON.stringify(value, null, 2) + "\n");
}

const shownFaults = new Set<string>();

/**
 * Errors go to stderr (as JSON with --json) and set a non-zero exit code: 4 for a scrub that could
 * not be verified (`SCRUB_UNVERIFIED`, shown once however many paths report it), else 1.
 */
export function reportError(error: unknown, json: boolean, write: (text: string) => void = (text) => process.stderr.write(text)) {
    const wire = toWireError(error);
    if (wire.code === "SCRUB_UNVERIFIED") {
        process.exitCode = exitCodes.securityFault;
        if (shownFaults.has(wire.message))
            return;
        shownFaults.add(wire.message);
    }
    if (json)
        write(JSON.stringify({error: wire}) + "\n");
    else
        write(`cleanroom: ${wire.message}${wire.code !== "INTERNAL" ? ` [${wire.code}]` : ""}\n`);

    if (process.env.CLEANROOM_DEBUG === "1" && error instanceof Error)
        write(`${error.stack}\n`);
    if (process.exitCode !== exitCodes.securityFault)
        process.exitCode = exitCodes.error;
}

/** A warning on stderr: `Warning: …`, or `{"warning":{"code","message"}}` on a line with --json. */
export function reportWarning(warning: {code: string, message: string}, json: boolean) {
    process.stderr.write(json ? JSON.stringify({warning}) + "\n" : `Warning: ${warning.message}\n`);
}
