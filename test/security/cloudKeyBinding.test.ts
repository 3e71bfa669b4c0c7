import path from "node:path";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {connectCoreClient, createInProcessChannelPair, RemoteCallError, type ConnectedCoreClient} from "../../src/core/common/rpc/index.js";
import {CloudClient} from "../../src/core/node/cloud/CloudClient.js";
import {SharedCloudSimulator} from "../../tools/cloudSim/SharedCloudSimulator.js";
import {openCoreHost, type CoreHost} from "../../src/core/node/host/openCoreHost.js";
import {serveCoreOverChannel} from "../../src/core/node/rpc/serveCoreOverChannel.js";
import {cloudApiKeySecret} from "../../src/core/node/secrets/CloudKeyStore.js";
import {MemorySecretVault} from "../../src/core/node/secrets/MemorySecretVault.js";
import {tempDir} from "../helpers/tempCore.js";
import {startCaptureProxy, type CaptureProxy} from "./helpers/captureProxy.js";

/**
 * Claim: the stored cloud key goes only to the endpoint (origin) it was given for. Changing
 * the endpoint never sends the stored key to the new server: the API says the key must be
 * entered again, and a cloud turn is refused with CLOUD_KEY_NEEDED before anything is sent. A
 * key given with no endpoint to bind it to is refused, and so is any plain http:// endpoint off
 * this machine. Two real OpenAI-compatible servers on 127.0.0.1 (the simulator, behind
 * recording proxies) show which Authorization header each one received. The core is the one
 * the app runs (openCoreHost: its settings, its vault, its key provider), reached over RPC.
 */
const keyA = "sk-endpoint-a-0123456789";
const keyB = "sk-endpoint-b-9876543210";

let host: CoreHost;
let client: ConnectedCoreClient;
let vault: MemorySecretVault;
const servers: Array<{sim: SharedCloudSimulator, proxy: CaptureProxy}> = [];
const cleanups: Array<() => Promise<unknown> | unknown> = [];

async function recordingServer() {
    const sim = await SharedCloudSimulator.start({mode: "honest"});
    const proxy = await startCaptureProxy({target: sim.url});
    cleanups.push(() => sim.close(), () => proxy.close());
    servers.push({sim, proxy});
    return {sim, proxy};
}

/** Every Authorization header a server received. */
const authorizations = (proxy: CaptureProxy) => proxy.exchanges.map((exchange) => exchange.authorization);

/** One turn sent to the cloud; resolves when it finished, or with the code it was refused with. */
async function cloudTurn(conversationId: string): Promise<"finished" | string> {
    const finished = new Promise<string>((resolve) => {
        const stops = [
            client.subscribe("turn.finished", (result) => result.conversationId === conversationId && resolve("finished")),
            client.subscribe("turn.error", (event) => event.conversationId === conversationId && resolve(event.error.code))
        ];
        cleanups.push(() => stops.forEach((stop) => stop()));
    });
    try {
        await client.call("chat.send", {conversationId, text: "Once upon a time there was a fox.", maxTokens: 8, route: "cloud"});
    } catch (error) {
        return (error as RemoteCallError).code;
    }
    return await finished;
}

async function refusal(work: Promise<unknown>) {
    const error = await work.then(() => null, (caught: unknown) => caught);
    expect(error).toBeInstanceOf(RemoteCallError);
    return error as RemoteCallError;
}

beforeAll(async () => {
    const dir = tempDir("cloud-key-binding");
    vault = new MemorySecretVault();
    host = await openCoreHost({database: path.join(dir, "core.db"), vault, modelsDir: path.join(dir, "models"), appsHome: dir});
    const [coreSide, clientSide, close] = createInProcessChannelPair();
    serveCoreOverChannel(host.service, coreSide);
    client = connectCoreClient(clientSide);
    cleanups.push(close);
});

afterAll(async () => {
    for (const cleanup of cleanups.splice(0).reverse())
        await cleanup();
    client?.close();
    await host?.dispose();
});

