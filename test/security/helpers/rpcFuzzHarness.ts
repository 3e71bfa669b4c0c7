import path from "node:path";
import {fileURLToPath} from "node:url";
import fc from "fast-check";
import type Database from "better-sqlite3-multiple-ciphers";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type * as z from "zod";
import {coreCalls, type ApiMethod} from "../../../src/core/common/api/index.js";
import {errorCodes} from "../../../src/core/common/errors.js";
import {connectCoreClient, createInProcessChannelPair, RemoteCallError, type ConnectedCoreClient} from "../../../src/core/common/rpc/index.js";
import type {SecretVault} from "../../../src/core/common/secrets.js";
import {type Core} from "../../../src/core/node/Core.js";
import {loadLlama} from "../../../src/core/node/engine/loadLlama.js";
import {llamaBuildStandInVariable} from "../../../src/core/node/engine/localLlamaBuild.js";
import {openDatabase} from "../../../src/core/node/database/openDatabase.js";
import {createCoreService, type CoreService} from "../../../src/core/node/rpc/createCoreService.js";
import {serveCoreOverChannel} from "../../../src/core/node/rpc/serveCoreOverChannel.js";
import {setEnvForTest} from "../../helpers/setEnvForTest.js";
import {tempDir} from "../../helpers/tempCore.js";
import {
    clearlyWrongFor, isObjectLike, isOptional, isStrictObject, nested, nestedArrays, objectShape, prototypeKeys, validArbitrary, withJsonKey, withOwnKey, wrongValue
} from "./contractArbitraries.js";
import {SeededRandom} from "./seededRandom.js";
import {openTestCore, servicesOf} from "../../helpers/coreServices.js";

const standInLlamaBuild = fileURLToPath(new URL("../../helpers/standInLlamaBuild.mjs", import.meta.url));

/**
 * The RPC fuzz harness (test/security/rpcFuzz*.test.ts). Claim: the core's one door refuses
 * every input the contract does not allow, whatever it is, with INVALID_INPUT; a refused call
 * changes nothing (every table of the database, the secret vault, the model status); the core
 * stays up and answers afterwards. Every call of the contract is fed `runsPerCall` (10,000)
 * generated inputs through the in-process transport (structured clone, as over a
 * MessagePort), no model needed. Calls are read from the contract object, so a new one is
 * fuzzed without editing the tests; the calls are shared out between test files by index so
 * that no file runs long.
 *
 * Two oracles decide what must be refused: the contract's own schema, and rules that hold
 * whatever the schema says (a non-object, an unknown or prototype key on a strict object, a
 * string of over 100,000 code points, a value of a type the field can never take, a required
 * field removed). When they disagree the test fails.
 *
 * Replay a run with CLEANROOM_FUZZ_SEED=<seed printed by the test>.
 */

export const seed = SeededRandom.runSeed();
/** At least 10,000 per call; CLEANROOM_RPC_FUZZ_RUNS raises (or, while developing, lowers) it. */
export const runsPerCall = Number(process.env.CLEANROOM_RPC_FUZZ_RUNS ?? 10_000);
/** Longest string a call accepts (`chat.send` text; an export file given back to `conversations.import`); longer is refused whatever the field. */
const longestAcceptedString = (method: ApiMethod) => method === "conversations.import" ? 2_000_000 : 100_000;
const callTimeoutMs = 10_000;

/** Every code a WireError may carry: the one list the ErrorCode type comes from. */
const knownCodes: ReadonlySet<string> = new Set(errorCodes);

/**
 * Why an input must be refused whatever the schema says: a reason, null (the schema decides), or the rule that decides it from
 * what the core's door receives (after the transport's structured clone: the harness makes no copy of its own).
 */
type MustRefuse = string | null | ((delivered: unknown) => string | null);
type Sample = {input: unknown, category: string, mustRefuse: MustRefuse, direct?: boolean};

export type Counts = {inputs: number, refused: number, accepted: number, otherErrors: number, crashes: number, hangs: number, byCategory: Record<string, number>, byCode: Record<string, number>};

