import {CleanroomError} from "../core/common/errors.js";
import type {MissingModelFile, RegisteredModel} from "../core/common/models.js";

/** The default model is registered, but its file is not where it was: which model, where, and the commands that put it right. */
export class MissingModelFileError extends CleanroomError {
    public constructor(model: RegisteredModel, missing: MissingModelFile) {
        super(
            "MODEL_FILE_MISSING",
            `The default model ${model.id} is registered at ${model.path}, but ${missingWhat(missing)}. ` +
                `To use it again: ${missingModelRemedies(model, missing).join("; or ")}.`,
            {id: model.id, path: model.path, reason: missing.reason, missingFolder: missing.missingFolder}
        );
        this.name = "MissingModelFileError";
    }
}

/** "the file is not there (deleted or moved)", or the folder that is gone. */
export function missingWhat(missing: MissingModelFile): string {
    return missing.missingFolder != null
        ? `the folder ${missing.missingFolder} is not there (moved, or on a drive that is not mounted)`
        : "the file is not there (deleted or moved)";
}

/** Each remedy of a missing model file as the command that applies it. */
export function missingModelRemedies(model: RegisteredModel, missing: MissingModelFile): string[] {
    return missing.remedies.map((remedy) => {
        switch (remedy) {
            case "mount":
                return `mount the drive or restore the folder ${missing.missingFolder}`;
            case "locate":
                return model.origin === "import" || model.origin === "download"
                    ? "find the file and register it where it is now with `cleanroom models import <file>`"
                    : `let ${model.origin} download it again, then \`cleanroom models detect --add\``;
            case "download":
                return `download it again with \`cleanroom models download ${model.catalogId ?? model.sourceRef}\``;
            case "remove":
                return `forget it with \`cleanroom models remove ${model.id}\` (then choose another with \`cleanroom models default\`)`;
        }
    });
}
