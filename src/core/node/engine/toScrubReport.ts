import type {ScrubReport} from "../../common/types.js";
import type {SessionEnd} from "./ConversationContext.js";

/** A session end's scrub as the API reports it (durations rounded to the microsecond). */
export function toScrubReport(end: SessionEnd): ScrubReport {
    return {...scrubFactsOf(end), verified: end.verified};
}

/** What the audit records of a session end's scrub (`scrub.verified` or `scrub.failed`: the kind says whether it was verified); `recordedScrubOf` reads it back. */
export function scrubFactsOf(end: SessionEnd): Omit<ScrubReport, "verified"> {
    return {
        contextId: end.contextId,
        kvCells: end.kvCells,
        layers: end.layers,
        bytesZeroed: end.bytesZeroed,
        bytesChecked: end.bytesChecked,
        nonZeroBytes: end.nonZeroBytes,
        cellsReadBack: end.cellsReadBack,
        durationMs: Math.round(end.durationMs * 1000) / 1000,
        reason: end.reason,
        layoutSource: end.layoutSource
    };
}
