import {CleanroomError} from "../../common/errors.js";
import {formatBytes} from "../../common/formatBytes.js";

/** What a full disk did to a download, and what is left of it. */
export type DiskFullFacts = {
    /** The folder the model was being saved in. */
    dir: string,
    /** `before`: refused up front; `during`: the disk filled while the file was being written. */
    phase: "before" | "during",
    /** Free bytes on that disk when it was checked (after the partial file was deleted, when it was). */
    freeBytes: number,
    /** Bytes the download still needed to fetch, when the size is known. */
    stillToFetchBytes: number | null,
    /** Bytes kept free for the system beyond the file (`diskReserveBytes`). */
    reserveBytes: number,
    /** Bytes written before the disk filled. */
    writtenBytes: number,
    /** What stopped it: the free space under the reserve (`reserve`, before or during), or the write error (`ENOSPC`, `EDQUOT`, `EFBIG`). */
    trigger: "reserve" | "ENOSPC" | "EDQUOT" | "EFBIG",
    /** `deleted` (the default: the space is given back), `kept` (a resume continues from there), or `none` (nothing was written). */
    partial: "deleted" | "kept" | "none"
};

/**
 * The disk cannot hold a model download: refused before it starts, or stopped when the disk
 * filled during the transfer (ENOSPC, a quota, or the free space falling under the reserve
 * because something else wrote to the disk). Says how many bytes were needed and available,
 * and what happened to the partial file.
 */
export class DiskFullError extends CleanroomError {
    public override readonly code = "DISK_FULL";
    public readonly facts: DiskFullFacts;

    public constructor(facts: DiskFullFacts, cause?: unknown) {
        super("DISK_FULL", describe(facts), {
            dir: facts.dir, phase: facts.phase, freeBytes: facts.freeBytes, stillToFetchBytes: facts.stillToFetchBytes,
            reserveBytes: facts.reserveBytes, neededBytes: neededBytes(facts), shortBytes: shortBytes(facts),
            trigger: facts.trigger, writtenBytes: facts.writtenBytes, keptBytes: facts.partial === "kept" ? facts.writtenBytes : 0, partial: facts.partial
        }, {cause});
        this.name = "DiskFullError";
        this.facts = facts;
    }
}

function neededBytes(facts: DiskFullFacts): number | null {
    return facts.stillToFetchBytes == null ? null : facts.stillToFetchBytes + facts.reserveBytes;
}

function shortBytes(facts: DiskFullFacts): number | null {
    const needed = neededBytes(facts);
    return needed == null ? null : Math.max(0, needed - facts.freeBytes);
}

function describe(facts: DiskFullFacts): string {
    const needed = neededBytes(facts);
    const need = needed == null
        ? `${formatBytes(facts.freeBytes)} is free and the server did not say how large the file is`
        : `the download needs ${formatBytes(needed)} (${formatBytes(facts.stillToFetchBytes!)} still to fetch + ${formatBytes(facts.reserveBytes)} kept free), ` +
            `${formatBytes(facts.freeBytes)} is free: ${formatBytes(shortBytes(facts)!)} short`;
    if (facts.phase === "before")
        return `Not enough disk space in ${facts.dir}: ${need}. Nothing was downloaded.`;

    const partial = facts.partial === "kept"
        ? `The ${formatBytes(facts.writtenBytes)} received were kept: free some space and run the same download again to resume from there.`
        : facts.partial === "deleted"
            ? `The partial file (${formatBytes(facts.writtenBytes)}) was deleted to give the space back; free some space and download again.`
            : "Nothing was written.";
    const why = facts.trigger === "reserve" ? `less than the ${formatBytes(facts.reserveBytes)} kept free was left` : `writing failed with ${facts.trigger}`;
    return `The disk is full (${why}): the download into ${facts.dir} stopped after ${formatBytes(facts.writtenBytes)}; ${need}. ${partial}`;
}