/** This file's tallies, by call; emptied once printed (files that share a worker process share this module). */
const counts = new Map<string, Counts>();
const countsFor = (name: string) => {
    let entry = counts.get(name);
    if (entry == null) {
        entry = {inputs: 0, refused: 0, accepted: 0, otherErrors: 0, crashes: 0, hangs: 0, byCategory: {}, byCode: {}};
        counts.set(name, entry);
    }
    return entry;
};

/** The cloud key store, observable: a refused call must not write to it. */
class ObservedVault implements SecretVault {
    public readonly storage = "memory";
    public readonly warning = null;
    public readonly secrets = new Map<string, string>();

    public async has(name: string) {
        return this.secrets.has(name);
    }

    public async read(name: string) {
        return this.secrets.get(name) ?? null;
    }

    public async write(name: string, value: string | null) {
        if (value == null)
            this.secrets.delete(name);
        else
            this.secrets.set(name, value);
    }
}

let core: Core;
let service: CoreService;
/** Called by the door the client is served through with what it receives, before the core's own door sees it. */
let atTheDoor: ((method: string, delivered: unknown) => void) | null = null;
let client: ConnectedCoreClient;
let closeChannel: () => void;
let vault: ObservedVault;
let conversationIds: string[] = [];
let snapshot: () => string;
/** Cheap to read, so checked after every refused call: moves whenever anything is written (see `databaseState`). */
let writeMark: () => string;
let restoreBaseline: () => void;
/** The state every refused call must leave as it found it: the fixed world, restored after each accepted call that wrote. */
let baselineState: string;
/** The write mark of the baseline, taken again after each accepted call that moved it. */
let baselineWriteMark: string;
/** The model status (in memory, not restorable): a refused call must leave it as the last accepted call left it. */
let modelState: string;

/**
 * Every row of every table (sqlite_sequence included) and the vault, as one string; how to put the baseline back; and the
 * database's write counters. Reading every row after each of the hundreds of thousands of refused calls was half the
 * fuzzers' time; the counters cost two statements and are stricter: `total_changes()` counts every row this connection
 * inserts, updates or deletes (triggers included, even a row rewritten to the same value), and `data_version` moves when
 * another connection commits to the file.
 */
/** The order a table's rows are read in: its rowid, or for a WITHOUT ROWID table (which has none) its primary key's columns. */
function rowOrderOf(db: Database.Database, table: string): string {
    const withoutRowid = (db.prepare("SELECT wr FROM pragma_table_list WHERE schema = 'main' AND name = ?").pluck().get(table) as number | undefined) === 1;
    if (!withoutRowid)
        return "rowid";
    const keyColumns = db.prepare("SELECT name FROM pragma_table_info(?) WHERE pk > 0 ORDER BY pk").pluck().all(table) as string[];
    return keyColumns.map((column) => `"${column}"`).join(", ");
}

