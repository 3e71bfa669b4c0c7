import crypto from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import Database from "better-sqlite3-multiple-ciphers";
import OpenAI from "openai";
import {afterEach, describe, expect, it, vi} from "vitest";
import type {Core} from "../../src/core/node/Core.js";
import {createCoreService, type CoreService} from "../../src/core/node/rpc/createCoreService.js";
import {LocalApiServer} from "../../src/core/node/serving/LocalApiServer.js";
import {ApiKeyRing} from "../../src/serve/ApiKeyRing.js";
import {startAppApiServer} from "../../src/serve/startAppApiServer.js";
import {startApiServer, type ApiServer} from "../../src/serve/startApiServer.js";
import {sha256Of} from "../../src/core/node/database/ApiKeyStore.js";
import {openTestCore} from "../helpers/coreServices.js";
import {decryptedCopy} from "../security/helpers/decryptedCopy.js";
import {createTestCore, tempDir} from "../helpers/tempCore.js";
import {openAiStatusOf} from "../helpers/openAiStatusOf.js";
import {requireTestModel} from "../helpers/testModel.js";
import {startServe, type ServeProcess} from "../helpers/startServe.js";
import {writeSyntheticBert} from "../helpers/syntheticBert.js";
import {isAuditEventOf} from "../../src/core/common/api/auditEvents.js";

const modelPath = requireTestModel();

type Opened = {core: Core, service: CoreService, server: LocalApiServer, database: string};
const opened: Opened[] = [];
const serveProcesses: ServeProcess[] = [];
const apiServers: ApiServer[] = [];
afterEach(async () => {
    await Promise.all(apiServers.splice(0).map((server) => server.close()));
    await Promise.all(serveProcesses.splice(0).map((server) => server.stop()));
    for (const {core, service, server} of opened.splice(0)) {
        await server.close();
        service.dispose();
        await core.dispose();
    }
});

/** A core with the test model and its service, as the app hosts them: the local API server in the core's process. */
async function openAppCore(onDatabase?: string): Promise<Opened> {
    const {core, database} = await createTestCore(modelPath!, {}, onDatabase == null ? {} : {database: onDatabase});
    const server = new LocalApiServer(core, startAppApiServer);
    const service = createCoreService(core, {apiServer: server});
    const result = {core, service, server, database};
    opened.push(result);
    return result;
}

async function call<T>(service: CoreService, method: string, input: unknown): Promise<T> {
    const result = await service.call(method, input);
    if (!result.ok)
        throw new Error(`${method}: ${result.error.code} ${result.error.message}`);
    return result.value as T;
}

type Created = {key: {id: string, label: string}, secret: string};
type Status = {running: boolean, baseUrl: string, modelName: string | null, startsWithApp: boolean};

function chat(baseURL: string, apiKey: string) {
    return new OpenAI({baseURL, apiKey, maxRetries: 0}).chat.completions.create({
        model: "stories260K", messages: [{role: "user", content: "Once upon a time"}], temperature: 0, max_tokens: 8
    });
}

