/** Types of bin/cliBundle.mjs (plain JavaScript, so that plain `node` can run it before anything is compiled). */
export declare const repoRoot: string;

export declare class CliBundleError extends Error {
    public readonly code: "CLI_BUNDLE_STALE" | "CLI_BUNDLE_BUILD_FAILED";
    public constructor(message: string, code: "CLI_BUNDLE_STALE" | "CLI_BUNDLE_BUILD_FAILED");
}

export type CliBundleState = {state: "fresh", entry: string} | {state: "missing" | "stale", reason: string};

export declare function cliBundleState(root?: string): CliBundleState;
export declare function buildCliBundle(root?: string): Promise<string>;
export declare function freshCliBundle(options?: {root?: string, onRebuild?: (reason: string) => void}): Promise<string>;
