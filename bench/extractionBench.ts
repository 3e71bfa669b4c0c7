import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {Command} from "commander";
import {PDFDocument, StandardFonts} from "pdf-lib";
import {extractDocument} from "../src/core/node/documents/extraction/extractDocument.js";
import type {ExtractorUsage} from "../src/core/node/documents/extraction/types.js";
import {median, round} from "./stats.js";

type Options = {rounds: number, pages: number, out: string, json?: boolean};

const program = new Command()
    .description("Document extraction: pages per second from a generated PDF, in the extractor process (start included), and that process's peak memory")
    .option("--rounds <n>", "extractions per figure", (value) => Number(value), 5)
    .option("--pages <n>", "pages of the large PDF", (value) => Number(value), 200)
    .option("--out <file>", "also write the JSON report here", "bench-results/extraction.json")
    .option("--json", "print the JSON report on stdout instead of the table");
program.parse();
const options = program.opts<Options>();

const words = "the parties agree that the supplier shall deliver the goods described in schedule two within thirty days of each order".split(" ");
const linesPerPage = 45;

/** A report of `pages` pages of 45 lines of contract prose each (about 3,500 characters a page, like a printed page). */
async function generatedPdf(pages: number): Promise<Uint8Array> {
    const pdf = await PDFDocument.create();
    const font = await pdf.embedFont(StandardFonts.TimesRoman);
    for (let page = 1; page <= pages; page++) {
        const drawn = pdf.addPage([595, 842]);
        for (let line = 0; line < linesPerPage; line++) {
            const text = Array.from({length: 14}, (_, word) => words[(page * 31 + line * 7 + word) % words.length]).join(" ");
            drawn.drawText(`${line === 0 ? `Page ${page}. ` : ""}${text}`, {x: 40, y: 800 - line * 17, size: 11, font});
        }
    }
    return await pdf.save();
}

async function measure(name: string, bytes: Uint8Array) {
    const runs: Array<ExtractorUsage & {totalMs: number, characters: number}> = [];
    for (let round = 0; round < options.rounds; round++) {
        let usage: ExtractorUsage | null = null;
        const started = performance.now();
        const document = await extractDocument({kind: "bytes", name, bytes}, {onExtractorUsage: (heard) => usage = heard});
        const totalMs = performance.now() - started;
        if (usage == null)
            throw new Error("the extractor reported no usage");
        runs.push({...(usage as ExtractorUsage), totalMs, characters: document.pages.reduce((sum, page) => sum + page.text.length, 0)});
    }
    return {
        bytes: bytes.byteLength,
        medianMs: round(median(runs.map((run) => run.totalMs))),
        peakRssMiB: round(Math.max(...runs.map((run) => run.maxRssBytes)) / 2 ** 20, 1),
        characters: runs[0]!.characters
    };
}

const large = await measure("large.pdf", await generatedPdf(options.pages));
const single = await measure("one-page.pdf", await generatedPdf(1));
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
