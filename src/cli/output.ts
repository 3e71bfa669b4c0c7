import {toWireError} from "../core/common/errors.js";

/**
 * Exit codes of the CLI. 3: a cloud reply was blocked, or `audit` found a leak or an accepted
 * oversize request. 4: a security fault (a KV scrub that could not be verified, a failed self-test).
 * 5: a cloud request held secrets and was not sent (`SECRET_IN_CLOUD_REQUEST`).
 */
export const exitCodes = {ok: 0, error: 1, usage: 2, blocked: 3, leakFound: 3, securityFault: 4, secretFound: 5} as const;

export function printJson(value: unknown) {
    process.stdout.write(JSON.stringify(value, null, 2) + "\n");
}

const shownFaults = new Set<string>();

/**
 * Errors go to stderr (as JSON with --json) and set a non-zero exit code: 4 for a scrub that could
 * not be verified (`SCRUB_UNVERIFIED`, shown once however many paths report it), 5 for a cloud
 * request held back for its secrets (each listed by kind, place and masked preview), else 1.
 * An error without a Cleanroom code is `INTERNAL` (`toWireError`); the core runs in this process,
 * so its stderr is the core's local log, and the detail is shown: `internal error: <class> [<code>]:
 * <message>`, or beside the error as `internal` with --json.
 */
export function reportError(error: unknown, json: boolean, write: (text: string) => void = (text) => process.stderr.write(text)) {
    let internal: string | null = null;
    const wire = toWireError(error, (detail) => {
        internal = detail;
    });
    if (wire.code === "SCRUB_UNVERIFIED") {
        process.exitCode = exitCodes.securityFault;
        if (shownFaults.has(wire.message))
            return;
        shownFaults.add(wire.message);
    }
    if (json)
        write(JSON.stringify(internal == null ? {error: wire} : {error: wire, internal}) + "\n");
    else {
        write(internal != null
            ? `cleanroom: internal error: ${internal}\n`
            : `cleanroom: ${wire.message}${wire.code !== "INTERNAL" ? ` [${wire.code}]` : ""}\n`);
        if (wire.code === "SECRET_IN_CLOUD_REQUEST")
            write(describeSecretFindings(wire.details.findings));
    }

    if (process.env.CLEANROOM_DEBUG === "1" && error instanceof Error)
        write(`${error.stack}\n`);
    if (process.exitCode !== exitCodes.securityFault)
        process.exitCode = wire.code === "SECRET_IN_CLOUD_REQUEST" ? exitCodes.secretFound : exitCodes.error;
}

/** One line per secret found (masked preview, never the value), and how to send anyway. */
function describeSecretFindings(findings: unknown) {
    const lines = (Array.isArray(findings) ? findings as Array<Record<string, unknown>> : [])
        .map((finding) => `  ${String(finding.kind)}: ${String(finding.where)}, line ${String(finding.line)}: ${String(finding.preview)} (--allow-secret ${String(finding.kindId)})\n`);
    return lines.join("") + "  Send with --redact-secrets to replace each by a placeholder (put back in the reply), or --allow-secret <kind> to send a kind as it is.\n";
}

/** A warning on stderr: `Warning: …`, or `{"warning":{"code","message"}}` on a line with --json. */
export function reportWarning(warning: {code: string, message: string}, json: boolean) {
    process.stderr.write(json ? JSON.stringify({warning}) + "\n" : `Warning: ${warning.message}\n`);
}
