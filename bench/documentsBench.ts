/**
 * The documents of a conversation, measured: extraction of a 200-page PDF (pdf-lib, in the
 * extractor process), indexing its chunks in the encrypted store (FTS5), retrieval among 10,000
 * chunks (p50, p95), and the peak memory of this process and of the extractor child. Run alone
 * (`npm run bench:documents`), or by `npm run bench` in a child process of its own, so that its
 * peak resident set is the document work's and not the model's.
 */
import {execFile} from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {fileURLToPath} from "node:url";
import {promisify} from "node:util";
import {Command} from "commander";
import {AttachmentStore} from "../src/core/node/documents/AttachmentStore.js";
import {chunkDocument, type DocumentChunk} from "../src/core/node/documents/chunkDocument.js";
import type {ExtractedDocument} from "../src/core/node/documents/extraction/types.js";
import {ConversationStore} from "../src/core/node/database/ConversationStore.js";
import {openDatabase} from "../src/core/node/database/openDatabase.js";
import {englishProse} from "../test/helpers/englishProse.js";
import {generatedPdf, measureExtraction} from "./measureExtraction.js";
import {loadAverage1m, median, round} from "./stats.js";

export const documentsBenchCommand = "npm run bench:documents";
/** Retrieval should answer within this, at 10,000 chunks, for a turn not to wait on it. */
export const retrievalGoalMs = 20;

type Options = {pages: number, rounds: number, chunks: number, queries: number, out: string, json?: boolean};

export type DocumentsReport = Awaited<ReturnType<typeof measure>>;

function percentile(values: number[], fraction: number) {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)]!;
}

/** A deterministic generator (mulberry32): the same corpus and queries on every run. */
function seeded(seed: number) {
    let state = seed >>> 0;
    return () => {
        state = (state + 0x6D2B79F5) >>> 0;
        let value = state;
        value = Math.imul(value ^ (value >>> 15), value | 1);
        value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
        return ((value ^ (value >>> 14)) >>> 0) / 2 ** 32;
    };
}

async function measure(options: Omit<Options, "out" | "json">) {
    const loadAtStart = loadAverage1m();
    const rssAtStart = process.memoryUsage.rss();

    // 1. Extraction: the 200-page PDF, in the extractor child (its start included).
    const pdf = await generatedPdf(options.pages);
    const extraction = await measureExtraction("contract.pdf", pdf, options.rounds);
    const document = extraction.document;

    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cleanroom-bench-documents-"));
    try {
        const db = openDatabase(path.join(dir, "documents.db"), {key: {passphrase: "benchmark passphrase"}});
        const store = new ConversationStore(db);
        const attachments = new AttachmentStore(db);
        const attach = (conversationId: string, attached: ExtractedDocument, chunks: DocumentChunk[]) => attachments.transaction(() => {
            const message = store.appendMessage(conversationId, {role: "user", content: `Here is ${attached.name}.`, status: "complete"});
            attachments.add(conversationId, message.id, {document: attached, tokens: 0, mode: "retrieved", chunks});
        });

        // 2. Indexing: the PDF's chunks stored and indexed as a turn stores them (one transaction), a fresh conversation each round.
        const pdfChunks = chunkDocument(document.pages);
        const indexingMs: number[] = [];
        for (let round = 0; round < options.rounds; round++) {
            const conversation = store.create({title: `Indexing ${round}`});
            const started = performance.now();
            attach(conversation.id, document, pdfChunks);
            indexingMs.push(performance.now() - started);
        }

        // 3. Retrieval: one conversation holding `chunks` chunks of English prose, another as many (the filter must keep them out).
        const words = englishProse().split(/\s+/).filter((word) => /\p{L}/u.test(word));
        const random = seeded(23);
        const prose = (count: number) => Array.from({length: count}, () => words[Math.floor(random() * words.length)]).join(" ");
        const corpus = (count: number): DocumentChunk[] => Array.from({length: count}, (_, index) => ({
            page: Math.floor(index / 3) + 1, startLine: (index % 3) * 15 + 1, endLine: (index % 3) * 15 + 15, text: prose(190)
        }));
        const asked = store.create({title: "Retrieval"});
        const other = store.create({title: "Another conversation"});
        for (const conversation of [asked, other])
            for (let done = 0; done < options.chunks; done += 1000)
                attach(conversation.id, {name: `prose-${done}.txt`, format: "text", bytes: 0, pages: []}, corpus(Math.min(1000, options.chunks - done)));
        const queries = Array.from({length: options.queries}, () => `What does it say about ${prose(6)}?`);
        attachments.retrieve(asked.id, queries[0]!); // warm-up: the first query reads the index's pages in
        const retrievalMs: number[] = [];
        const retrievalCpuMs: number[] = [];
        let passagesFound = 0;
        for (const query of queries) {
            const started = performance.now();
            const cpuAtStart = process.cpuUsage();
            passagesFound += attachments.retrieve(asked.id, query).length;
            const cpu = process.cpuUsage(cpuAtStart);
            retrievalMs.push(performance.now() - started);
            retrievalCpuMs.push((cpu.user + cpu.system) / 1000);
        }
        // The first turn with a new document: its chunks ranked with the conversation's, before the turn is stored.
        const withPendingMs: number[] = [];
        for (let round = 0; round < options.rounds; round++) {
            const started = performance.now();
            attachments.retrieve(asked.id, queries[round % queries.length]!, [{name: document.name, chunks: pdfChunks}]);
            withPendingMs.push(performance.now() - started);
        }
        store.purger.dispose();
        db.close();

        const chunksPerSecond = round(pdfChunks.length / (median(indexingMs) / 1000), 0);
        return {
            when: new Date().toISOString(),
            machine: {cpus: os.availableParallelism(), cpu: os.cpus()[0]?.model ?? null, node: process.version, loadAverage1m: {atStart: loadAtStart, atEnd: loadAverage1m()}},
            command: documentsBenchCommand,
            rounds: options.rounds,
            extraction: {
                pages: options.pages, pdfBytes: extraction.figures.bytes, characters: extraction.figures.characters, medianMs: extraction.figures.medianMs,
                pagesPerSecond: round(options.pages / (extraction.figures.medianMs / 1000), 1),
                command: `npm run bench:extraction -- --pages ${options.pages}`,
                notes: "from extractDocument's call to its answer: a fresh extractor process (start included), pdf.js through unpdf"
            },
            indexing: {
                chunks: pdfChunks.length, medianMs: round(median(indexingMs)), chunksPerSecond, command: documentsBenchCommand,
                notes: "the 200-page PDF's chunks (about 1,200 characters each) stored, indexed by FTS5 (for search) and their term postings written (for retrieval) in one transaction of the encrypted store"
            },
            retrieval: {
                chunksInConversation: options.chunks, chunksInStore: 2 * options.chunks + options.rounds * pdfChunks.length, queries: options.queries,
                p50Ms: round(percentile(retrievalMs, 0.5), 3), p95Ms: round(percentile(retrievalMs, 0.95), 3), maxMs: round(Math.max(...retrievalMs), 3),
                goalMs: retrievalGoalMs, met: percentile(retrievalMs, 0.95) < retrievalGoalMs,
                // This process's CPU time per retrieval: what a query costs, apart from waiting for a busy machine's cores.
                cpuP50Ms: round(percentile(retrievalCpuMs, 0.5), 3), cpuP95Ms: round(percentile(retrievalCpuMs, 0.95), 3),
                passagesPerQuery: round(passagesFound / options.queries, 1),
                withNewDocumentMedianMs: round(median(withPendingMs)),
                command: documentsBenchCommand,
                notes: "AttachmentStore.retrieve for a 6-word question, BM25 with the conversation's own statistics (each document's stored term postings), in a conversation of that many chunks while another holds as many; " +
                    "withNewDocument: the first turn of a 200-page PDF, its chunks ranked with the conversation's before the turn is stored"
            },
            peakMemory: {
                coreMaxRssMiB: round(process.resourceUsage().maxRSS / 1024, 1),
                coreRssAtStartMiB: round(rssAtStart / 2 ** 20, 1),
                extractorMaxRssMiB: extraction.figures.peakRssMiB,
                command: documentsBenchCommand,
                notes: "core: this process's maximum resident set (getrusage), which does the store's work as the core does, without a model; " +
                    "extractor: the extractor child's maximum resident set over the extractions of the 200-page PDF"
            }
        };
    } finally {
        fs.rmSync(dir, {recursive: true, force: true});
    }
}

