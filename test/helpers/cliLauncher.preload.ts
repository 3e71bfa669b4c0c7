// `node --import` this (compiled: test/setup/testBundle.ts) before the test build's CLI entry, which runs without bin/cleanroom.cjs:
// it names that launcher as bin/cleanroom.cjs itself does, so that the CLI starts its children (the self-test's fresh process) as
// the compiled CLI users run, as it does from source (src/cli/cliCommand.ts looks for the launcher beside the sources, not beside a chunk).
import path from "node:path";
import {fileURLToPath} from "node:url";

/** Compiled, this file is out/cli-test/<build id>/cliLauncher.preload.mjs. */
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
(globalThis as Record<symbol, unknown>)[Symbol.for("cleanroom.cliLauncher")] = path.join(repoRoot, "bin", "cleanroom.cjs");
