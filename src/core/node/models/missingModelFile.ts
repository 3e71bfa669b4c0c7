import fs from "node:fs";
import path from "node:path";
import type {MissingModelFile, RegisteredModel} from "../../common/models.js";

/**
 * Whether a registered model's file is gone, and what can put it right; null when the file is
 * there (readable or not: a file that cannot be read is a `problem`, not a missing file). A
 * folder that is gone too is named (the topmost one), since that is how a drive not mounted,
 * or a renamed folder, looks.
 */
export function missingModelFile(model: RegisteredModel): MissingModelFile | null {
    if (fs.existsSync(model.path))
        return null;

    let missingFolder: string | null = null;
    for (let folder = path.dirname(model.path); !fs.existsSync(folder); folder = path.dirname(folder)) {
        missingFolder = folder;
        if (path.dirname(folder) === folder)
            break;
    }
    const canDownload = model.origin === "download" && (model.catalogId != null || model.sourceRef != null);
    return {
        reason: missingFolder == null ? "file-gone" : "folder-gone",
        missingFolder,
        remedies: [...(missingFolder != null ? ["mount" as const] : []), "locate", ...(canDownload ? ["download" as const] : []), "remove"]
    };
}

/** The missing file in words, for the app's model list (`InstalledModel.problem`), with the remedies it offers. */
export function describeMissingModelFile(model: RegisteredModel, missing: MissingModelFile): string {
    const where = missing.missingFolder != null
        ? `The file is not at ${model.path}: the folder ${missing.missingFolder} is not there (moved, or on a drive that is not connected).`
        : `The file is not at ${model.path} (deleted or moved).`;
    const remedies = [
        missing.remedies.includes("mount") ? "connect the drive" : null,
        model.origin === "import" || model.origin === "download" ? "import the file from where it is now"
            : `use it from "Found on this computer" once ${originApp[model.origin]} has it again`,
        missing.remedies.includes("download") ? "download it again" : null
    ].filter((remedy) => remedy != null);
    return `${where} To use it again, ${remedies.join(", or ")}.`;
}

const originApp: Record<RegisteredModel["origin"], string> = {
    download: "Cleanroom", import: "Cleanroom", lmstudio: "LM Studio", ollama: "Ollama", jan: "Jan", gpt4all: "GPT4All"
};
