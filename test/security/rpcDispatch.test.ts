import path from "node:path";
import fs from "node:fs";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {WebSocket} from "ws";
import {connectCoreClient, createInProcessChannelPair, type RpcChannel} from "../../src/core/common/rpc/index.js";
import {Core} from "../../src/core/node/Core.js";
import {loadLlama} from "../../src/core/node/engine/loadLlama.js";
import {createCoreService, type CoreService} from "../../src/core/node/rpc/createCoreService.js";
import {serveCoreOverChannel} from "../../src/core/node/rpc/serveCoreOverChannel.js";
import {CoreWebSockets} from "../../src/web/CoreWebSockets.js";
import {startWebServer, type WebServer} from "../../src/web/server.js";
import {tempDir} from "../helpers/tempCore.js";

/**
 * Claim: under the contract's door, the RPC layer itself dispatches only its own function
 * (`call`), never a member every JS object has. `constructor` used to echo its input,
 * `toString` to answer, and `valueOf` / `toLocaleString` to make the core call the client back
 * and wait forever (memory grew with every such call). Every other name is answered with
 * INVALID_INPUT as data, and the core never sends a call that awaits the client. Raw birpc
 * messages are sent by a peer that speaks the wire format directly, over the in-process channel
 * and over web mode's real WebSocket.
 */
type Wire = {t: "q" | "s", m?: string, a?: unknown[], i?: string, r?: unknown, e?: unknown, o?: boolean};
type RawPeer = {send(message: Wire): void, received: Wire[], close(): void};

const objectMembers = [
    "constructor", "toString", "valueOf", "toLocaleString", "hasOwnProperty", "isPrototypeOf", "propertyIsEnumerable",
    "__defineGetter__", "__defineSetter__", "__lookupGetter__", "__lookupSetter__", "__proto__"
];
/** Names birpc itself knows (its rpc object's builtins, the proxy's `then`) and near misses of ours. */
const otherNames = ["$call", "$callEvent", "$callRaw", "$close", "$functions", "$rejectPendingCalls", "then", "event", "Call", "call ", "", "x".repeat(10_000)];

let core: Core;
let service: CoreService;
let server: WebServer;
const cleanups: Array<() => void> = [];

beforeAll(async () => {
    const dir = tempDir("rpc-dispatch");
    const rendererDir = path.join(dir, "renderer");
    fs.mkdirSync(rendererDir);
    fs.writeFileSync(path.join(rendererDir, "index.html"), "<!doctype html><title>test renderer</title>");
    core = Core.create(await loadLlama(), {database: path.join(dir, "dispatch.db")});
    service = createCoreService(core);
    server = await startWebServer({rpc: new CoreWebSockets(service), rendererDir});
});

afterAll(async () => {
    for (const cleanup of cleanups.splice(0))
        cleanup();
    await server.close();
    service.dispose();
    await core.dispose();
});

function inProcessPeer(): RawPeer {
    const [coreSide, peerSide, close] = createInProcessChannelPair();
    serveCoreOverChannel(service, coreSide);
    const received: Wire[] = [];
    peerSide.onMessage((message) => received.push(message as Wire));
    cleanups.push(close);
    return {send: (message) => peerSide.post(message), received, close};
}

async function webSocketPeer(): Promise<RawPeer> {
    const socket = new WebSocket(`ws://127.0.0.1:${server.port}/rpc?token=${server.token}`, {headers: {origin: `http://127.0.0.1:${server.port}`}});
    await new Promise<void>((resolve, reject) => {
        socket.once("open", resolve);
        socket.once("error", reject);
    });
    const received: Wire[] = [];
    socket.on("message", (data) => received.push(JSON.parse(String(data)) as Wire));
    cleanups.push(() => socket.close());
    return {send: (message) => socket.send(JSON.stringify(message)), received, close: () => socket.close()};
}

async function answersTo(peer: RawPeer, ids: string[]): Promise<Map<string, Wire>> {
    const wanted = new Set(ids);
    const deadline = Date.now() + 60_000;
    for (;;) {
        const answers = new Map(peer.received.filter((message) => message.t === "s" && wanted.has(message.i!)).map((message) => [message.i!, message]));
        if (answers.size === wanted.size)
            return answers;
        if (Date.now() > deadline)
            throw new Error(`${wanted.size - answers.size} of ${wanted.size} requests got no answer`);
        await new Promise((resolve) => setTimeout(resolve, 5));
    }
}

