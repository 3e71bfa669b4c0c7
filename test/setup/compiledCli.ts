// Runs once before the test run (vitest globalSetup): the tests spawn the CLI as users run it,
// compiled (bin/cleanroom.cjs and its esbuild bundle), so the bundle is built first when a
// source changed since `npm install` built it, or when a clean clone was never built.
import {cliBundleState, freshCliBundle} from "../../bin/cliBundle.mjs";

export default async function buildCompiledCli() {
    const state = cliBundleState();
    if (state.state !== "fresh")
        console.info(`[setup] compiling the CLI: ${state.reason}`);
    await freshCliBundle();
}
