import os from "node:os";
import fs from "node:fs";
import path from "node:path";
import {makeModel, modelArchitectures, type MakeModelOptions, type ModelArchitectureName} from "../tools/gguf/makeModel.js";
import {runCliCapturing} from "../tools/spawnCli.js";

// The table of docs/isolation.md: each generated architecture's `selftest --json` on the CPU, one row
// each, with the command that reproduces it. `npx tsx scripts/architecture-table.ts [--tokenizer-from <gguf>]`.
const tokenizerFlag = process.argv.indexOf("--tokenizer-from");
const tokenizerFrom = tokenizerFlag >= 0 ? process.argv[tokenizerFlag + 1]! : process.env.CLEANROOM_TEST_MODEL ?? path.resolve("../shared/models/stories260K.gguf");
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cleanroom-architectures-"));

type Row = {architecture: ModelArchitectureName, options?: Omit<MakeModelOptions, "tokenizerFrom">, flags?: string, file?: string};
const rows: Row[] = [
    ...Object.keys(modelArchitectures).map((architecture) => ({architecture: architecture as ModelArchitectureName})),
    {architecture: "gemma3", options: {slidingWindow: 4096}, flags: " --sliding-window 4096", file: "gemma3-window4096"}
];

type Report = {passed: boolean, sequenceMemory: string, stateCovered: boolean, stateCoverageProblem: string | null, checks: Array<{name: string, passed: boolean, detail: string}>};
process.stdout.write("| architecture | state | backend | selftest | what the scrub proved | reproduce |\n|---|---|---|---|---|---|\n");
for (const {architecture, options = {}, flags = "", file = architecture} of rows) {
    const out = path.join(dir, `${file}.gguf`);
    makeModel(out, architecture, {tokenizerFrom, ...options});
    const run = await runCliCapturing(["selftest", "--model", out, "--gpu", "off", "--json"]);
    const report = JSON.parse(run.stdout) as Report;
    const passed = report.checks.filter((check) => check.passed).length;
    const scrub = report.checks.find((check) => check.name === "scrub")!;
    const proved = report.stateCovered
        ? scrub.detail.replace(/, [\d.]+ ms;.*$/, "")
        : `every scrub unverified: ${report.stateCoverageProblem ?? ""}`;
    const command = `npm run make-model -- --arch ${architecture}${flags} --out /tmp/${file}.gguf && npm run cleanroom -- selftest --model /tmp/${file}.gguf --gpu off`;
    process.stdout.write(`| ${architecture}${flags} | ${report.sequenceMemory} | CPU | ${passed}/${report.checks.length}, exit ${run.code} | ${proved.replaceAll("|", "\\|")} | \`${command}\` |\n`);
}
fs.rmSync(dir, {recursive: true, force: true});
