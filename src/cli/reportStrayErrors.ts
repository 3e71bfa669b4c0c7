import {toWireError} from "../core/common/errors.js";
import {exitCodes, reportError} from "./output.js";

/**
 * Errors no command awaits are reported like any other (`reportError`: code and message, JSON with
 * --json, a stack only with CLEANROOM_DEBUG=1), never as Node's stack trace: a listener that throws
 * (lifecycle-utils' EventRelay hands its error to `console.error`), an unhandled rejection, an
 * uncaught exception. The same error reported again (one cause, several listeners) is shown once.
 * An uncaught exception or unhandled rejection still ends the process, as it would without this.
 */
export function reportStrayErrors(json: boolean) {
    const shown = new Set<string>();
    const report = (error: unknown) => {
        const wire = toWireError(error);
        const key = `${wire.code}\n${wire.message}`;
        if (!shown.has(key)) {
            shown.add(key);
            reportError(error, json);
        } else if (process.exitCode !== exitCodes.securityFault)
            process.exitCode = exitCodes.error;
    };
    const end = (error: unknown) => {
        report(error);
        process.exit();
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
