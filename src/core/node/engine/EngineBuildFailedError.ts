import {CleanroomError} from "../../common/errors.js";

/** The build of llama.cpp for this CPU stopped with an error; the last lines of its output say why. Nothing half-made is kept. */
export class EngineBuildFailedError extends CleanroomError {
    public override readonly code = "ENGINE_BUILD_FAILED";
    /** The build's last output lines (not enumerable, so logging the error does not dump them). */
    public declare readonly outputTail: string;

    public constructor(exitCode: number | null, signal: string | null, outputTail: string) {
        super("ENGINE_BUILD_FAILED",
            `Building the engine for this CPU failed (${signal != null ? `stopped by ${signal}` : `exit code ${exitCode}`}); the prebuilt engine stays in use. ` +
            `Its last output:\n${outputTail}`,
            {exitCode, signal});
        this.name = "EngineBuildFailedError";
        Object.defineProperty(this, "outputTail", {value: outputTail, enumerable: false});
    }
}
