import type {ScrubReport} from "../../common/types.js";
import type {SessionEnd} from "./ConversationContext.js";

/** A session end's scrub as the API reports it (durations rounded to the microsecond). */
export function toScrubReport(end: SessionEnd): ScrubReport {
    return {
        contextId: end.contextId,
        kvCells: end.kvCells,
        layers: end.layers,
        bytesZeroed: end.bytesZeroed,
        bytesChecked: end.bytesChecked,
        nonZeroBytes: end.nonZeroBytes,
        cellsReadBack: end.cellsReadBack,
        verified: end.verified,
        durationMs: Math.round(end.durationMs * 1000) / 1000,
        reason: end.reason,
        layoutSource: end.layoutSource
    };
}
