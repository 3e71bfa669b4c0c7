import fs from "node:fs";
import path from "node:path";
import {repoRoot, type BundleVariant} from "../../bin/cliBundle.mjs";

const helpersDir = "test/helpers";

/**
 * Scripts the tests start as processes of their own (testBuild.ts, `testBuildScript`), compiled here so that neither they nor
 * node-llama-cpp's binding check, forked with their execArgv, load tsx; those that import src/ share the bundle's chunks.
 */
const testScripts = {
    modelMutantWorker: "test/security/helpers/modelMutantWorker.ts",
    freshTurnWorker: "test/security/helpers/freshTurnWorker.ts",
    utilityEntryStandIn: "test/security/helpers/utilityEntryStandIn.ts",
    // The network-silence observers, preloaded into the CLI users run (they patch Node's own modules, none of the bundle's).
    netGuard: "test/security/helpers/netGuard.ts",
    netControl: "test/security/helpers/netControl.ts",
    // The developer tools' CLI (`audit`, `sim-cloud`), as the tests run it: tsx would compile its graph in every process (about
    // 2 CPU-seconds a run of `audit`). cloud.test.ts still runs docs/cloud.md's `sim-cloud` from source, as `npm run` does.
    toolsCli: "tools/cli/main.ts",
    // What a core in a test's own process forks to read a document (test/setup/compiledExtractor.ts).
    extractorEntry: "src/core/node/documents/extraction/extractorEntry.ts"
};
export type TestScript = keyof typeof testScripts;

/**
 * The compiled bundle's entries built again with the tests' preloads (test/helpers/*.preload.ts)
 * beside them, in out/cli-test/: a preload there imports the bundle's own chunks, so it patches the
 * very classes web mode's core uses (a preload compiled alone would patch copies of its own), and no
 * process loads tsx. The bundle users run (out/cli/) has no test module in it.
 */
export const testBundle: BundleVariant = {
    folder: "cli-test",
    extraEntries: {
        ...Object.fromEntries(fs.readdirSync(path.join(repoRoot, helpersDir))
            .filter((name) => name.endsWith(".preload.ts"))
            .map((name) => [path.basename(name, ".ts"), `${helpersDir}/${name}`])),
        ...testScripts
    }
};