/** Calls the core sent that wait for an answer (events carry no id). */
const callsFromTheCore = (peer: RawPeer) => peer.received.filter((message) => message.t === "q" && message.i != null);

for (const transport of ["in-process channel", "WebSocket"] as const) {
    const open = () => transport === "WebSocket" ? webSocketPeer() : Promise.resolve(inProcessPeer());

    describe(`RPC dispatch over the ${transport}: only the contract's door`, () => {
        it("every member of Object.prototype and every other name is answered INVALID_INPUT, never run, never echoed", async () => {
            const peer = await open();
            const names = [...objectMembers, ...otherNames];
            for (const [index, name] of names.entries()) {
                peer.send({t: "q", m: name, a: [{echo: "my input"}], i: `plain-${index}`});
                // birpc's "optional" flag used to turn an unknown name into a silent `undefined`: refused the same.
                peer.send({t: "q", m: name, a: [{echo: "my input"}], i: `optional-${index}`, o: true});
            }
            const answers = await answersTo(peer, names.flatMap((_, index) => [`plain-${index}`, `optional-${index}`]));
            for (const [id, answer] of answers) {
                expect(answer.e, id).toBeUndefined();
                expect(answer.r, id).toMatchObject({ok: false, error: {code: "INVALID_INPUT"}});
                expect(JSON.stringify(answer.r)).not.toContain("my input");
            }
            expect((answers.get("plain-0")!.r as {error: {message: string}}).error.message).toContain("constructor");
            expect(callsFromTheCore(peer)).toEqual([]);
        });

        it("the door still answers `call`, and refuses prototype names as API methods", async () => {
            const peer = await open();
            peer.send({t: "q", m: "call", a: ["conversations.list", {}], i: "list"});
            for (const name of objectMembers)
                peer.send({t: "q", m: "call", a: [name, {}], i: `method-${name}`});
            peer.send({t: "q", m: "call", a: [{toString: "x"}, {}], i: "object-name"});
            const answers = await answersTo(peer, ["list", "object-name", ...objectMembers.map((name) => `method-${name}`)]);
            expect(answers.get("list")!.r).toMatchObject({ok: true});
            for (const [id, answer] of answers)
                if (id !== "list")
                    expect(answer.r, id).toMatchObject({ok: false, error: {code: "INVALID_INPUT"}});
        });

        it(`valueOf and toLocaleString, ${transport === "WebSocket" ? "10,000" : "100,000"} times: every one refused, and the core never calls the client back`, async () => {
            const peer = await open();
            const total = transport === "WebSocket" ? 10_000 : 100_000;
            const batch = 5_000;
            for (let start = 0; start < total; start += batch) {
                const ids: string[] = [];
                for (let index = start; index < start + batch; index++) {
                    const id = `v${index}`;
                    ids.push(id);
                    peer.send({t: "q", m: index % 2 === 0 ? "valueOf" : "toLocaleString", a: [], i: id});
                }
                const answers = await answersTo(peer, ids);
                for (const answer of answers.values())
                    expect((answer.r as {error?: {code: string}}).error?.code).toBe("INVALID_INPUT");
                peer.received.length = 0;
            }
            expect(callsFromTheCore(peer)).toEqual([]);
        });
    });
}

describe("RPC dispatch on the client side", () => {
    it("a core that sends object members gets no dispatch and no call back; contract events still arrive", async () => {
        const [clientSide, coreSide, close] = createInProcessChannelPair();
        cleanups.push(close);
        const client = connectCoreClient(clientSide);
        const fromClient: Wire[] = [];
        (coreSide as RpcChannel).onMessage((message) => fromClient.push(message as Wire));
        const statuses: unknown[] = [];
        client.subscribe("core.status", (payload) => statuses.push(payload));

        for (const [index, name] of objectMembers.entries())
            coreSide.post({t: "q", m: name, a: [{echo: "x"}], i: `c${index}`});
        coreSide.post({t: "q", m: "event", a: ["core.status", {state: "ready", model: null, pendingRestart: [], message: null}]});
        const deadline = Date.now() + 30_000;
        while ((fromClient.filter((message) => message.t === "s").length < objectMembers.length || statuses.length === 0) && Date.now() < deadline)
            await new Promise((resolve) => setTimeout(resolve, 5));

        expect(fromClient.filter((message) => message.t === "q")).toEqual([]);
        for (const answer of fromClient)
            expect(JSON.stringify(answer)).not.toContain("echo");
        expect(statuses).toHaveLength(1);
        client.close();
    });
});
