import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {Command} from "commander";
import {SecretScanner} from "../src/core/node/cloud/secrets/SecretScanner.js";
import {screenCloudRequest} from "../src/core/node/cloud/secrets/screenCloudRequest.js";
import type {CloudChatMessage} from "../src/core/node/cloud/CloudClient.js";
import {loadAverage1m, median, round} from "./stats.js";

type Options = {rounds: number, out: string, json?: boolean};

const program = new Command()
    .description("What the secret scan of a cloud request costs: cold (secretlint loaded and run once) and steady state, 10,000 characters and 1 MB")
    .option("--rounds <n>", "measurements per size (1 MB: two fifths as many, at least 5)", (value) => Number(value), 50)
    .option("--out <file>", "also write the JSON report here", "bench-results/secrets.json")
    .option("--json", "print the JSON report on stdout instead of the table");
program.parse();
const loadAtStart = loadAverage1m();
const options = program.opts<Options>();

/** The cost goals of #24: a scan a user never notices. */
const goalsMs = {"10k": 5, "1M": 100};

// Cold first, before anything else has loaded secretlint: the first use in a fresh process.
const scanner = new SecretScanner();
let started = performance.now();
await scanner.warm();
const warmMs = performance.now() - started;

/**
 * Realistic text: this project's docs (README.md and SECURITY.md, frozen in test/fixtures/englishProse so
 * that editing the docs does not move the figures) and sources, with a secret every 3,000 characters or so, cut to `length`.
 */
const root = path.resolve(import.meta.dirname, "..");
const sources = ["test/fixtures/englishProse/readme-c27090b.txt", "test/fixtures/englishProse/security-c27090b.txt", ...listTs(path.join(root, "src"))].map((file) => fs.readFileSync(path.resolve(root, file), "utf8"));
const secrets = ["AKIAZ7QXWJ3KD9R2LM4N", "4111 1111 1111 1111", "GB82 WEST 1234 5698 7654 32", "DB_PASSWORD=Xk9!vPq2Lm77"];
function text(length: number) {
    let result = "";
    for (let index = 0; result.length < length; index++) {
        const source = sources[index % sources.length]!;
        for (let at = 0; at < source.length && result.length < length; at += 3000) {
            const cut = source.indexOf("\n", at + 3000);
            result += `${source.slice(at, cut < 0 ? source.length : cut)}\n${secrets[(index + at) % secrets.length]}\n`;
            if (cut < 0)
                break;
            at = cut - 3000;
        }
    }
    return result.slice(0, length);
}

started = performance.now();
const firstFound = (await scanner.scan([text(10_000)])).flat().length;
const firstScanMs = performance.now() - started;

function listTs(dir: string): string[] {
    return fs.readdirSync(dir, {withFileTypes: true}).flatMap((entry) =>
        entry.isDirectory() ? listTs(path.join(dir, entry.name)) : entry.name.endsWith(".ts") ? [path.join(dir, entry.name)] : []);
}

/** A request as a cloud turn sends it: the text split over a system prompt, a history of `messages - 2` and the prompt. */
function request(length: number, messages: number): CloudChatMessage[] {
    const all = text(length);
    const size = Math.ceil(all.length / messages);
    return Array.from({length: messages}, (_, index) => ({
        role: index === 0 ? "system" as const : index % 2 === 1 || index === messages - 1 ? "user" as const : "assistant" as const,
        content: all.slice(index * size, (index + 1) * size)
    }));
}

async function measure(label: keyof typeof goalsMs, length: number, messages: number, rounds: number) {
    const messagesOf = request(length, messages);
    const scanMs: number[] = [];
    const redactMs: number[] = [];
    let found = 0;
    for (let round = 0; round < rounds; round++) {
        let at = performance.now();
        found = (await scanner.scan(messagesOf.map((message) => message.content))).flat().length;
        scanMs.push(performance.now() - at);
        at = performance.now();
        await screenCloudRequest(messagesOf, {scanner, neverSend: ["Project Falcon", "Kestrel-7"], options: {redact: true}});
        redactMs.push(performance.now() - at);
    }
    const sorted = [...scanMs].sort((a, b) => a - b);
    return {
        size: label, characters: length, messages, rounds, secretsFound: found,
        scanMs: {median: round(median(scanMs), 3), p95: round(sorted[Math.floor(sorted.length * 0.95)]!, 3), max: round(sorted.at(-1)!, 3)},
        screenWithRedactionMs: {median: round(median(redactMs), 3)},
        goalMs: goalsMs[label],
        met: median(scanMs) < goalsMs[label]
    };
}

const steady = [
    await measure("10k", 10_000, 1, options.rounds),
    await measure("10k", 10_000, 12, options.rounds),
    await measure("1M", 1_000_000, 1, Math.max(5, Math.round(options.rounds * 2 / 5))),
    await measure("1M", 1_000_000, 200, Math.max(5, Math.round(options.rounds * 2 / 5)))
];
const report = {
    node: process.version,
    machine: {cpus: os.cpus().length, cpu: os.cpus()[0]?.model ?? "unknown", loadAverage1m: {atStart: loadAtStart, atEnd: loadAverage1m()}},
    cold: {warmUpMs: round(warmMs, 2), firstScan10kMs: round(firstScanMs, 2), firstScanSecretsFound: firstFound,
        note: "warmUpMs: secretlint and the preset imported and run once on a short text (SecretScanner.warm); firstScan10kMs: the first real scan after it"},
    steady
};
fs.mkdirSync(path.dirname(options.out), {recursive: true});
fs.writeFileSync(options.out, JSON.stringify(report, null, 2) + "\n");
if (options.json)
    process.stdout.write(JSON.stringify(report, null, 2) + "\n");
else {
    process.stdout.write(`Secret scan of a cloud request (${process.version}); report: ${options.out}\n`);
    process.stdout.write(`cold: warm-up (load secretlint, lint once) ${report.cold.warmUpMs} ms; first 10,000-character scan after it ${report.cold.firstScan10kMs} ms\n`);
    process.stdout.write("size  chars      messages  rounds  found  scan median / p95 / max (ms)   with redaction (ms)  goal   met\n");
    for (const row of steady)
        process.stdout.write(`${row.size.padEnd(5)} ${String(row.characters).padEnd(10)} ${String(row.messages).padEnd(9)} ${String(row.rounds).padEnd(7)} ${String(row.secretsFound).padEnd(6)} ` +
            `${`${row.scanMs.median} / ${row.scanMs.p95} / ${row.scanMs.max}`.padEnd(30)} ${String(row.screenWithRedactionMs.median).padEnd(20)} <${row.goalMs}   ${row.met ? "yes" : "NO"}\n`);
}