describe("the cloud key is bound to the endpoint it was given for", () => {
    it("a key goes to its endpoint; after the endpoint changes it is not sent to the new server, and the API says to enter it again", async () => {
        const a = await recordingServer();
        const b = await recordingServer();
        const conversation = await client.call("conversations.create", {policy: "cloud-allowed"});

        const withKey = await client.call("settings.set", {cloudEndpoint: a.proxy.url, cloudModel: a.sim.modelName, cloudFallback: true, cloudApiKey: keyA});
        expect(withKey.cloud).toMatchObject({apiKeyStored: true, apiKeyReentry: null});
        expect(await cloudTurn(conversation.id)).toBe("finished");
        expect(authorizations(a.proxy)).toContain(`Bearer ${keyA}`);

        // Pointed at another server: the key stays behind.
        const moved = await client.call("settings.set", {cloudEndpoint: b.proxy.url});
        expect(moved.cloud.apiKeyStored).toBe(false);
        expect(moved.cloud.apiKeyReentry).toContain(new URL(a.proxy.url).origin);
        expect(moved.cloud.apiKeyReentry).toContain(new URL(b.proxy.url).origin);
        expect(moved.cloud.apiKeyReentry).toMatch(/enter the key again/);
        expect((await client.call("settings.get", {})).cloud.apiKeyReentry).toBe(moved.cloud.apiKeyReentry);
        expect(await cloudTurn(conversation.id)).toBe("CLOUD_KEY_NEEDED");
        expect(b.proxy.exchanges).toEqual([]);
        expect(JSON.stringify(await client.call("conversations.get", {conversationId: conversation.id}))).not.toContain(keyA);

        // Entered again for B: B gets B's key, and A never sees it.
        const entered = await client.call("settings.set", {cloudApiKey: keyB});
        expect(entered.cloud).toMatchObject({apiKeyStored: true, apiKeyReentry: null});
        expect(await cloudTurn(conversation.id)).toBe("finished");
        expect(new Set(authorizations(b.proxy))).toEqual(new Set([`Bearer ${keyB}`]));
        expect(authorizations(a.proxy)).not.toContain(`Bearer ${keyB}`);

        // Back to A: B's key is not sent there either.
        await client.call("settings.set", {cloudEndpoint: a.proxy.url});
        const exchangesAtA = a.proxy.exchanges.length;
        expect(await cloudTurn(conversation.id)).toBe("CLOUD_KEY_NEEDED");
        expect(a.proxy.exchanges.length).toBe(exchangesAtA);

        // The same origin with another path keeps the key (it is bound to scheme, host and port).
        await client.call("settings.set", {cloudEndpoint: b.proxy.url.replace(/\/v1$/, "/v1/")});
        expect((await client.call("settings.get", {})).cloud.apiKeyStored).toBe(true);

        // Forgotten: nothing is stored, nothing to enter again.
        const forgotten = await client.call("settings.set", {cloudApiKey: null});
        expect(forgotten.cloud).toMatchObject({apiKeyStored: false, apiKeyReentry: null});
    });

    it("a key given with no endpoint to bind it to is refused, and nothing is stored", async () => {
        await client.call("settings.set", {cloudEndpoint: null, cloudApiKey: null});
        const refused = await refusal(client.call("settings.set", {cloudApiKey: keyA, threads: 2}));
        expect(refused.code).toBe("INVALID_INPUT");
        expect(refused.message).toMatch(/set cloudEndpoint too/);
        expect(await vault.has(cloudApiKeySecret)).toBe(false);
        expect((await client.call("settings.get", {})).threads).toBeNull();
    });

    it("a key stored before keys were bound to an endpoint is not used: the key must be entered again", async () => {
        const server = await recordingServer();
        await client.call("settings.set", {cloudEndpoint: server.proxy.url, cloudModel: server.sim.modelName, cloudFallback: true});
        await vault.write(cloudApiKeySecret, "sk-from-an-earlier-version");
        const settings = await client.call("settings.get", {});
        expect(settings.cloud.apiKeyStored).toBe(false);
        expect(settings.cloud.apiKeyReentry).toMatch(/before keys were tied to an endpoint/);
        const conversation = await client.call("conversations.create", {policy: "cloud-allowed"});
        expect(await cloudTurn(conversation.id)).toBe("CLOUD_KEY_NEEDED");
        expect(server.proxy.exchanges).toEqual([]);
        await client.call("settings.set", {cloudApiKey: null});
    });
});

describe("plain http:// endpoints are refused unless they are this machine", () => {
    const refused = [
        "http://example.com/v1", "http://10.0.0.5:8080/v1", "http://192.168.1.20/v1", "http://[2001:db8::1]/v1",
        "http://127.0.0.1.nip.io/v1", "http://localhost.example.com/v1", "http://128.0.0.1/v1", "http://[::ffff:10.0.0.1]/v1"
    ];
    const allowed = ["https://example.com/v1", "http://127.0.0.1:9/v1", "http://127.9.8.7/v1", "http://127.1:9/v1", "http://[::1]:9/v1", "http://localhost:9/v1", "http://LOCALHOST:9/v1"];

    it("settings.set refuses each with INVALID_INPUT saying why, and keeps the endpoint it had", async () => {
        await client.call("settings.set", {cloudEndpoint: "https://cloud.example/v1"});
        for (const endpoint of refused) {
            const error = await refusal(client.call("settings.set", {cloudEndpoint: endpoint, cloudApiKey: keyA}));
            expect(error.code, endpoint).toBe("INVALID_INPUT");
            expect(error.message, endpoint).toMatch(/unencrypted.*https:\/\/.*127\.0\.0\.1, ::1, localhost/);
            expect((await client.call("settings.get", {})).cloud.endpoint).toBe("https://cloud.example/v1");
        }
        expect(await vault.has(cloudApiKeySecret)).toBe(false);
        for (const endpoint of allowed)
            expect((await client.call("settings.set", {cloudEndpoint: endpoint})).cloud.endpoint, endpoint).toBe(endpoint);
    });

    it("the cloud client refuses them too (an endpoint stored earlier, the CLI's --endpoint, audit), with CLOUD_ENDPOINT_INSECURE", () => {
        for (const baseURL of refused)
            expect(() => new CloudClient({baseURL, model: "m", apiKey: keyA, contextLimit: null}), baseURL).toThrow(expect.objectContaining({code: "CLOUD_ENDPOINT_INSECURE"}));
        for (const baseURL of allowed)
            expect(new CloudClient({baseURL, model: "m", apiKey: null, contextLimit: null}).endpoint.baseURL).toBe(baseURL);
    });
});
