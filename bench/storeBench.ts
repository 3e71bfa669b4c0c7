import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {Command} from "commander";
import {ConversationStore} from "../src/core/node/database/ConversationStore.js";
import {deriveKey, forgetDerivedKeys} from "../src/core/node/database/keys/deriveKey.js";
import {newPassphraseEnvelope} from "../src/core/node/database/keys/keyEnvelope.js";
import type {StoreKeySource} from "../src/core/node/database/keys/types.js";
import {openDatabase} from "../src/core/node/database/openDatabase.js";
import {loadAverage1m, median, round} from "./stats.js";

type Options = {rounds: number, out: string, json?: boolean};

const program = new Command()
    .description("The cost of encryption at rest: the plain store against the encrypted one (SQLCipher pages), on real files")
    .option("--rounds <n>", "measurements per figure and store, the stores alternating", (value) => Number(value), 40)
    .option("--out <file>", "also write the JSON report here", "bench-results/store.json")
    .option("--json", "print the JSON report on stdout instead of the table");
program.parse();
const loadAtStart = loadAverage1m();
const options = program.opts<Options>();

const stores: Array<{name: string, key: StoreKeySource}> = [
    {name: "plain", key: {unencrypted: true}},
    {name: "encrypted", key: {passphrase: "benchmark passphrase"}}
];
const historyLength = 1000;
const words = "the cat sat on a warm windowsill and watched the rain fall over the quiet little town".split(" ");
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cleanroom-bench-store-"));

/** One conversation of `historyLength` messages of story text in each store, and one to save turns into. */
function prepare(name: string, key: StoreKeySource) {
    const file = path.join(dir, `${name}.db`);
    const db = openDatabase(file, {key});
    const store = new ConversationStore(db);
    store.create({id: "history", title: "A long one"});
    store.create({id: "turns", title: "Saved turns"});
    db.transaction(() => {
        for (let index = 0; index < historyLength; index++)
            store.appendMessage("history", {
                role: index % 2 === 0 ? "user" : "assistant", status: "complete",
                content: Array.from({length: 60}, (_, word) => words[(index * 7 + word) % words.length]).join(" ") + ` marker${index}`
            });
    })();
    db.close();
    return file;
}

const files = new Map(stores.map((store) => [store.name, prepare(store.name, store.key)]));
type Figures = {openMs: number[], turnSaveMs: number[], historyLoadMs: number[], searchMs: number[]};
const figures = new Map<string, Figures>(stores.map((store) => [store.name, {openMs: [], turnSaveMs: [], historyLoadMs: [], searchMs: []}]));
const time = (work: () => void) => {
    const start = process.hrtime.bigint();
    work();
    return Number(process.hrtime.bigint() - start) / 1e6;
};

for (let round = 0; round < options.rounds; round++) {
    for (const {name, key} of round % 2 === 0 ? stores : [...stores].reverse()) {
        const measured = figures.get(name)!;
        let db!: ReturnType<typeof openDatabase>;
        // Opening with the key already derived (as every open after the first in a process): the page cipher's cost, not scrypt's.
        measured.openMs.push(time(() => db = openDatabase(files.get(name)!, {key})));
        const store = new ConversationStore(db);
        // A turn as the core saves it: prompt and empty reply in one commit, the reply saved 10 times as it grows, then finished.
        measured.turnSaveMs.push(time(() => {
            const {reply} = store.appendTurn("turns", `Question ${round}: what did the cat see?`, {route: "local", routeReason: "bench"});
            let text = "";
            for (let piece = 0; piece < 10; piece++) {
                text += `${words[piece]} `;
                store.updateMessageContent(reply.id, text, piece + 1);
            }
            store.finishMessage(reply.id, {content: text, status: "complete", tokens: 10});
        }));
        measured.historyLoadMs.push(time(() => {
            if (store.messages("history").length !== historyLength)
                throw new Error("history not loaded whole");
        }));
        measured.searchMs.push(time(() => {
            if (store.search(`marker${(round * 37) % historyLength}`).length !== 1)
                throw new Error("search missed");
        }));
        store.purger.dispose();
        db.close();
    }
}

forgetDerivedKeys();
const scryptMs = median(Array.from({length: 3}, () => {
    const kdf = newPassphraseEnvelope();
    if (kdf.mode !== "passphrase")
        throw new Error("unreachable");
    return time(() => deriveKey("benchmark passphrase", kdf.kdf));
}));

const summary = Object.fromEntries([...figures].map(([name, measured]) => [name, {
    openMs: round(median(measured.openMs)),
    turnSaveMs: round(median(measured.turnSaveMs)),
    historyLoad1000Ms: round(median(measured.historyLoadMs)),
    searchMs: round(median(measured.searchMs))
}]));
const report = {
    when: new Date().toISOString(),
    machine: {cpus: os.cpus().length, cpu: os.cpus()[0]?.model ?? "unknown", node: process.version, loadAverage1m: {atStart: loadAtStart, atEnd: loadAverage1m()}},
    rounds: options.rounds,
    cipher: "SQLCipher 4 (AES-256-CBC, HMAC-SHA512 per page) via better-sqlite3-multiple-ciphers",
    historyMessages: historyLength,
    medians: summary,
    scryptDeriveMs: round(scryptMs),
    notes: "open: with the key already derived (every open after the first in a process); scrypt (N=2^16, r=8, p=1) runs once per passphrase entry"
};
fs.mkdirSync(path.dirname(path.resolve(options.out)), {recursive: true});
fs.writeFileSync(options.out, JSON.stringify(report, null, 2) + "\n");
fs.rmSync(dir, {recursive: true, force: true});

if (options.json === true)
    process.stdout.write(JSON.stringify(report, null, 2) + "\n");
else {
    const rows: Array<[string, keyof (typeof summary)[string]]> = [
        ["turn save (prompt, reply saved 10 times, finished)", "turnSaveMs"],
        [`history load (${historyLength} messages)`, "historyLoad1000Ms"],
        [`search (FTS5, ${historyLength} messages)`, "searchMs"],
        ["open (key derived)", "openMs"]
    ];
    process.stdout.write(`Store: plain vs encrypted, median of ${options.rounds} (ms)\n`);
    for (const [label, field] of rows)
        process.stdout.write(`  ${label.padEnd(52)} ${String(summary.plain![field]).padStart(8)} -> ${String(summary.encrypted![field]).padStart(8)}\n`);
    process.stdout.write(`  ${"scrypt key derivation (once per passphrase entry)".padEnd(52)} ${String(round(scryptMs)).padStart(20)}\n`);
    process.stdout.write(`Report: ${options.out}\n`);
}