describe.skipIf(modelPath == null)("the app's local API server with stored keys (real model, real SQLite, real HTTP)", () => {
    it("tells the app's idle lock while a request is answered: api.activity is 1 with the request and 0 once its context is scrubbed", async () => {
        const {core, service} = await openAppCore();
        const counts: number[] = [];
        const listening = service.events.onAny((event, payload) => {
            if (event === "api.activity")
                counts.push((payload as {requestsInFlight: number}).requestsInFlight);
        });
        const created = await call<Created>(service, "apiKeys.create", {label: "editor"});
        const status = await call<Status>(service, "apiServer.start", {port: 0});
        expect(counts).toEqual([]);

        await chat(status.baseUrl, created.secret);
        await expect.poll(() => counts).toEqual([1, 0]);
        // The count fell to 0 only after the scrub that ends the request, which follows the reply.
        expect(core.apiSessions()[0]?.scrub?.verified).toBe(true);
        listening.dispose();
    });

    it("keeps only a key's SHA-256 in the encrypted store: no byte of the decrypted database holds the key, yet the key opens the server", async () => {
        const {core, service} = await openAppCore();
        const created = await call<Created>(service, "apiKeys.create", {label: "editor"});
        expect(created.secret).toMatch(/^crk-[A-Za-z0-9_-]{43}$/);
        const status = await call<Status>(service, "apiServer.start", {port: 0});
        expect(status).toMatchObject({running: true, modelName: "stories260K"});
        expect(status.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);

        const reply = await chat(status.baseUrl, created.secret);
        expect(reply.choices[0]!.message.content!.length).toBeGreaterThan(0);
        // The Isolation panel's list: the request under the key's label, its own context, scrubbed and verified
        // (the scrub follows the reply, off its path).
        await expect.poll(() => core.apiSessions()[0]?.scrub?.verified ?? null).toBe(true);
        const [session] = core.apiSessions();
        expect(session).toMatchObject({tenant: "editor", outcome: "answered", scrub: {verified: true, reason: "request"}});
        expect(session!.contextId).toBe(session!.scrub!.contextId);

        const dir = tempDir("api-keys-at-rest");
        const database = opened[0]!.database;
        await opened[0]!.server.close();
        const plain = fs.readFileSync(decryptedCopy(database, dir));
        expect(plain.includes(Buffer.from(created.secret))).toBe(false);
        expect(plain.includes(Buffer.from(created.secret.slice("crk-".length)))).toBe(false);
        // What is kept is the hash (a sanity check that the scan reads the right file).
        const sha256 = crypto.createHash("sha256").update(created.secret).digest();
        expect(plain.includes(sha256)).toBe(true);
        const copy = new Database(decryptedCopy(database, dir), {readonly: true});
        try {
            expect(copy.prepare("SELECT label, sha256 FROM api_keys").all()).toEqual([{label: "editor", sha256}]);
        } finally {
            copy.close();
        }
        // Nor is it in the audit trail.
        expect(JSON.stringify(core.auditEvents({limit: null}))).not.toContain(created.secret);
    });

    it("refuses a wrong or missing key with 401, a revoked key from its next request while the other key still works, and everyone once every key is revoked", async () => {
        const {service} = await openAppCore();
        const editor = await call<Created>(service, "apiKeys.create", {label: "editor"});
        const script = await call<Created>(service, "apiKeys.create", {label: "script"});
        const {baseUrl} = await call<Status>(service, "apiServer.start", {port: 0});

        expect(await openAiStatusOf(chat(baseUrl, editor.secret))).toBe(200);
        expect(await openAiStatusOf(chat(baseUrl, editor.secret.slice(0, -1) + (editor.secret.endsWith("A") ? "B" : "A")))).toBe(401);
        expect(await openAiStatusOf(chat(baseUrl, "not-a-key"))).toBe(401);

        expect(await call(service, "apiKeys.revoke", {id: editor.key.id})).toEqual({revoked: true});
        expect(await openAiStatusOf(chat(baseUrl, editor.secret))).toBe(401);
        expect(await openAiStatusOf(chat(baseUrl, script.secret))).toBe(200);
        expect(await call<{keys: unknown[]}>(service, "apiKeys.list", {})).toEqual({keys: [expect.objectContaining({label: "script"})]});
        expect(await call(service, "apiKeys.revoke", {id: editor.key.id})).toEqual({revoked: false});

        // The last key revoked does not open the server to every local program: it refuses everyone until restarted.
        await call(service, "apiKeys.revoke", {id: script.key.id});
        expect(await openAiStatusOf(chat(baseUrl, script.secret))).toBe(401);
        expect(await openAiStatusOf(chat(baseUrl, "anything"))).toBe(401);
        expect(await call(service, "apiServer.status", {})).toMatchObject({running: true, keys: 0, keyRequired: true});
    });

    it("a revoked key's cache_salt cache is scrubbed at once: a new key under the same label and salt finds nothing cached", async () => {
        const {core, service} = await openAppCore();
        const ends: Array<{tenant: string, reason: string, verified: boolean | null}> = [];
        const listener = core.onApiCacheEnd.createListener((end) => ends.push({tenant: end.tenant, reason: end.reason, verified: end.scrub?.verified ?? null}));
        try {
            const first = await call<Created>(service, "apiKeys.create", {label: "editor"});
            const {baseUrl} = await call<Status>(service, "apiServer.start", {port: 0});
            const salted = (apiKey: string) => {
                const body = {
                    model: "stories260K", messages: [{role: "user" as const, content: "Once upon a time there was a little girl named Lily who"}],
                    temperature: 0, max_tokens: 4, cache_salt: "editor-session"
                };
                return new OpenAI({baseURL: baseUrl, apiKey, maxRetries: 0}).chat.completions.create(body);
            };
            await salted(first.secret);
            // The same key and salt reuse the cache (the control: reuse is there to be lost).
            expect((await salted(first.secret)).usage?.prompt_tokens_details?.cached_tokens).toBeGreaterThan(0);

            expect(await call(service, "apiKeys.revoke", {id: first.key.id})).toEqual({revoked: true});
            expect(ends).toEqual([{tenant: "editor", reason: "revoked", verified: true}]);

            const second = await call<Created>(service, "apiKeys.create", {label: "editor"});
            expect((await salted(second.secret)).usage?.prompt_tokens_details?.cached_tokens ?? 0).toBe(0);
        } finally {
            listener.dispose();
        }
    });

    it("two keys under the same label are two tenants: with the same cache_salt, neither is served the other's cached tokens", async () => {
        const {core} = await openAppCore();
        // The store keeps labels unique; a ring with two keys of one label stands for a label reused however it came about.
        const secrets = ["crk-first-editor-key", "crk-second-editor-key"];
        const keys = new ApiKeyRing({stored: () => secrets.map((secret, index) => ({id: `key-id-${index}`, label: "editor", sha256: sha256Of(secret)}))});
        const server = await startApiServer({core, modelName: "stories260K", port: 0, keys});
        apiServers.push(server);
        const cachedTokens = async (apiKey: string) => (await new OpenAI({baseURL: server.baseUrl, apiKey, maxRetries: 0}).chat.completions.create({
            model: "stories260K", messages: [{role: "user", content: "Once upon a time there was a little girl named Lily who"}],
            temperature: 0, max_tokens: 4, cache_salt: "shared-salt"
        } as OpenAI.ChatCompletionCreateParamsNonStreaming)).usage?.prompt_tokens_details?.cached_tokens ?? 0;

        await cachedTokens(secrets[0]!);
        // The control: the first key's own next request is served from its cache.
        expect(await cachedTokens(secrets[0]!)).toBeGreaterThan(0);
        expect(await cachedTokens(secrets[1]!)).toBe(0);
        // And the second key's request left the first key's cache as it was: still its own, still reused.
        expect(await cachedTokens(secrets[0]!)).toBeGreaterThan(0);
        // The Isolation panel tells them apart by the key's id.
        expect(core.apiSessions().map((session) => [session.tenant, session.keyId])).toEqual([
            ["editor", "key-id-0"], ["editor", "key-id-1"], ["editor", "key-id-0"], ["editor", "key-id-0"]
        ]);
    });

    it("left on, starts again with the next core on the same database (same port, same key); a taken port is kept for the panel; turned off, stays off", async () => {
        const quit = async (app: Opened) => {
            opened.splice(opened.indexOf(app), 1);
            await app.server.close(); // as the host closes it at quit or lock: the user's choice stays
            app.service.dispose();
            await app.core.dispose();
        };
        const first = await openAppCore();
        const editor = await call<Created>(first.service, "apiKeys.create", {label: "editor"});
        const started = await call<Status>(first.service, "apiServer.start", {port: 0});
        await quit(first);
        await expect(fetch(`${started.baseUrl}/models`)).rejects.toThrow();

        const second = await openAppCore(first.database);
        await expect.poll(() => second.server.status().running).toBe(true);
        expect(second.server.status()).toMatchObject({baseUrl: started.baseUrl, startsWithApp: true, startProblem: null,
            endpoints: ["GET /v1/models", "POST /v1/chat/completions", "POST /v1/completions", "POST /v1/embeddings"]});
        expect((await chat(started.baseUrl, editor.secret)).choices[0]!.message.content!.length).toBeGreaterThan(0);
        await quit(second);

        const port = Number(new URL(started.baseUrl).port);
        const blocker = net.createServer();
        await new Promise<void>((resolve, reject) => blocker.once("error", reject).listen(port, "127.0.0.1", resolve));
        try {
            const third = await openAppCore(first.database);
            await expect.poll(() => third.server.status().startProblem?.code ?? null).toBe("PORT_IN_USE");
            expect(third.server.status()).toMatchObject({running: false, startsWithApp: true, endpoints: [], startProblem: {
                message: `Port ${port} on 127.0.0.1 is already in use by another program: choose another port for it in Settings → Local API server (0 picks a free one).`
            }});
            // The user turns it off: the problem is gone, and so is the choice.
            expect(await call<Status>(third.service, "apiServer.stop", {})).toMatchObject({running: false, startsWithApp: false, startProblem: null});
            await quit(third);
        } finally {
            blocker.close();
        }

        const fourth = await openAppCore(first.database);
        await call<Status>(fourth.service, "apiServer.status", {});
        expect(fourth.server.status()).toMatchObject({running: false, startsWithApp: false, startProblem: null});
        await expect(fetch(`${started.baseUrl}/models`)).rejects.toThrow();
    });

    it("lists embeddings requests among the API sessions like completions: key label and id, what was asked, its own context and its scrub; the audit rows carry the key id", async () => {
        const {core, service} = await openAppCore();
        core.useEmbeddingModel(writeSyntheticBert());
        const editor = await call<Created>(service, "apiKeys.create", {label: "editor"});
        const script = await call<Created>(service, "apiKeys.create", {label: "script"});
        const status = await call<Status>(service, "apiServer.start", {port: 0});

        await chat(status.baseUrl, editor.secret);
        const embedded = await new OpenAI({baseURL: status.baseUrl, apiKey: script.secret, maxRetries: 0}).embeddings.create({
            model: "cleanroom-test-bert", input: ["My car broke down.", "We swam in the sea."]
        });
        expect(embedded.data).toHaveLength(2);

        await expect.poll(() => core.apiSessions().map((session) => session.scrub?.verified ?? null)).toEqual([true, true]);
        const [embeddings, completion] = core.apiSessions();
        expect(embeddings).toMatchObject({
            tenant: "script", keyId: script.key.id, kind: "embeddings", outcome: "answered",
            promptTokens: embedded.usage.prompt_tokens, completionTokens: null, vectors: 2,
            scrub: {verified: true, method: "no-kv-memory", nonZeroBytes: 0}
        });
        expect(embeddings!.contextId).toBe(embeddings!.scrub!.contextId);
        expect(completion).toMatchObject({tenant: "editor", keyId: editor.key.id, kind: "chat", outcome: "answered", vectors: null, scrub: {verified: true, reason: "request"}});
        expect(completion!.contextId).not.toBe(embeddings!.contextId);

        const apiRows = core.auditEvents({limit: null}).filter(isAuditEventOf("api.request", "api.answered"));
        expect(apiRows.map((event) => [event.kind, event.data.tenant, event.data.keyId, event.data.kind])).toEqual([
            ["api.request", "editor", editor.key.id, "chat"], ["api.answered", "editor", editor.key.id, "chat"],
            ["api.request", "script", script.key.id, "embeddings"], ["api.answered", "script", script.key.id, "embeddings"]
        ]);
    });

    it("refuses a second key with the same label, and starting without a model, each with a clear error", async () => {
        const {service} = await openAppCore();
        await call(service, "apiKeys.create", {label: "editor"});
        const twice = await service.call("apiKeys.create", {label: "editor"});
        expect(twice).toMatchObject({ok: false, error: {code: "INVALID_INPUT", message: expect.stringMatching(/labelled "editor" exists already/)}});

        const core = openTestCore(async () => {
            throw new Error("no model is loaded in this test");
        }, {database: path.join(tempDir("api-no-model"), "test.db")});
        try {
            await expect(new LocalApiServer(core, startAppApiServer).start(0)).rejects.toMatchObject({code: "MODEL_NOT_LOADED", message: expect.stringMatching(/No model is loaded: load one first/)});
        } finally {
            await core.dispose();
        }
    });

    it("compares a presented key with every stored hash, each of the same length, whichever key it is or whether it matches", async () => {
        const {core} = await openAppCore();
        const secrets = ["first", "second", "third"].map((label) => core.apiKeys.create(label).secret);
        const ring = new ApiKeyRing({stored: () => core.apiKeys.hashes()});
        const compare = vi.spyOn(crypto, "timingSafeEqual");
        try {
            for (const presented of [secrets[0], secrets[2], "wrong", "x".repeat(500), undefined]) {
                compare.mockClear();
                const tenant = ring.tenantOf(presented == null ? undefined : `Bearer ${presented}`);
                expect(tenant?.label ?? null).toBe(presented === secrets[0] ? "first" : presented === secrets[2] ? "third" : null);
                expect(compare).toHaveBeenCalledTimes(3);
                for (const [stored, given] of compare.mock.calls)
                    expect([(stored as Buffer).length, (given as Buffer).length]).toEqual([32, 32]);
            }
        } finally {
            compare.mockRestore();
        }
    });

    it("cleanroom serve without --api-key takes the keys made in the app; --no-stored-keys leaves them aside", async () => {
        const database = path.join(tempDir("serve-stored-keys"), "app.db");
        const app = openTestCore(async () => {
            throw new Error("making a key needs no model");
        }, {database});
        const {secret} = app.apiKeys.create("script");
        await app.dispose();

        const guarded = await startServe(modelPath!, ["--db", database]);
        serveProcesses.push(guarded);
        expect(await openAiStatusOf(chat(guarded.baseUrl, secret))).toBe(200);
        expect(await openAiStatusOf(chat(guarded.baseUrl, "no-key"))).toBe(401);
        await guarded.output.waitFor(/\(script\): \d+ prompt/);
        expect(guarded.output.output()).not.toContain(secret);
        expect(await guarded.stop()).toBe(0);

        const open = await startServe(modelPath!, ["--db", database, "--no-stored-keys"]);
        serveProcesses.push(open);
        expect(await openAiStatusOf(chat(open.baseUrl, "no-key"))).toBe(200);
    });
});
