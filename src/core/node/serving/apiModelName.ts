import path from "node:path";

/** The name the local API server lists a model under and clients ask for it by: its file name without `.gguf`. */
export function apiModelName(modelPath: string): string {
    return path.basename(modelPath).replace(/\.gguf$/i, "");
}
