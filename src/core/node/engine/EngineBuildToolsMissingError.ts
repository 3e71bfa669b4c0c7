import {CleanroomError} from "../../common/errors.js";
import type {LlamaBuildTool} from "./findLlamaBuildTools.js";

/** Building llama.cpp for this CPU needs tools this machine lacks: says which, and the Debian packages that provide them. */
export class EngineBuildToolsMissingError extends CleanroomError {
    public override readonly code = "ENGINE_BUILD_TOOLS_MISSING";
    public readonly missing: readonly LlamaBuildTool[];

    public constructor(missing: readonly LlamaBuildTool[]) {
        const packages = [...new Set(missing.map((tool) => tool.debianPackage))];
        super("ENGINE_BUILD_TOOLS_MISSING",
            `Building the engine for this CPU needs ${missing.map((tool) => tool.tool).join(", ")}, not found on PATH. ` +
            `On Debian or Ubuntu: sudo apt-get install ${packages.join(" ")}. Nothing was built; the prebuilt engine stays in use.`,
            {missing: missing.map((tool) => tool.tool).join(", "), debianPackages: packages.join(" ")});
        this.name = "EngineBuildToolsMissingError";
        this.missing = missing;
    }
}
