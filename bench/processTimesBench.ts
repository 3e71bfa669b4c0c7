import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {Command} from "commander";
import {formatProcessTimes, measureProcessTimes} from "./processTimes.js";
import {loadAverage1m} from "./stats.js";

// One `chat --prompt` turn as a whole process, Cleanroom with its default settings against the
// plain node-llama-cpp script on the same build and settings (bench/processTimes.ts), alone:
// `npm run bench:process [-- --runs 7 --model <gguf>]`. `npm run bench` measures it too, beside the rest.
type Options = {model: string[], runs: number, out: string, json?: boolean};
const program = new Command()
    .option("--model <gguf>", "model of the turn (repeatable)", (value: string, previous: string[] | undefined) => [...previous ?? [], value])
    .option("--runs <n>", "alternating runs per command, after one warm-up each (median)", (value) => Number(value), 7)
    .option("--out <file>", "also write the JSON report here", "bench-results/process.json")
    .option("--json", "print the JSON report on stdout instead of the table");
program.parse();
const options = program.opts<Options>();
const log = (line: string) => (options.json === true ? process.stderr : process.stdout).write(line + "\n");
const models = (options.model ?? [process.env.CLEANROOM_TEST_MODEL ?? path.resolve("../shared/models/stories260K.gguf")])
    .map((file) => ({name: path.basename(file, ".gguf"), path: file}));

const loadAtStart = loadAverage1m();
const times = await measureProcessTimes({
    models, runs: options.runs, turnsOnly: true, maxTokens: 200, log,
    prompt: "Once upon a time, in a small house near the woods, there lived a girl who loved"
});
const report = {
    machine: {cpus: os.availableParallelism(), cpu: os.cpus()[0]?.model ?? null, node: process.version, loadAverage1m: {atStart: loadAtStart, atEnd: loadAverage1m()}},
    ...times,
    command: `npm run bench:process -- --runs ${options.runs}${models.map((model) => ` --model ${model.path}`).join("")}`
};
fs.mkdirSync(path.dirname(options.out), {recursive: true});
fs.writeFileSync(options.out, JSON.stringify(report, null, 2) + "\n");
if (options.json === true)
    process.stdout.write(JSON.stringify(report, null, 2) + "\n");
else
    log(formatProcessTimes(times, options.runs).join("\n") + `\n\nload average ${loadAtStart} at the start, ${report.machine.loadAverage1m.atEnd} at the end`);
