import {ScrubUnverifiedError} from "./errors.js";

/**
 * Waits for `work` (the end of a session) and hands back a `ScrubUnverifiedError` instead of
 * throwing it, so that the caller can finish what it was doing (print the reply, delete the
 * conversation) before it throws the fault. Any other error is thrown.
 */
export async function catchScrubFault<T>(work: Promise<T>): Promise<{value: T | null, fault: ScrubUnverifiedError | null}> {
    try {
        return {value: await work, fault: null};
    } catch (error) {
        if (!(error instanceof ScrubUnverifiedError))
            throw error;
        return {value: null, fault: error};
    }
}
