import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import {openDatabase} from "../../src/core/node/database/openDatabase.js";
import {afterEach, describe, expect, it} from "vitest";
import {runCliCapturing} from "../../tools/spawnCli.js";
import {toWireError} from "../../src/core/common/errors.js";
import {Core} from "../../src/core/node/Core.js";
import {SharedCloudSimulator} from "../../tools/cloudSim/SharedCloudSimulator.js";
import type {SharedCloudSimulatorOptions} from "../../tools/cloudSim/types.js";
import {loadLlama} from "../../src/core/node/engine/loadLlama.js";
import {tempDir} from "../helpers/tempCore.js";
import {requireTestModel} from "../helpers/testModel.js";
import {startCaptureProxy, type CaptureProxy, type CapturedExchange} from "./helpers/captureProxy.js";
import {databaseFiles, makeTestCanary, scanForSecrets, walkFiles, type Needle, type ScanSource} from "./helpers/scanForSecrets.js";

/**
 * Claim: the cloud API key and every canary planted in a cloud request never appear in logs
 * (stdout, stderr, console, audit events), in crash output (error messages and stack traces,
 * CLEANROOM_DEBUG=1), in the database files (db, -wal, -shm) or in other files the core writes
 * (app folder, temp folder, scrub scratch), in UTF-8, UTF-16, base64 or hex. Canaries may be in
 * the database only as their SHA-256 hashes in the `canaries` table; the key nowhere.
 *
 * Turns run against the shared-cloud simulator through a capturing proxy on 127.0.0.1, which
 * is how the test learns the canaries (they are in the request bodies) and sees the key (the
 * Authorization header): honest turns, an incident turn that is blocked, faulty-mode failures,
 * a hostile server that answers 401 echoing the key and the request, and one that streams the
 * request back as broken events (which the OpenAI SDK logs by default). Controls: the same
 * scanner finds the key and the canaries in the captured traffic, and in the hostile server's
 * answers.
 */
const modelPath = requireTestModel();
const canaryPattern = /CLRM-[A-Z2-7]{24}/g;

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse())
        await cleanup();
});

async function simulator(options: SharedCloudSimulatorOptions) {
    const sim = await SharedCloudSimulator.start(options);
    cleanups.push(() => sim.close());
    return sim;
}

async function proxy(options: Parameters<typeof startCaptureProxy>[0]) {
    const started = await startCaptureProxy(options);
    cleanups.push(() => started.close());
    return started;
}

function canariesIn(exchanges: CapturedExchange[], {key, side}: {key?: string, side: "request" | "response"}) {
    const found = new Set<string>();
    for (const exchange of exchanges)
        if (key == null || exchange.authorization === `Bearer ${key}`)
            for (const match of (side === "request" ? exchange.requestBody : exchange.responseBody).matchAll(canaryPattern))
                found.add(match[0]);
    return found;
}

/** Every row of the `canaries` table, and a check that each stored hash is a SHA-256 hex digest. */
function storedCanaryHashes(database: string) {
    const db = openDatabase(database, {readonly: true});
    const hashes = (db.prepare("SELECT hash FROM canaries").all() as Array<{hash: string}>).map((row) => row.hash);
    db.close();
    for (const hash of hashes)
        expect(hash).toMatch(/^[0-9a-f]{64}$/);
    return new Set(hashes);
}

const sha256 = (text: string) => crypto.createHash("sha256").update(text, "utf8").digest("hex");

/** Collects what the process writes (stdout, stderr, console) while `work` runs, passing it through. */
async function capturingOutput<T>(work: () => Promise<T>): Promise<{value: T, output: string}> {
    let output = "";
    const originals = {stdout: process.stdout.write.bind(process.stdout), stderr: process.stderr.write.bind(process.stderr)};
    const consoleMethods = ["log", "info", "warn", "error", "debug"] as const;
    const consoleOriginals = consoleMethods.map((name) => console[name]);
    process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
        output += String(chunk);
        return originals.stdout(chunk, ...rest as []);
    }) as typeof process.stdout.write;
    process.stderr.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
        output += String(chunk);
        return originals.stderr(chunk, ...rest as []);
    }) as typeof process.stderr.write;
    for (const [index, name] of consoleMethods.entries())
        console[name] = (...args: unknown[]) => {
            output += args.map((arg) => typeof arg === "string" ? arg : JSON.stringify(arg)).join(" ") + "\n";
            consoleOriginals[index]!(...args);
        };
    try {
        return {value: await work(), output};
    } finally {
        process.stdout.write = originals.stdout;
        process.stderr.write = originals.stderr;
        for (const [index, name] of consoleMethods.entries())
            console[name] = consoleOriginals[index]!;
    }
}

