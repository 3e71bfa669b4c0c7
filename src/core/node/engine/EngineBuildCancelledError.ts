import {CleanroomError} from "../../common/errors.js";

/** The build of llama.cpp for this CPU was cancelled; what it had made was removed, so the prebuilt engine stays in use. */
export class EngineBuildCancelledError extends CleanroomError {
    public override readonly code = "ENGINE_BUILD_CANCELLED";

    public constructor() {
        super("ENGINE_BUILD_CANCELLED", "The engine build was cancelled; what it had made was removed and the prebuilt engine stays in use.");
        this.name = "EngineBuildCancelledError";
    }
}
