import {PDFDocument, StandardFonts} from "pdf-lib";
import {extractDocument} from "../src/core/node/documents/extraction/extractDocument.js";
import type {ExtractedDocument, ExtractorUsage} from "../src/core/node/documents/extraction/types.js";
import {median, round} from "./stats.js";

const words = "the parties agree that the supplier shall deliver the goods described in schedule two within thirty days of each order".split(" ");
const linesPerPage = 45;

/** A report of `pages` pages of 45 lines of contract prose each (about 3,500 characters a page, like a printed page). */
export async function generatedPdf(pages: number): Promise<Uint8Array> {
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

/** Extracts `bytes` `rounds` times in the extractor process (start included): median time, the extractor's peak RSS, and the document read. */
export async function measureExtraction(name: string, bytes: Uint8Array, rounds: number) {
    const runs: Array<ExtractorUsage & {totalMs: number, characters: number}> = [];
    let document: ExtractedDocument | null = null;
    for (let round = 0; round < rounds; round++) {
        let usage: ExtractorUsage | null = null;
        const started = performance.now();
        document = await extractDocument({kind: "bytes", name, bytes}, {onExtractorUsage: (heard) => usage = heard});
        const totalMs = performance.now() - started;
        if (usage == null)
            throw new Error("the extractor reported no usage");
        runs.push({...(usage as ExtractorUsage), totalMs, characters: document.pages.reduce((sum, page) => sum + page.text.length, 0)});
    }
    return {
        figures: {
            bytes: bytes.byteLength,
            medianMs: round(median(runs.map((run) => run.totalMs))),
            peakRssMiB: round(Math.max(...runs.map((run) => run.maxRssBytes)) / 2 ** 20, 1),
            characters: runs[0]!.characters
        },
        document: document!
    };
}
