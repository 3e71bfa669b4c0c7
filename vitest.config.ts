import os from "node:os";
import {configDefaults, defineConfig} from "vitest/config";
import {compiledExtractor} from "./test/setup/compiledExtractor.js";

/**
 * Files that run after all the others, two at a time on two cores (`inPairs`), then the three that run alone (`runAlone`).
 * Each runs the model with `--gpu vulkan`, which under CI is Mesa's llvmpipe, a software device that takes every core
 * (beside the first group's files its replies outlasted their 120 s wait, gpuPanel.e2e at a load average of 30), or
 * holds a claim that a machine loaded by the first group could break but one neighbour cannot: a 20 s refusal bound
 * (documentExtraction, where a refusal takes 1-2 s), kill -9 at moments read from the output (crashDurability).
 * `runAlone` holds claims on the clock that even one busy neighbour on two cores could break: a median latency
 * compared (prefixCacheAudit), a 400 ms stall timeout (downloadStall), a process tree slowed by strace (networkSilence).
 * Claims on the CPU that need neither sit in a file apart from the Vulkan ones, so that only the Vulkan part waits for
 * the end: `<name>.vulkan.test.ts` beside deviceProbe, differential, gpu, overflow and scrub, gpuPanel.e2e's `--gpu off`
 * card in gpuPanelCpu.e2e, documentExtraction's formats (no bound on the clock) in documentExtractionFormats, and
 * prefixCacheAudit's cached-token probe and whole audit (no latency compared) in prefixCacheAuditTokens.
 */
const inPairs = {
    model: [
        // It reads real tokenizers' counts of its corpora, which its project's globalSetup starts counting when the run starts, at the
        // lowest priority (half a minute of CPU): ready by the end of the run, but perhaps not within hookTimeout beside other files.
        "test/integration/cloud-token-count.test.ts",
        "test/integration/documentExtraction.test.ts"
    ],
    // Apart from the CPU-only model files: where one of these has made the Vulkan device visible to ggml in the process
    // (GGML_VK_VISIBLE_DEVICES), `--gpu auto` in a file after it in the same process would find it usable.
    vulkan: [
        "test/integration/deviceProbe.vulkan.test.ts",
        "test/integration/differential.vulkan.test.ts",
        "test/integration/gpu.vulkan.test.ts",
        "test/integration/overflow.vulkan.test.ts",
        "test/integration/scrub.vulkan.test.ts"
    ],
    e2e: [
        "test/e2e/gpuPanel.e2e.test.ts"
    ],
    security: [
        "test/security/crashDurability.test.ts"
    ]
};

const runAlone = {
    model: ["test/integration/prefixCacheAudit.test.ts"],
    security: ["test/security/downloadStall.test.ts", "test/security/networkSilence.test.ts"]
};

/** Two at a time, whatever the machine: the claims of `inPairs` hold beside one neighbour, not beside more. */
const pairWorkers = Math.min(2, os.availableParallelism());

/**
 * Files of the model and security projects that keep a process of their own, where the others share one (`isolate: false`):
 * each reads or leaves state of the whole process that a file before it in the same process would change.
 * models.diskfull waits until the process has no file work in flight, and counts its unhandled rejections; privateWrites
 * replaces the `electron` module (`vi.mock`), which a module another file loaded first would not see, and which would stay
 * replaced for the files after it.
 */
const keepIsolated = {
    model: ["test/integration/models.diskfull.test.ts"],
    security: ["test/security/privateWrites.test.ts"]
};

/**
 * `npm test` runs every project; `npm run test:unit` etc. one part. What each runs on:
 * - unit: no model, no spawned core, under 30 s;
 * - model: the real model, real SQLite, real HTTP servers, the CLI as a process;
 * - e2e: the real UI in Debian's Chromium, in web mode;
 * - security: fuzzers, kill -9, network silence, secrets at rest;
 * - model-isolated, security-isolated: the files of `keepIsolated`;
 * - crash-durability, e2e-serial, model-serial, model-vulkan-serial: the files of `inPairs`, in one process per project
 *   and worker (`isolate: false`: a fresh process per file cost two to three seconds between files);
 * - model-alone, security-alone: the files of `runAlone`, one after another.
 * Three groups (`sequence.groupOrder`; vitest 4 gives a group one queue of files and one worker count):
 * first every other project, two files at a time on two cores (`maxWorkers`, one per
 * core), whatever they run on: a model-backed file spends much of its time waiting on the processes
 * it spawns, the browser or the scrub, so two of them share the cores (one model file at a time, the
 * suite took 990 s on a quiet 2-core machine); then the files of `inPairs`, two at a time whatever the
 * cores (one at a time, the two cores were busy a third less); then those of `runAlone`, one at a time.
 * Projects of one group start in the order of their names (e2e, model, security, unit), so the short
 * unit files fill the first group's end.
 */
