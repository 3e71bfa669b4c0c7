import net from "node:net";
import path from "node:path";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import {WebSocket} from "ws";
import {connectCoreClient, type ConnectedCoreClient} from "../../src/core/common/rpc/index.js";
import {maxRpcMessageBytes} from "../../src/core/common/rpc/maxRpcMessageBytes.js";
import {webSocketChannel} from "../../src/web/webSocketChannel.js";
import {RawWebSocket} from "../helpers/rawWebSocket.js";
import {startWebMode, type WebMode} from "../helpers/startWebMode.js";
import {tempDir} from "../helpers/tempCore.js";

/**
 * Claim: no WebSocket frame a peer can send takes web mode down. A frame that breaks the
 * protocol closes that socket only, with the close code RFC 6455 gives it (1007 for text that
 * is not UTF-8, 1002 for a protocol error, 1009 for a message over the size limit); the process
 * lives on, a session that was already open keeps working, and a new connection is accepted.
 * Messages that are well-formed frames but not RPC (JSON `null`, a number, an array) are dropped.
 * The bytes go over a plain TCP socket to a real `npm run web` process with its own home.
 */
let web: WebMode;
let port: number;
let token: string;
let session: {client: ConnectedCoreClient, socket: WebSocket};

function openSession(): Promise<{client: ConnectedCoreClient, socket: WebSocket}> {
    return new Promise((resolve, reject) => {
        const socket = new WebSocket(`ws://127.0.0.1:${port}/rpc?token=${token}`, {headers: {origin: `http://127.0.0.1:${port}`}});
        socket.once("open", () => resolve({client: connectCoreClient(webSocketChannel(socket)), socket}));
        socket.once("error", reject);
    });
}

/** The process is up, the session opened at the start still answers, and a new connection works. */
async function expectServerAlive() {
    expect(web.process.exitCode, web.stderr()).toBeNull();
    expect(web.process.signalCode).toBeNull();
    const created = await session.client.call("conversations.create", {title: "still here"});
    expect((await session.client.call("conversations.list", {})).map((conversation) => conversation.id)).toContain(created.id);
    const fresh = await openSession();
    try {
        expect((await fresh.client.call("conversations.get", {conversationId: created.id})).conversation.title).toBe("still here");
    } finally {
        fresh.client.close();
        fresh.socket.close();
    }
}

const rpcPath = () => `/rpc?token=${token}`;
const callFrame = (id: string, method: string, input: unknown) => RawWebSocket.text(JSON.stringify({t: "q", m: "call", a: [method, input], i: id}));