function databaseState(db: Database.Database) {
    // The full-text indexes (messages_fts, attachment_chunks_fts and their shadow tables) follow their tables through triggers: restored with them.
    const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as Array<{name: string}>).map((row) => row.name)
        .filter((name) => !name.startsWith("messages_fts") && !name.startsWith("attachment_chunks_fts"));
    const reads = tables.map((table) => [table, db.prepare(`SELECT * FROM "${table}" ORDER BY ${rowOrderOf(db, table)}`)] as const);
    const take = () => Object.fromEntries(reads.map(([table, statement]) => [table, statement.all() as Array<Record<string, unknown>>]));
    const state = () => JSON.stringify({tables: take(), vault: [...vault.secrets]});
    // Both counters in one statement: read after every refused call, two statements a database were a twentieth of the fuzzers' CPU.
    // A database in memory (incognito's) has no other connection: its own count is all, read in 0.1 µs instead of 1.5.
    const writeCounters = db.memory
        ? db.prepare("SELECT total_changes()").pluck()
        : db.prepare("SELECT total_changes() || '/' || data_version FROM pragma_data_version").pluck();
    const writes = () => String(writeCounters.get());

    // Children (tables with foreign keys) are emptied first and refilled last.
    const hasForeignKeys = (table: string) => (db.prepare(`PRAGMA foreign_key_list("${table}")`).all() as unknown[]).length > 0;
    const deleteOrder = [...tables].sort((a, b) => Number(hasForeignKeys(b)) - Number(hasForeignKeys(a)));
    const baseline = take();
    const baselineVault = [...vault.secrets];
    const inserts = new Map(tables.map((table) => {
        const columns = (db.prepare(`PRAGMA table_info("${table}")`).all() as Array<{name: string}>).map((column) => column.name);
        return [table, db.prepare(`INSERT INTO "${table}" (${columns.map((column) => `"${column}"`).join(", ")}) VALUES (${columns.map((column) => `@${column}`).join(", ")})`)];
    }));
    const deletes = new Map(tables.map((table) => [table, db.prepare(`DELETE FROM "${table}"`)]));
    const restoreRows = db.transaction(() => {
        for (const table of deleteOrder)
            deletes.get(table)!.run();
        for (const table of [...deleteOrder].reverse())
            for (const row of baseline[table]!)
                inserts.get(table)!.run(row);
    });
    const restore = () => {
        restoreRows();
        vault.secrets.clear();
        for (const [name, value] of baselineVault)
            vault.secrets.set(name, value);
    };
    return {state, restore, writes};
}

type Outcome = {ok: true} | {ok: false, code: string, disconnected: boolean} | {crash: string};

async function callOverTransport(method: string, input: unknown): Promise<Outcome> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<Outcome>((resolve) => {
        timer = setTimeout(() => resolve({crash: `no answer within ${callTimeoutMs} ms`}), callTimeoutMs);
    });
    const call = client.call(method as ApiMethod, input as never).then(
        (): Outcome => ({ok: true}),
        (error: unknown): Outcome => error instanceof RemoteCallError
            ? {ok: false, code: error.code, disconnected: error.details.disconnected === true}
            : {crash: `the client threw ${String(error)}`}
    );
    try {
        return await Promise.race([call, timeout]);
    } finally {
        clearTimeout(timer);
    }
}

async function callAtTheDoor(method: string, input: unknown): Promise<Outcome> {
    try {
        atTheDoor?.(method, input);
        const result = await service.call(method, input);
        return result.ok ? {ok: true} : {ok: false, code: result.error.code, disconnected: false};
    } catch (error) {
        return {crash: `the door threw ${String(error)}`};
    }
}

/**
 * Runs the fuzz loop `work` capturing no stack for the errors built meanwhile: every refused input builds two (the door's
 * InvalidInputError, the client's RemoteCallError), and nothing reads their stacks (a breach is told by its message).
 */
async function withoutStackTraces(work: () => Promise<void>) {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
        await work();
    } finally {
        Error.stackTraceLimit = limit;
    }
}

