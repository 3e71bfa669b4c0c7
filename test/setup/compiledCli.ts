// Runs once before the test run (vitest globalSetup): the tests spawn the CLI and web mode as users
// run them, compiled (bin/cleanroom.cjs, bin/web.mjs and their esbuild bundle), so the bundle is built
// first when a source changed since `npm install` built it, or when a clean clone was never built;
// so is the test build that compiles the forced-fault preloads with it (testBundle.ts).
import {cliBundle, cliBundleState, freshCliBundle} from "../../bin/cliBundle.mjs";
import {testBundle} from "./testBundle.js";

export default async function buildCompiledCli() {
    for (const variant of [cliBundle, testBundle]) {
        const state = cliBundleState(undefined, variant);
        if (state.state !== "fresh")
            console.info(`[setup] compiling out/${variant.folder}: ${state.reason}`);
        await freshCliBundle({variant});
    }
}
