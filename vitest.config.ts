import os from "node:os";
import {configDefaults, defineConfig} from "vitest/config";

/**
 * Security files that load no model, spawn no core or CLI and start no browser (the RPC fuzzers and
 * dispatch, file modes, stock phrases, cloud key binding): they run in parallel, beside the unit
 * files, as the project `security-nomodel`. A security file not listed here runs one at a time.
 */
const securityWithoutModel = [
    "test/security/cloudKeyBinding.test.ts",
    "test/security/privateFiles.test.ts",
    "test/security/privateWrites.test.ts",
    "test/security/rpcDispatch.test.ts",
    "test/security/rpcEventsFuzz.test.ts",
    "test/security/rpcFuzz.test.ts",
    "test/security/rpcFuzz.part2.test.ts",
    "test/security/stockPhrases.test.ts"
];

/**
 * Four projects (`npm test` runs all; `npm run test:unit` etc. one), in this order:
 * - unit: no model, no spawned core, under 30 s; with it, in parallel, security-nomodel;
 * - model: the real model, real SQLite, real HTTP servers, the CLI as a process;
 * - e2e: the real UI in Debian's Chromium, in web mode;
 * - security: fuzzers, kill -9, network silence, secrets at rest.
 * Model-backed files run one at a time: on two cores they would fight for CPU and time out. Files
 * that load no model run in parallel, one per core (`maxWorkers`).
 */
export default defineConfig({
    test: {
        testTimeout: 120_000,
        hookTimeout: 120_000,
        pool: "forks",
        // vitest's default is one worker fewer than the cores: one file at a time on two cores. Files that
        // load no model (unit, security-nomodel) run one per core; the projects with fileParallelism off
        // (model, e2e, security) still run one file at a time.
        maxWorkers: os.availableParallelism(),
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
            {extends: true, test: {name: "security-nomodel", include: securityWithoutModel, sequence: {groupOrder: 0}}},
            {extends: true, test: {name: "security", include: ["test/security/**/*.test.ts"], exclude: [...configDefaults.exclude, ...securityWithoutModel],
                fileParallelism: false, sequence: {groupOrder: 3}}}
        ]
    }
});