export default defineConfig({
    plugins: [compiledExtractor()],
    test: {
        testTimeout: 120_000,
        hookTimeout: 120_000,
        // expect.poll waits for a condition; its default of 1 s is short for a scrub or a spawned process
        // on two busy cores. A poll ends as soon as its condition holds, so only a failure waits this long.
        expect: {poll: {timeout: 15_000}},
        // Beside the console, each run's per-file and per-test durations, for finding what makes the suite slow.
        reporters: ["default", ["json", {outputFile: "test-results/vitest-report.json"}]],
        pool: "forks",
        // vitest's default is one worker fewer than the cores: one file at a time on two cores.
        maxWorkers: os.availableParallelism(),
        // Processes the tests spawn start with the core's environment (coreProcessEnv), as the
        // app's own launchers give it, so none needs to relaunch itself (coreThreadpool.test.ts
        // unsets it to test the relaunch).
        // CLEANROOM_SCRYPT_LOG_N: the suite's passphrases are derived at scrypt's least cost the core reads (2^14, a quarter of the
        // default's work): about a hundred derivations a run, 36 CPU-seconds at 2^16; no test's claim depends on the cost
        // (test/unit/scryptCost.test.ts checks the default and the variable).
        env: {UV_THREADPOOL_SIZE: "1", CLEANROOM_SCRYPT_LOG_N: "14"},
        setupFiles: ["test/setup/hermetic.ts"],
        // The CLI the tests spawn is the compiled one (src/cli/cliCommand.ts), built first if stale.
        globalSetup: ["test/setup/compiledCli.ts"],
        projects: [
            // unit, model, e2e: one worker process runs file after file (imported modules stay loaded, src/ and node-llama-cpp imported once
            // per worker rather than once per file): the files restore the timers and environment they change, and
            // test/setup/hermetic.ts still gives each its own folders. The files of `keepIsolated` each get a fresh process.
            {extends: true, test: {name: "unit", include: ["test/unit/**/*.test.ts"], isolate: false, sequence: {groupOrder: 0}}},
            {extends: true, test: {name: "model", include: ["test/integration/**/*.test.ts"],
                exclude: [...configDefaults.exclude, ...inPairs.model, ...inPairs.vulkan, ...runAlone.model, ...keepIsolated.model],
                isolate: false, sequence: {groupOrder: 0}}},
            {extends: true, test: {name: "model-isolated", include: keepIsolated.model, sequence: {groupOrder: 0}}},
            {extends: true, test: {name: "e2e", include: ["test/e2e/**/*.test.ts"], exclude: [...configDefaults.exclude, ...inPairs.e2e], isolate: false, sequence: {groupOrder: 0},
                globalSetup: ["test/setup/chromiumServer.ts"]}},
            {extends: true, test: {name: "security", include: ["test/security/**/*.test.ts"], exclude: [...configDefaults.exclude, ...inPairs.security, ...runAlone.security, ...keepIsolated.security],
                isolate: false, sequence: {groupOrder: 0}}},
            {extends: true, test: {name: "security-isolated", include: keepIsolated.security, sequence: {groupOrder: 0}}},
            {extends: true, test: {name: "model-serial", include: inPairs.model, isolate: false, maxWorkers: pairWorkers, sequence: {groupOrder: 1},
                globalSetup: ["test/setup/vocabularyTokenCounts.ts"]}},
            {extends: true, test: {name: "model-vulkan-serial", include: inPairs.vulkan, isolate: false, maxWorkers: pairWorkers, sequence: {groupOrder: 1},
                globalSetup: ["test/setup/vulkanShaderCache.ts"], setupFiles: ["test/setup/awaitVulkanWarmUp.ts"]}},
            {extends: true, test: {name: "e2e-serial", include: inPairs.e2e, maxWorkers: pairWorkers, sequence: {groupOrder: 1},
                globalSetup: ["test/setup/chromiumServer.ts", "test/setup/vulkanShaderCache.ts"], setupFiles: ["test/setup/awaitVulkanWarmUp.ts"]}},
            // Named to sort first: vitest starts a group's projects in the order of their names, and this file is the longest of its group.
            {extends: true, test: {name: "crash-durability", include: inPairs.security, isolate: false, maxWorkers: pairWorkers, sequence: {groupOrder: 1}}},
            {extends: true, test: {name: "model-alone", include: runAlone.model, isolate: false, fileParallelism: false, sequence: {groupOrder: 2}}},
            {extends: true, test: {name: "security-alone", include: runAlone.security, isolate: false, fileParallelism: false, sequence: {groupOrder: 2}}}
        ]
    }
});