/** Sends one generated input and checks the door's answer; throws (failing the property) on any breach. */
async function exercise(name: string, method: string, sample: Sample) {
    const tally = countsFor(name);
    tally.inputs++;
    tally.byCategory[sample.category] = (tally.byCategory[sample.category] ?? 0) + 1;

    // Judged on what the core receives: a structured clone over this transport (null prototypes become plain objects).
    const schema = (coreCalls as Record<string, {input: z.ZodType}>)[method]?.input;
    // Recorded, not thrown: a throw here would reach the client as the door's own failure.
    const verdicts: Array<{method: string, schemaRefuses: boolean, mustRefuse: string | null} | {method: string, threw: string}> = [];
    atTheDoor = (receivedBy, delivered) => {
        try {
            verdicts.push({
                method: receivedBy,
                schemaRefuses: schema == null || !schema.safeParse(delivered).success,
                mustRefuse: typeof sample.mustRefuse === "function" ? sample.mustRefuse(delivered) : sample.mustRefuse
            });
        } catch (error) {
            verdicts.push({method: receivedBy, threw: String(error)});
        }
    };
    let outcome: Outcome;
    try {
        outcome = sample.direct === true ? await callAtTheDoor(method, sample.input) : await callOverTransport(method, sample.input);
    } finally {
        atTheDoor = null;
    }
    if ("crash" in outcome) {
        if (outcome.crash.startsWith("no answer"))
            tally.hangs++;
        else
            tally.crashes++;
        throw new Error(`${method} (${sample.category}): ${outcome.crash}`);
    }
    if (!outcome.ok && outcome.disconnected) {
        tally.crashes++;
        throw new Error(`${method} (${sample.category}): the transport failed (${outcome.code})`);
    }
    const verdict = verdicts[0];
    if (verdicts.length !== 1 || verdict?.method !== method)
        throw new Error(`${method} (${sample.category}): the core's door received ${JSON.stringify(verdicts.map((entry) => entry.method))}, not this call once`);
    if ("threw" in verdict)
        throw new Error(`${method} (${sample.category}): judging the input threw ${verdict.threw}`);
    const {schemaRefuses, mustRefuse} = verdict;
    if (mustRefuse != null && !schemaRefuses)
        throw new Error(`${method}: the contract accepts an input that must be refused (${mustRefuse})`);
    if (!outcome.ok) {
        tally.byCode[outcome.code] = (tally.byCode[outcome.code] ?? 0) + 1;
        if (!knownCodes.has(outcome.code))
            throw new Error(`${method} (${sample.category}): unknown error code ${outcome.code}`);
    }

    if (schemaRefuses) {
        if (outcome.ok || outcome.code !== "INVALID_INPUT")
            throw new Error(`${method} (${sample.category}): a refused input came back ${outcome.ok ? "ok" : outcome.code}, not INVALID_INPUT`);
        tally.refused++;
        // Before this call the state was the baseline (checked after every accepted call and after each batch of inputs).
        if (writeMark() !== baselineWriteMark || JSON.stringify(service.models.status) !== modelState)
            throw new Error(`${method} (${sample.category}): a refused call changed the state`);
        return;
    }

    // Valid input that slipped through: any outcome but a crash is fine; INTERNAL means a handler threw something unexpected.
    if (!outcome.ok && outcome.code === "INTERNAL")
        throw new Error(`${method} (${sample.category}): a valid input ended in INTERNAL`);
    if (outcome.ok)
        tally.accepted++;
    else
        tally.otherErrors++;
    modelState = JSON.stringify(service.models.status);
    // Nothing written (the write mark, which the refused calls rely on, has not moved): no row to read, the batch's check reads them all.
    if (writeMark() === baselineWriteMark)
        return;
    if (snapshot() !== baselineState) {
        restoreBaseline();
        if (snapshot() !== baselineState)
            throw new Error(`${method} (${sample.category}): the fixed world could not be restored after an accepted call`);
    }
    baselineWriteMark = writeMark();
}

