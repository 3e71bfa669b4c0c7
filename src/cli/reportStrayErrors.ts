import {CleanroomError, describeErrorLocally, toWireError} from "../core/common/errors.js";
import {closeOpenCores} from "./openCores.js";
import {exitCodes, reportError} from "./output.js";

/**
 * Errors no command awaits are reported like any other (`reportError`: code and message, JSON with
 * --json, a stack only with CLEANROOM_DEBUG=1), never as Node's stack trace: a listener that throws
 * (lifecycle-utils' EventRelay hands its error to `console.error`), an unhandled rejection, an
 * uncaught exception. The same error reported again (one cause, several listeners) is shown once.
 * An uncaught exception or unhandled rejection still ends the process, as it would without this,
 * once every core the process opened has closed (its sessions ended and scrubbed): exit 4 when
 * they could not close in time.
 */
/** How long a stray error waits for open sessions to end scrubbed before the process exits anyway. */
const sessionEndLimitMs = 20_000;

export function reportStrayErrors(json: boolean) {
    const shown = new Set<string>();
    const report = (error: unknown) => {
        const wire = toWireError(error, () => undefined);
        const key = wire.code === "INTERNAL" ? describeErrorLocally(error) : `${wire.code}\n${wire.message}`;
        if (!shown.has(key)) {
            shown.add(key);
            reportError(error, json);
        } else if (process.exitCode !== exitCodes.securityFault)
            process.exitCode = exitCodes.error;
    };
    let ending = false;
    const end = (error: unknown) => {
        report(error);
        if (ending)
            return;

        ending = true;
        // Open sessions still end scrubbed, as at a normal exit, before the process goes.
        void closeOpenCores(sessionEndLimitMs).then((outcome) => {
            if (outcome === "timed out") {
                reportError(new CleanroomError("SCRUB_UNVERIFIED",
                    `The open sessions did not end within ${sessionEndLimitMs / 1000} s of the error above, so their scrubs are not verified.`), json);
            }
            process.exit();
        });
    };
    process.on("uncaughtException", end);
    process.on("unhandledRejection", end);

    const consoleError = console.error.bind(console);
    console.error = (...args: unknown[]) => {
        const errors = args.filter((arg) => arg instanceof Error);
        if (errors.length === 0)
            consoleError(...args);
        else
            errors.forEach(report);
    };
}
