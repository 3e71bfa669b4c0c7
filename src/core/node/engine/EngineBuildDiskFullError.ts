import {CleanroomError} from "../../common/errors.js";
import {formatBytes} from "../../common/formatBytes.js";

/** The disk filled while llama.cpp was being built for this CPU; the half-made build was removed. */
export class EngineBuildDiskFullError extends CleanroomError {
    public override readonly code = "DISK_FULL";

    public constructor(directory: string, freeBytes: number | null) {
        super("DISK_FULL",
            `The disk is full: building the engine into ${directory} stopped (no space left on device${freeBytes == null ? "" : `, ${formatBytes(freeBytes)} free now`}). ` +
            "The half-made build was removed and the prebuilt engine stays in use; free about 1 GB and build again.",
            {dir: directory, freeBytes});
        this.name = "EngineBuildDiskFullError";
    }
}