/**
 * This bench in a process of its own (the running one's Node and loader), as `npm run bench` runs it: the report, also written to
 * bench-results/documents.json.
 */
export async function measureDocumentsInChild(): Promise<DocumentsReport> {
    const {stdout} = await promisify(execFile)(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), "--json"],
        {maxBuffer: 1 << 20, env: process.env});
    return JSON.parse(stdout) as DocumentsReport;
}

if (process.argv[1] != null && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
    const program = new Command()
        .description("Documents: extraction pages/s (200-page PDF), indexing chunks/s, retrieval p50/p95 at 10,000 chunks, peak memory")
        .option("--pages <n>", "pages of the generated PDF", (value) => Number(value), 200)
        .option("--rounds <n>", "extractions and indexings per figure", (value) => Number(value), 3)
        .option("--chunks <n>", "chunks in the conversation retrieved from (another conversation holds as many)", (value) => Number(value), 10_000)
        .option("--queries <n>", "retrievals timed", (value) => Number(value), 200)
        .option("--out <file>", "also write the JSON report here (\"\": nowhere)", "bench-results/documents.json")
        .option("--json", "print the JSON report on stdout instead of the table");
    program.parse();
    const options = program.opts<Options>();
    const report = await measure(options);
    if (options.out !== "") {
        fs.mkdirSync(path.dirname(path.resolve(options.out)), {recursive: true});
        fs.writeFileSync(options.out, JSON.stringify(report, null, 2) + "\n");
    }
    if (options.json === true)
        process.stdout.write(JSON.stringify(report, null, 2) + "\n");
    else
        for (const line of formatDocuments(report))
            process.stdout.write(line + "\n");
}

/** The report's figures as lines of a table. */
export function formatDocuments(report: DocumentsReport): string[] {
    const {extraction, indexing, retrieval, peakMemory} = report;
    return [
        `extraction, ${extraction.pages}-page PDF: ${extraction.pagesPerSecond} pages/s (${extraction.medianMs} ms, extractor start included)`,
        `indexing: ${indexing.chunksPerSecond} chunks/s (${indexing.chunks} chunks in ${indexing.medianMs} ms)`,
        `retrieval at ${retrieval.chunksInConversation.toLocaleString("en")} chunks (goal < ${retrieval.goalMs} ms): p50 ${retrieval.p50Ms} ms, p95 ${retrieval.p95Ms} ms` +
            `${retrieval.met ? "" : ": OVER THE GOAL"} (CPU time p50 ${retrieval.cpuP50Ms} ms, p95 ${retrieval.cpuP95Ms} ms); with a new 200-page document ${retrieval.withNewDocumentMedianMs} ms`,
        `peak memory: core ${peakMemory.coreMaxRssMiB} MiB (at start ${peakMemory.coreRssAtStartMiB}), extractor ${peakMemory.extractorMaxRssMiB} MiB`
    ];
}