/** The generated inputs for one call: ten kinds, `runsPerCall` in all. */
function samplesFor(method: ApiMethod): Array<{arbitrary: fc.Arbitrary<Sample>, runs: number}> {
    const schema = coreCalls[method].input as z.ZodType;
    const shape = objectShape(schema) ?? {};
    const fields = Object.keys(shape);
    const strict = isStrictObject(schema);
    const required = fields.filter((field) => !isOptional(shape[field]!));
    const known = new Set(fields);
    const validId = fc.string({unit: fc.constantFrom(..."abcdefghijklmnopqrstuvwxyz0123456789-_.:"), minLength: 1, maxLength: 40});
    const valid = validArbitrary(schema, {
        conversationId: fc.oneof({arbitrary: fc.constantFrom(...conversationIds), weight: 4}, {arbitrary: validId, weight: 1}),
        // A valid download URL that slipped through must never reach the network (the service here has no model library, but
        // should one be wired in by default, port 9 on 127.0.0.1 refuses at once).
        url: fc.constantFrom("http://127.0.0.1:9/fuzz.gguf", "https://127.0.0.1:9/fuzz.gguf")
    }) as fc.Arbitrary<Record<string, unknown>>;
    /** The independent rule: a strict object refuses anything but a plain object of its own keys. */
    const ruleRefuses = (clone: unknown) => {
        // zod takes any non-array object (a Map, a Date, a boxed string…) and hands the handler a fresh plain object of the known keys.
        if (!isObjectLike(clone))
            return "not an object";
        if (strict && Object.keys(clone).some((key) => !known.has(key)))
            return "an unknown key";
        if (required.some((key) => !(key in clone) || clone[key] === undefined))
            return "a required field missing";
        return null;
    };
    const judged = (category: string, direct = false) => (input: unknown): Sample => {
        return {input, category, mustRefuse: ruleRefuses, ...(direct ? {direct} : {})};
    };
    const fieldOrExtra = fields.length > 0 ? fc.constantFrom(...fields, "__extra__") : fc.constant("__extra__");

    const anything = fc.anything({
        maxDepth: 4, maxKeys: 6, withBigInt: true, withBoxedValues: true, withDate: true, withMap: true, withSet: true,
        withNullPrototype: true, withObjectString: true, withSparseArray: true, withTypedArray: true
    }).map(judged("anything"));
    const json = fc.jsonValue({maxDepth: 4}).map(judged("json"));
    const randomObject = fc.dictionary(fc.oneof(fc.constantFrom(...fields, ...prototypeKeys, ""), fc.string({maxLength: 12})), wrongValue, {maxKeys: 5})
        .map(judged("random keys"));
    const wrongTypes = fields.length === 0
        ? fc.dictionary(fc.string({minLength: 1, maxLength: 12}), wrongValue, {minKeys: 1, maxKeys: 4}).map(judged("right keys, wrong types"))
        : fc.record(Object.fromEntries(fields.map((field) => [field, wrongValue])), {noNullPrototype: true}).map(judged("right keys, wrong types"));
    const mutation = fc.oneof(
        {weight: 4, arbitrary: wrongValue.map((value) => ({value, kind: "set"}))},
        {weight: 3, arbitrary: fc.constant({value: undefined, kind: "delete"})},
        {weight: 2, arbitrary: fc.constantFrom(...prototypeKeys, "unexpected", "").map((key) => ({value: 1, kind: `add:${key}`}))}
    );
    const nearValid = fc.tuple(valid, fieldOrExtra, mutation).map(([base, field, change]): Sample => {
        if (change.kind.startsWith("add:"))
            return {...judged("near-valid, one key added")(withOwnKey(base, change.kind.slice(4), change.value))};
        if (field === "__extra__")
            return judged("near-valid, one key added")(withOwnKey(base, "extra", change.value));
        if (change.kind === "delete") {
            const copy = {...base};
            delete copy[field];
            return judged("near-valid, one field removed")(copy);
        }
        return judged("near-valid, one field changed")({...base, [field]: change.value});
    });
    const clearlyWrong = fields.flatMap((field) => {
        const wrong = clearlyWrongFor(shape[field]!);
        return wrong == null ? [] : [fc.tuple(valid, wrong).map(([base, value]): Sample =>
            ({input: {...base, [field]: value}, category: "near-valid, one field of a type it never takes", mustRefuse: `${field} of the wrong type`}))];
    });
    const typed = clearlyWrong.length > 0 ? fc.oneof(...clearlyWrong) : nearValid;
    const huge = fc.tuple(valid, fieldOrExtra, fc.integer({min: longestAcceptedString(method) + 1, max: 1.5 * longestAcceptedString(method)}), fc.constantFrom("x", "é", "😀", " ", "\u0000"), fc.boolean())
        .map(([base, field, length, unit, asKey]): Sample => {
            // zod counts string lengths in code points: every unit here is one code point.
            const text = unit.repeat(length);
            if (asKey)
                return {input: withOwnKey(base, text, 1), category: "huge string", mustRefuse: "a huge unknown key"};
            return {input: {...base, [field === "__extra__" ? "extra" : field]: text}, category: "huge string", mustRefuse: `a string of ${length} code points`};
        });
    const pollution = fc.tuple(valid, fc.constantFrom(...prototypeKeys), fc.constantFrom<unknown>({polluted: true}, "polluted", null, [1], {toString: "x"}), fc.constantFrom("own", "json", "nested"), fieldOrExtra)
        .map(([base, key, value, how, field]): Sample => {
            if (how === "json")
                return judged("prototype keys")(JSON.parse(withJsonKey(base, key, value)));
            if (how === "nested" && field !== "__extra__")
                return judged("prototype keys")({...base, [field]: JSON.parse(`{${JSON.stringify(key)}:${JSON.stringify(value)}}`)});
            return judged("prototype keys")(withOwnKey(base, key, value));
        });
    const deep = fc.tuple(valid, fieldOrExtra, fc.integer({min: 50, max: 1000}), fc.constantFrom("array", "object") as fc.Arbitrary<"array" | "object">, fc.boolean())
        .map(([base, field, depth, kind, topLevel]) => judged("deeply nested")(topLevel ? nested(depth, kind) : {...base, [field === "__extra__" ? "extra" : field]: nested(depth, kind)}));
    // Deeper than a structured clone can carry, but what JSON.parse (the WebSocket transport) builds: sent to the door directly.
    const deeper = fc.tuple(valid, fieldOrExtra, fc.integer({min: 5_000, max: 20_000}), fc.boolean())
        .map(([base, field, depth, topLevel]): Sample => {
            const value = nestedArrays(depth);
            return judged("very deeply nested (door)", true)(topLevel ? value : {...base, [field === "__extra__" ? "extra" : field]: value});
        });
    const validOnes = valid.map((input): Sample => ({input, category: "valid", mustRefuse: null}));

    const parts: Array<{arbitrary: fc.Arbitrary<Sample>, share: number}> = [
        {arbitrary: anything, share: 2150},
        {arbitrary: json, share: 1000},
        {arbitrary: randomObject, share: 600},
        {arbitrary: wrongTypes, share: 1500},
        {arbitrary: nearValid, share: 2000},
        {arbitrary: typed, share: 1000},
        {arbitrary: huge, share: 100},
        {arbitrary: pollution, share: 800},
        {arbitrary: deep, share: 400},
        {arbitrary: deeper, share: 50},
        {arbitrary: validOnes, share: 400}
    ];
    const plan = parts.map(({arbitrary, share}) => ({arbitrary, runs: Math.max(1, Math.round(share * runsPerCall / 10_000))}));
    plan[0]!.runs += runsPerCall - plan.reduce((sum, part) => sum + part.runs, 0);
    return plan;
}