describe("web mode survives every malformed WebSocket frame", () => {
    beforeAll(async () => {
        const home = tempDir("ws-frames");
        web = await startWebMode(["--no-model", "--db", path.join(home, "web.db")], {CLEANROOM_HOME: home, HOME: home, TMPDIR: tempDir("ws-frames-tmp"), CLEANROOM_MODEL: ""});
        const url = new URL(web.url);
        port = Number(url.port);
        token = url.searchParams.get("token")!;
        session = await openSession();
    }, 240_000);

    afterAll(async () => {
        session?.client.close();
        session?.socket.close();
        await web?.stop();
    });

    const cases: Array<{name: string, bytes: () => Buffer, code: number}> = [
        {name: "a text frame that is not UTF-8 (4 bytes)", code: 1007, bytes: () => RawWebSocket.frame({opcode: 0x1, payload: Buffer.from([0xff, 0xfe, 0xfd, 0xfc])})},
        {name: "a text message that is not UTF-8 across two fragments", code: 1007, bytes: () => Buffer.concat([
            RawWebSocket.frame({opcode: 0x1, fin: false, payload: Buffer.from([0x7b, 0xe2])}), RawWebSocket.frame({opcode: 0x0, payload: Buffer.from([0x28, 0x7d])})
        ])},
        {name: "a close frame whose reason is not UTF-8", code: 1007, bytes: () => RawWebSocket.frame({opcode: 0x8, payload: Buffer.from([0x03, 0xe8, 0xc3, 0x28])})},
        {name: "an unmasked frame", code: 1002, bytes: () => RawWebSocket.frame({opcode: 0x1, payload: Buffer.from("{}"), masked: false})},
        {name: "a reserved data opcode (0x3)", code: 1002, bytes: () => RawWebSocket.frame({opcode: 0x3, payload: Buffer.from("x")})},
        {name: "a reserved control opcode (0xB)", code: 1002, bytes: () => RawWebSocket.frame({opcode: 0xb})},
        {name: "RSV1 set without a negotiated extension", code: 1002, bytes: () => RawWebSocket.frame({opcode: 0x1, rsv1: true, payload: Buffer.from("{}")})},
        {name: "a fragmented ping", code: 1002, bytes: () => RawWebSocket.frame({opcode: 0x9, fin: false})},
        {name: "a continuation with nothing to continue", code: 1002, bytes: () => RawWebSocket.frame({opcode: 0x0, payload: Buffer.from("x")})},
        {name: "a close frame with an invalid code (999)", code: 1002, bytes: () => RawWebSocket.frame({opcode: 0x8, payload: Buffer.from([0x03, 0xe7])})},
        {name: "a frame announcing one byte more than the limit", code: 1009, bytes: () => RawWebSocket.frame({opcode: 0x1, announcedLength: maxRpcMessageBytes + 1})},
        {name: "a message over the limit in fragments under it", code: 1009, bytes: () => Buffer.concat([
            RawWebSocket.frame({opcode: 0x1, fin: false, payload: Buffer.alloc(Math.ceil(maxRpcMessageBytes / 2) + 1, 0x20)}),
            RawWebSocket.frame({opcode: 0x0, payload: Buffer.alloc(Math.ceil(maxRpcMessageBytes / 2) + 1, 0x20)})
        ])}
    ];

    for (const testCase of cases)
        it(`${testCase.name}: that socket is closed with ${testCase.code}, the server and the other session live on`, async () => {
            const raw = await RawWebSocket.open(port, rpcPath());
            raw.write(testCase.bytes());
            const closed = await raw.closeCode();
            expect(closed.code).toBe(testCase.code);
            expect(closed.tcpClosed).toBe(true);
            await expectServerAlive();
        });

    it("well-formed frames that are not RPC (null, numbers, arrays, strings, binary, bad JSON) are dropped; the same socket still answers", async () => {
        const raw = await RawWebSocket.open(port, rpcPath());
        for (const text of ["null", "5", "\"call\"", "[]", "[1,2]", "true", "{", "{\"t\":\"q\"}", "{\"t\":\"s\"}", "{\"t\":\"q\",\"m\":\"call\",\"a\":5,\"i\":\"x\"}"])
            raw.write(RawWebSocket.text(text));
        raw.write(RawWebSocket.frame({opcode: 0x2, payload: Buffer.from([0, 1, 2, 3])}));
        raw.write(callFrame("after", "conversations.list", {}));
        await raw.until(() => raw.messages().some((message) => (message as {i?: string}).i === "after"), "answer to the call after the junk");
        const answer = raw.messages().find((message) => (message as {i?: string}).i === "after") as {r: {ok: boolean}};
        expect(answer.r.ok).toBe(true);
        raw.destroy();
        await expectServerAlive();
    });

    it("an upgrade refused (wrong token) whose client resets the connection at once does not take the server down", async () => {
        for (let attempt = 0; attempt < 20; attempt++) {
            const socket = net.connect(port, "127.0.0.1");
            await new Promise<void>((resolve, reject) => {
                socket.once("connect", resolve);
                socket.once("error", reject);
            });
            socket.on("error", () => undefined);
            socket.write(`GET /rpc?token=wrong HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nOrigin: http://127.0.0.1:${port}\r\n` +
                `Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${Buffer.alloc(16, attempt).toString("base64")}\r\nSec-WebSocket-Version: 13\r\n\r\n`);
            socket.resetAndDestroy();
        }
        await expectServerAlive();
    });

    it("the largest valid messages of the contract pass the transport whole (chat.send text at its limit, models.detect paths at theirs, every character JSON-escaped)", async () => {
        const conversation = await session.client.call("conversations.create", {title: "largest"});
        // U+0000 is escaped as \u0000 by JSON: six bytes per character, the most any character takes.
        const text = "\u0000".repeat(99_999) + "x";
        const detect = {add: false, paths: Array.from({length: 100}, () => "\u0001".repeat(4096))};
        const raw = await RawWebSocket.open(port, rpcPath());
        const sendBytes = callFrame("send", "chat.send", {conversationId: conversation.id, text, route: "local"});
        const detectBytes = callFrame("detect", "models.detect", detect);
        raw.write(sendBytes);
        raw.write(detectBytes);
        await raw.until(() => ["send", "detect"].every((id) => raw.messages().some((message) => (message as {i?: string}).i === id)), "answers to both");
        expect(raw.frames.some((frame) => frame.opcode === 0x8)).toBe(false);
        expect(detectBytes.length).toBeGreaterThan(2 * 1024 * 1024);
        expect(detectBytes.length).toBeLessThanOrEqual(maxRpcMessageBytes + 14);
        // Delivered whole: answered by the core, not cut by the transport (no model here, so the turn itself fails with a clear code).
        const answers = Object.fromEntries(raw.messages().map((message) => [(message as {i: string}).i, (message as {r: {ok: boolean, error?: {code: string}}}).r]));
        expect(answers.detect!.ok).toBe(true);
        expect(answers.send!.ok === true || answers.send!.error?.code !== "INVALID_INPUT").toBe(true);
        raw.destroy();
        await expectServerAlive();
    });
});
