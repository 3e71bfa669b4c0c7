import type {Core} from "../core/node/Core.js";

/** Every core this CLI process opened (`openCore`): what `closeOpenCores` ends when the process must stop early. */
const openCores = new Set<Core>();

export function trackOpenCore(core: Core): Core {
    openCores.add(core);
    return core;
}

/**
 * Closes every core this process opened (each session ended and scrubbed, as at a normal exit; a
 * core already closed by its command just returns). `"timed out"` when they did not all close
 * within `limitMs`: their scrubs cannot be claimed.
 */
export async function closeOpenCores(limitMs: number): Promise<"closed" | "timed out"> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<"timed out">((resolve) => {
        timer = setTimeout(() => resolve("timed out"), limitMs);
    });
    const closed = Promise.allSettled([...openCores].map((core) => core.dispose())).then(() => "closed" as const);
    try {
        return await Promise.race([closed, timeout]);
    } finally {
        clearTimeout(timer);
    }
}
