import {defineConfig} from "vitest/config";

/**
 * Four projects, run one after another (`npm test` runs all; `npm run test:unit` etc. one):
 * - unit: no model, no spawned core, under a minute;
 * - model: the real model, real SQLite, real HTTP servers, the CLI as a process;
 * - e2e: the real UI in Debian's Chromium, in web mode;
 * - security: fuzzers, kill -9, network silence, secrets at rest.
 * Model-backed files run one at a time: on two cores they would fight for CPU and time out.
 */
export default defineConfig({
    test: {
        testTimeout: 120_000,
        hookTimeout: 120_000,
        pool: "forks",
        // Processes the tests spawn start with the core's environment (coreProcessEnv), as the
        // app's own launchers give it, so none needs to relaunch itself (coreThreadpool.test.ts
        // unsets it to test the relaunch).
        env: {UV_THREADPOOL_SIZE: "1"},
        setupFiles: ["test/setup/hermetic.ts"],
        // The CLI the tests spawn is the compiled one (src/cli/cliCommand.ts), built first if stale.
        globalSetup: ["test/setup/compiledCli.ts"],
        projects: [
            {extends: true, test: {name: "unit", include: ["test/unit/**/*.test.ts"], sequence: {groupOrder: 0}}},
            {extends: true, test: {name: "model", include: ["test/integration/**/*.test.ts"], fileParallelism: false, sequence: {groupOrder: 1}}},
            {extends: true, test: {name: "e2e", include: ["test/e2e/**/*.test.ts"], fileParallelism: false, sequence: {groupOrder: 2}}},
            {extends: true, test: {name: "security", include: ["test/security/**/*.test.ts"], fileParallelism: false, sequence: {groupOrder: 3}}}
        ]
    }
});
