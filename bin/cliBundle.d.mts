/** Types of bin/cliBundle.mjs (plain JavaScript, so that plain `node` can run it before anything is compiled). */
export declare const repoRoot: string;

export declare class CliBundleError extends Error {
    public readonly code: "CLI_BUNDLE_STALE" | "CLI_BUNDLE_BUILD_FAILED";
    public constructor(message: string, code: "CLI_BUNDLE_STALE" | "CLI_BUNDLE_BUILD_FAILED");
}

/** A build of the bundle: its folder in out/, and entries compiled beside the bundle's own (name: source file, relative to the root). */
export type BundleVariant = {folder: string, extraEntries: Record<string, string>};
/** The bundle users run (out/cli). */
export declare const cliBundle: BundleVariant;

/** `entry` is the CLI's (main.mjs); `dir` holds every entry, as `<name>.mjs`. */
export type CliBundleState = {state: "fresh", entry: string, dir: string} | {state: "missing" | "stale", reason: string};

export declare function cliBundleState(root?: string, variant?: BundleVariant): CliBundleState;
export declare function buildCliBundle(root?: string, variant?: BundleVariant): Promise<string>;
export declare function freshCliBundle(options?: {root?: string, variant?: BundleVariant, onRebuild?: (reason: string) => void}): Promise<string>;
export declare function runBundleEntry(name: string, command: string, onChecked?: () => void): Promise<void>;