function runCli(args: string[], env: NodeJS.ProcessEnv) {
    return runCliCapturing(args, {env});
}

function needlesFor(keys: Record<string, string>, canaries: Iterable<string>): Needle[] {
    return [
        ...Object.entries(keys).map(([label, value]) => ({label, value})),
        ...[...canaries].map((value, index) => ({label: `canary ${index + 1}`, value}))
    ];
}

function describeFindings(findings: Array<{needle: string, where: string, encoding: string}>) {
    return findings.slice(0, 10).map((finding) => `${finding.needle} in ${finding.where} (${finding.encoding})`);
}

const longText = (label: string) =>
    `${label}: my sister sent the contract about the house on maple street with the bank account number for the deposit. `.repeat(12);

describe("secrets: the cloud API key and the canaries stay out of logs, crash output and the database", () => {
    it("in-process cores: honest turns, a blocked incident turn, faulty-mode failures and a hostile 401; key nowhere, canaries only hashed", async () => {
        const ourKey = makeTestCanary("our-api-key");
        const victimKey = makeTestCanary("victim-api-key");
        const dirs = {ours: tempDir("cloudsecrets-ours"), victim: tempDir("cloudsecrets-victim")};
        const databases = {ours: path.join(dirs.ours, "ours.db"), victim: path.join(dirs.victim, "victim.db")};
        const openCore = async (database: string, key: string) => {
            const core = Core.create(await loadLlama(), {
                database, engine: {threads: 1, contextSize: 512, pool: {idleTimeoutMs: 0}},
                cloud: {apiKey: () => key, clientOptions: {timeoutMs: 60_000, retries: 1}, charsPerCanary: 300}
            });
            cleanups.push(() => core.dispose());
            return core;
        };
        const ours = await openCore(databases.ours, ourKey);
        const victim = await openCore(databases.victim, victimKey);
        const honest = await simulator({mode: "honest"});
        const incident = await simulator({mode: "incident", poolTokens: 2048});
        const faulty = await simulator({mode: "faulty", faults: ["server-error", "cut-stream", "malformed-event"], stallMs: 500});
        const proxies: Record<string, CaptureProxy> = {
            honest: await proxy({target: honest.url}), incident: await proxy({target: incident.url}),
            faulty: await proxy({target: faulty.url}), hostile: await proxy({hostile: "401"}), malformed: await proxy({hostile: "malformed"})
        };
        const use = (core: Core, name: keyof typeof proxies) => core.setCloudSettings({endpoint: proxies[name]!.url, model: "cleanroom-sim", fallback: true, contextLimit: null});
        const results: unknown[] = [];
        const failures: unknown[] = [];
        const turn = async (core: Core, conversationId: string, text: string, maxTokens = 16) => {
            try {
                results.push(await core.sendMessage({conversationId, text, maxTokens, route: "cloud"}));
            } catch (error) {
                failures.push({wire: toWireError(error), stack: error instanceof Error ? error.stack : null});
            }
        };

        const {output} = await capturingOutput(async () => {
            use(ours, "honest");
            const first = ours.createConversation({policy: "cloud-allowed", title: "Plans"});
            await turn(ours, first.id, longText("first"));
            await turn(ours, first.id, "And what about the garage door?");
            const second = ours.createConversation({policy: "cloud-allowed"});
            await turn(ours, second.id, longText("second"));

            use(victim, "incident");
            for (let index = 0; index < 3; index++)
                await turn(victim, victim.createConversation({policy: "cloud-allowed"}).id,
                    "The quarterly contract for the house on maple street names the buyer and the bank. ".repeat(20));
            use(ours, "incident");
            await turn(ours, ours.createConversation({policy: "cloud-allowed"}).id, "word ".repeat(1800));

            use(ours, "faulty");
            for (let index = 0; index < 3; index++)
                await turn(ours, ours.createConversation({policy: "cloud-allowed"}).id, longText(`faulty ${index}`));

            use(ours, "hostile");
            await turn(ours, ours.createConversation({policy: "cloud-allowed"}).id, longText("hostile"));
            use(ours, "malformed");
            await turn(ours, ours.createConversation({policy: "cloud-allowed"}).id, longText("malformed"));
        });

        // The runs did what the scenarios say.
        // (The victim's repeated filler may itself be blocked as a fingerprint match: only ours matters here.)
        const blocked = results.filter((result) => (result as {cloud?: {blocked?: boolean}}).cloud?.blocked === true);
        expect(blocked.map((result) => (result as {cloud: {verdict: {kind: string}}}).cloud.verdict.kind), "our incident turn was blocked").toContain("foreign-canary");
        expect(incident.requests.some((request) => request.leaks.length > 0), "the incident server did leak").toBe(true);
        expect(failures.length, "faulty and hostile turns failed").toBeGreaterThanOrEqual(3);
        expect(failures.map((failure) => (failure as {wire: {code: string}}).wire.code)).toContain("CLOUD_REQUEST_FAILED");

        // What to look for: both keys, and every canary any request carried (ours and the victim's, which leaked back to us).
        const exchanges = Object.values(proxies).flatMap((captured) => captured.exchanges);
        const oursPlanted = canariesIn(exchanges, {key: ourKey, side: "request"});
        const victimPlanted = canariesIn(exchanges, {key: victimKey, side: "request"});
        const allCanaries = new Set([...oursPlanted, ...victimPlanted, ...canariesIn(exchanges, {side: "response"})]);
        expect(oursPlanted.size, "our requests carried canaries").toBeGreaterThanOrEqual(10);
        expect(victimPlanted.size).toBeGreaterThanOrEqual(3);
        const needles = needlesFor({"our API key": ourKey, "victim API key": victimKey}, allCanaries);

        // Controls: the scanner finds them where they legitimately are, on the wire.
        const traffic = scanForSecrets([
            {kind: "text", name: "captured requests", text: exchanges.map((exchange) => `${exchange.authorization}\n${exchange.requestBody}`).join("\n")}
        ], needles);
        expect(new Set(traffic.findings.map((finding) => finding.needle)).size).toBe(needles.length);
        expect(scanForSecrets([{kind: "text", name: "hostile answers", text: proxies.hostile!.exchanges.map((exchange) => exchange.responseBody).join("\n")}],
            [{label: "our API key", value: ourKey}]).findings.length).toBeGreaterThan(0);
        expect(canariesIn(proxies.malformed!.exchanges, {side: "response"}).size, "the broken stream carried our canaries back").toBeGreaterThan(0);

        // Logs and crash output: what the process wrote, the audit trail, every error (message, details, stack) and every result handed back.
        const logs = scanForSecrets([
            {kind: "text", name: "process output", text: output},
            {kind: "text", name: "errors and stacks", text: JSON.stringify(failures)},
            {kind: "text", name: "turn results", text: JSON.stringify(results)},
            {kind: "text", name: "audit events (ours)", text: JSON.stringify(ours.auditEvents({}))},
            {kind: "text", name: "audit events (victim)", text: JSON.stringify(victim.auditEvents({}))}
        ], needles);
        expect(describeFindings(logs.findings)).toEqual([]);

        // The database files, while the cores run and after they close; and everything else in their folders.
        const scanStores = () => scanForSecrets([...databaseFiles(databases.ours), ...databaseFiles(databases.victim)], needles);
        const open = scanStores();
        expect(describeFindings(open.findings)).toEqual([]);
        await ours.dispose();
        await victim.dispose();
        const closed = scanForSecrets([{kind: "directory", path: dirs.ours}, {kind: "directory", path: dirs.victim}], needles);
        expect(describeFindings(closed.findings)).toEqual([]);

        // Canaries are remembered, by hash only: every canary a core planted is in its own ledger, and nothing else is.
        const oursHashes = storedCanaryHashes(databases.ours);
        const victimHashes = storedCanaryHashes(databases.victim);
        for (const canary of oursPlanted)
            expect(oursHashes.has(sha256(canary)), "a canary we planted is in our ledger").toBe(true);
        for (const canary of victimPlanted) {
            expect(victimHashes.has(sha256(canary))).toBe(true);
            expect(oursHashes.has(sha256(canary)), "another install's canary is never recorded as ours").toBe(false);
        }
        console.info(`[cloud secrets, in-process] ${exchanges.length} requests captured, ${oursPlanted.size} + ${victimPlanted.size} canaries planted, ` +
            `${allCanaries.size} canaries and 2 keys searched; scanned ${logs.bytesScanned} bytes of logs, ${open.bytesScanned} bytes of open databases, ` +
            `${closed.bytesScanned} bytes in ${closed.sourcesScanned} files after closing: 0 hits. ${results.length} turns answered (${blocked.length} blocked), ${failures.length} failed.`);
    }, 120_000);

    it("the CLI (chat --cloud, CLEANROOM_CLOUD_API_KEY, CLEANROOM_DEBUG=1): honest, blocked, failed and 401 turns; key and canaries in no output, file or database", async () => {
        const key = makeTestCanary("cli-api-key");
        const victimKey = makeTestCanary("cli-victim-key");
        const home = tempDir("cloudsecrets-cli-home");
        const tmp = tempDir("cloudsecrets-cli-tmp");
        const database = path.join(home, "cleanroom.db");
        // The scrub scratch root of this test file alone (test/setup/hermetic.ts): everything in it is ours to scan.
        const scratchRoot = process.env.CLEANROOM_SCRATCH_DIR!;
        const honest = await simulator({mode: "honest"});
        const incident = await simulator({mode: "incident", poolTokens: 2048});
        const faulty = await simulator({mode: "faulty", faults: ["server-error", "cut-stream", "malformed-event"], stallMs: 500});
        const proxies = {
            honest: await proxy({target: honest.url}), incident: await proxy({target: incident.url}),
            faulty: await proxy({target: faulty.url}), hostile: await proxy({hostile: "401"}), malformed: await proxy({hostile: "malformed"})
        };

        // Another tenant fills the incident server's pages first (in this process, its own key).
        const victimDir = tempDir("cloudsecrets-cli-victim");
        const victim = Core.create(await loadLlama(), {
            database: path.join(victimDir, "victim.db"),
            cloud: {apiKey: () => victimKey, clientOptions: {timeoutMs: 60_000, retries: 1}, charsPerCanary: 300}
        });
        cleanups.push(() => victim.dispose());
        victim.setCloudSettings({endpoint: proxies.incident.url, model: "cleanroom-sim", fallback: true});
        for (let index = 0; index < 3; index++)
            await victim.sendMessage({conversationId: victim.createConversation({policy: "cloud-allowed"}).id,
                text: "The quarterly contract for the house on maple street names the buyer and the bank. ".repeat(20), maxTokens: 16, route: "cloud"});

        const env = {
            ...process.env, CLEANROOM_HOME: home, TMPDIR: tmp, CLEANROOM_CLOUD_API_KEY: key, CLEANROOM_DEBUG: "1", CLEANROOM_MODEL: ""
        };
        const cloud = (endpoint: string, prompt: string, extra: string[] = []) => [
            "chat", "--cloud", "--endpoint", endpoint, "--cloud-model", "cleanroom-sim", "--db", database, "--max-tokens", "16",
            "--threads", "1", "--context-size", "512", "--prompt", prompt, ...extra
        ];
        const runs = {
            // With the real model loaded (token counts, the local engine up), when the test model is here.
            honestJson: await runCli(cloud(proxies.honest.url, longText("cli honest"), ["--conversation", "cli-1", "--json"]),
                {...env, CLEANROOM_MODEL: modelPath ?? ""}),
            honestAgain: await runCli(cloud(proxies.honest.url, "And the garage door?", ["--conversation", "cli-1"]), env),
            blocked: await runCli(cloud(proxies.incident.url, "word ".repeat(1800), ["--json"]), env),
            faulty1: await runCli(cloud(proxies.faulty.url, longText("cli faulty 1")), env),
            faulty2: await runCli(cloud(proxies.faulty.url, longText("cli faulty 2"), ["--json"]), env),
            hostile: await runCli(cloud(proxies.hostile.url, longText("cli hostile")), env),
            malformed: await runCli(cloud(proxies.malformed.url, longText("cli malformed")), env)
        };
        expect(runs.honestJson.code, runs.honestJson.stderr).toBe(0);
        expect(runs.honestAgain.code, runs.honestAgain.stderr).toBe(0);
        expect(runs.blocked.code, runs.blocked.stderr).toBe(3);
        expect(runs.hostile.code).toBe(1);
        expect(runs.hostile.stderr).toMatch(/HTTP 401/);
        expect(runs.hostile.stderr, "CLEANROOM_DEBUG=1 printed a stack trace").toMatch(/\n\s+at /);
        expect([runs.faulty1.code, runs.faulty2.code]).toContain(1);

        const exchanges = Object.values(proxies).flatMap((captured) => captured.exchanges);
        const planted = canariesIn(exchanges, {key, side: "request"});
        const victimPlanted = canariesIn(exchanges, {key: victimKey, side: "request"});
        const allCanaries = new Set([...planted, ...victimPlanted, ...canariesIn(exchanges, {side: "response"})]);
        expect(planted.size).toBeGreaterThanOrEqual(8);
        expect(exchanges.some((exchange) => exchange.authorization === `Bearer ${key}`), "the CLI sent the key from CLEANROOM_CLOUD_API_KEY").toBe(true);
        const needles = needlesFor({"CLI API key": key, "victim API key": victimKey}, allCanaries);

        const outputs = scanForSecrets(Object.entries(runs).flatMap(([name, run]) => [
            {kind: "text" as const, name: `stdout of ${name}`, text: run.stdout}, {kind: "text" as const, name: `stderr of ${name}`, text: run.stderr}
        ]), needles);
        expect(describeFindings(outputs.findings)).toEqual([]);

        const files: ScanSource[] = [
            ...databaseFiles(database),
            ...walkFiles(home).filter((file) => !file.startsWith(database)).map((file) => ({kind: "file" as const, path: file})),
            {kind: "directory", path: tmp},
            {kind: "directory" as const, path: scratchRoot}
        ];
        const stored = scanForSecrets(files, needles);
        expect(describeFindings(stored.findings)).toEqual([]);
        expect(fs.readdirSync(scratchRoot), "scrub scratch folders are removed").toEqual([]);

        const hashes = storedCanaryHashes(database);
        for (const canary of planted)
            expect(hashes.has(sha256(canary))).toBe(true);
        for (const canary of victimPlanted)
            expect(hashes.has(sha256(canary))).toBe(false);
        const audit = openDatabase(database, {readonly: true});
        const events = audit.prepare("SELECT kind, data_json FROM audit_events").all() as Array<{kind: string, data_json: string}>;
        audit.close();
        expect(events.map((event) => event.kind)).toEqual(expect.arrayContaining(["turn.cloud", "cloud.blocked", "cloud.failed"]));

        console.info(`[cloud secrets, CLI] ${Object.keys(runs).length} runs (exit codes ${Object.values(runs).map((run) => run.code).join(", ")}), ` +
            `${exchanges.length} requests captured, ${planted.size} canaries planted by the CLI, ${allCanaries.size} canaries and 2 keys searched; ` +
            `scanned ${outputs.bytesScanned} bytes of stdout/stderr and ${stored.bytesScanned} bytes in ${stored.sourcesScanned} files: 0 hits.`);
    }, 240_000);
});
