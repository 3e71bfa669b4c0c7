import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {Command} from "commander";
import {generatedPdf, measureExtraction} from "./measureExtraction.js";
import {round} from "./stats.js";

type Options = {rounds: number, pages: number, out: string, json?: boolean};

const program = new Command()
    .description("Document extraction: pages per second from a generated PDF, in the extractor process (start included), and that process's peak memory")
    .option("--rounds <n>", "extractions per figure", (value) => Number(value), 5)
    .option("--pages <n>", "pages of the large PDF", (value) => Number(value), 200)
    .option("--out <file>", "also write the JSON report here", "bench-results/extraction.json")
    .option("--json", "print the JSON report on stdout instead of the table");
program.parse();
const options = program.opts<Options>();

const large = (await measureExtraction("large.pdf", await generatedPdf(options.pages), options.rounds)).figures;
const single = (await measureExtraction("one-page.pdf", await generatedPdf(1), options.rounds)).figures;
// The process start and pdf.js's load are paid once per file: a one-page PDF measures them.
const perPageMs = (large.medianMs - single.medianMs) / (options.pages - 1);
const report = {
    when: new Date().toISOString(),
    machine: {cpus: os.cpus().length, cpu: os.cpus()[0]?.model ?? "unknown", node: process.version},
    rounds: options.rounds,
    extractor: "a fresh child process per file (fork), pdf.js through unpdf, text layer only",
    largePdf: {pages: options.pages, ...large, pagesPerSecond: round(options.pages / (large.medianMs / 1000), 1)},
    onePagePdf: single,
    perPageMs: round(perPageMs, 3),
    pagesPerSecondAfterStart: round(1000 / perPageMs, 1),
    notes: "medianMs: from extractDocument's call to its answer (process start, IPC, parsing); peakRssMiB: the extractor process's maximum resident set (getrusage)"
};
fs.mkdirSync(path.dirname(path.resolve(options.out)), {recursive: true});
fs.writeFileSync(options.out, JSON.stringify(report, null, 2) + "\n");

if (options.json === true)
    process.stdout.write(JSON.stringify(report, null, 2) + "\n");
else {
    process.stdout.write(`Document extraction, median of ${options.rounds}\n`);
    process.stdout.write(`  ${`${options.pages}-page PDF (${round(large.bytes / 2 ** 20, 1)} MiB, ${large.characters} characters)`.padEnd(52)} ${large.medianMs} ms = ${report.largePdf.pagesPerSecond} pages/s, peak RSS ${large.peakRssMiB} MiB\n`);
    process.stdout.write(`  ${"1-page PDF (process start and pdf.js load)".padEnd(52)} ${single.medianMs} ms, peak RSS ${single.peakRssMiB} MiB\n`);
    process.stdout.write(`  ${"per page after the start".padEnd(52)} ${report.perPageMs} ms = ${report.pagesPerSecondAfterStart} pages/s\n`);
    process.stdout.write(`Report: ${options.out}\n`);
}