/** Fuzzes the calls whose index in the contract is `part` modulo `parts` (each test file takes one share). */
export function registerCallFuzz({part, parts}: {part: number, parts: number}) {
    const restoreEnv: Array<() => void> = [];
    beforeAll(async () => {
        // An accepted engine.build would otherwise start node-llama-cpp's real build of llama.cpp (25 minutes of both cores)
        // into the shared node_modules, where a live build lock makes every other process on the machine wait: the fuzzer's
        // builds are the test's stand-in, into a folder of this file's own.
        restoreEnv.push(setEnvForTest(llamaBuildStandInVariable, standInLlamaBuild),
            setEnvForTest("CLEANROOM_LLAMA_LOCAL_BUILDS", tempDir("rpcfuzz-llama-builds")));
        console.info(`[rpc fuzz ${part + 1}/${parts}] seed ${seed} (replay with CLEANROOM_TEST_SEED=${seed}), ${runsPerCall} inputs per call`);
        // No model: the door and the handlers that need none; a turn fails with MODEL_NOT_LOADED.
        core = openTestCore(await loadLlama(), {database: path.join(tempDir("rpcfuzz"), "fuzz.db")});
        vault = new ObservedVault();
        service = createCoreService(core, {vault});
        const [coreSide, clientSide, close] = createInProcessChannelPair();
        serveCoreOverChannel({
            ...service,
            call: (method, input, connection) => {
                atTheDoor?.(method, input);
                return service.call(method, input, connection);
            }
        }, coreSide);
        client = connectCoreClient(clientSide);
        closeChannel = close;

        // A small fixed world: a local conversation, a cloud-allowed one with a turn in it, a setting, a stored key.
        const local = await client.call("conversations.create", {title: "Fuzz local"});
        const cloud = await client.call("conversations.create", {title: "Fuzz cloud", policy: "cloud-allowed"});
        servicesOf(core).store.appendMessage(cloud.id, {role: "user", content: "Once upon a time", status: "complete"});
        servicesOf(core).store.appendMessage(cloud.id, {role: "assistant", content: "there was a fox.", status: "complete", route: "local", routeReason: "fuzz"});
        // A key is kept only with an endpoint to bind it to (port 9 on this machine: nothing listens).
        await client.call("settings.set", {threads: 1, cloudEndpoint: "https://127.0.0.1:9/v1", cloudApiKey: "sk-fuzz-baseline"});
        conversationIds = [local.id, cloud.id];
        await new Promise((resolve) => setTimeout(resolve, 20));
        // The database file, and the in-memory one of incognito conversations (an accepted create may add one there).
        const states = [servicesOf(core).database, servicesOf(core).incognito.database].map(databaseState);
        snapshot = () => states.map((state) => state.state()).join("\n");
        writeMark = () => [...states.map((state) => state.writes()), JSON.stringify([...vault.secrets])].join("\n");
        restoreBaseline = () => states.forEach((state) => state.restore());
        baselineState = snapshot();
        baselineWriteMark = writeMark();
        modelState = JSON.stringify(service.models.status);
    });

    afterAll(async () => {
        closeChannel?.();
        service?.dispose();
        await core?.dispose();
        restoreEnv.splice(0).reverse().forEach((restore) => restore());
        const rows = [...counts].map(([name, tally]) => `${name}: ${tally.inputs} inputs, ${tally.refused} refused, ${tally.accepted} accepted, ` +
            `${tally.otherErrors} other errors ${JSON.stringify(Object.fromEntries(Object.entries(tally.byCode).filter(([code]) => code !== "INVALID_INPUT")))}, ` +
            `${tally.crashes} crashes, ${tally.hangs} hangs`);
        const total = [...counts.values()].reduce((sum, tally) => ({
            inputs: sum.inputs + tally.inputs, refused: sum.refused + tally.refused, accepted: sum.accepted + tally.accepted,
            crashes: sum.crashes + tally.crashes + tally.hangs
        }), {inputs: 0, refused: 0, accepted: 0, crashes: 0});
        console.info(`[rpc fuzz ${part + 1}/${parts}] seed ${seed}\n  ${rows.join("\n  ")}\n  total: ${total.inputs} inputs, ${total.refused} refused, ${total.accepted} accepted, ${total.crashes} crashes or hangs`);
        counts.clear();
    });

    describe(`RPC under fuzz: every call of the contract (share ${part + 1} of ${parts})`, () => {
        it.runIf(part === 0)("every call's input is a strict object (unknown keys refused), so the rules below apply to all of them", () => {
            for (const [method, definition] of Object.entries(coreCalls))
                expect(isStrictObject(definition.input as z.ZodType), method).toBe(true);
        });

        for (const [index, method] of (Object.keys(coreCalls) as ApiMethod[]).entries()) {
            if (index % parts !== part)
                continue;
            it(`${method}: ${runsPerCall} generated inputs, each bad one refused with INVALID_INPUT and nothing changed, the core still answering`, async () => {
                const plan = samplesFor(method);
                for (const [part, {arbitrary, runs}] of plan.entries()) {
                    const started = performance.now();
                    const startedCpu = process.cpuUsage();
                    await withoutStackTraces(() => fc.assert(fc.asyncProperty(arbitrary, (sample) => exercise(method, method, sample)), {
                        numRuns: runs, seed: (seed + index * 101 + part) | 0, endOnFailure: true
                    }));
                    // Every row read again: the counters checked after each refused call missed nothing.
                    expect(snapshot() === baselineState, `${method}: the state after ${runs} inputs of kind ${part} is the baseline`).toBe(true);
                    if (process.env.CLEANROOM_RPC_FUZZ_TIMING === "1") {
                        // CPU time as well as wall time: the machine is shared, and CPU is what the suite's budget counts.
                        const cpu = process.cpuUsage(startedCpu);
                        console.info(`[rpc fuzz] ${method} part ${part}: ${runs} in ${Math.round(performance.now() - started)} ms, ${Math.round((cpu.user + cpu.system) / 1000)} CPU-ms`);
                    }
                }

                const tally = countsFor(method);
                expect(tally.inputs).toBe(runsPerCall);
                expect(tally.crashes + tally.hangs).toBe(0);
                // The generators mostly produce bad inputs (about 80-95% refused; less where every field is optional): if most slipped through, the contract would be far too loose.
                expect(tally.refused).toBeGreaterThan(runsPerCall * 0.6);
                // Still up, and the fixed world is intact.
                expect((await client.call("conversations.list", {})).map((conversation) => conversation.id).sort()).toEqual([...conversationIds].sort());
                expect(Object.getOwnPropertyNames(Object.prototype)).not.toContain("polluted");
                expect(({} as Record<string, unknown>).polluted).toBeUndefined();
            });
        }

        it.runIf(part === 0)("the write mark checked after each refused call moves on any write: a row rewritten to itself, or a change committed by another connection", () => {
            const database = servicesOf(core).database;
            database.prepare("UPDATE conversations SET title = title WHERE id = ?").run(conversationIds[0]);
            expect(writeMark(), "a row rewritten to itself").not.toBe(baselineWriteMark);
            expect(snapshot(), "(the rows are as they were)").toBe(baselineState);
            baselineWriteMark = writeMark();
            const other = openDatabase(database.name);
            try {
                other.prepare("UPDATE conversations SET title = 'changed elsewhere' WHERE id = ?").run(conversationIds[0]);
            } finally {
                other.close();
            }
            expect(writeMark(), "a commit by another connection").not.toBe(baselineWriteMark);
            restoreBaseline();
            expect(snapshot()).toBe(baselineState);
            baselineWriteMark = writeMark();
        });

        it.runIf(part === 0)("unknown method names (prototype names included) are refused with INVALID_INPUT and change nothing", async () => {
            const names = fc.oneof(
                fc.string({maxLength: 40}), fc.constantFrom(...prototypeKeys, "conversations", "conversations.", ".list", "CONVERSATIONS.LIST", "conversations.list ", "model.load\u0000"),
                fc.constantFrom(...Object.keys(coreCalls)).map((name) => name + "x")
            ).filter((name) => !Object.hasOwn(coreCalls, name));
            await withoutStackTraces(() => fc.assert(fc.asyncProperty(names, fc.jsonValue({maxDepth: 2}), (name, input) =>
                exercise("(unknown methods)", name, {input, category: "unknown method", mustRefuse: "an unknown method"})), {numRuns: 2000, seed}));
            expect(countsFor("(unknown methods)").refused).toBe(2000);
        });

        it("after everything, the core answers valid calls: create, get, rename, list, settings", async () => {
            const created = await client.call("conversations.create", {title: "After the fuzz"});
            await client.call("conversations.rename", {conversationId: created.id, title: "Still here"});
            const fetched = await client.call("conversations.get", {conversationId: created.id});
            expect(fetched.conversation.title).toBe("Still here");
            expect((await client.call("conversations.list", {})).length).toBe(conversationIds.length + 1);
            expect((await client.call("settings.get", {})).threads).toBe(1);
            expect((await client.call("model.status", {})).state).not.toBe("loading");
            expect(Object.getOwnPropertyNames(Object.prototype)).not.toContain("polluted");
        });
    });
}
