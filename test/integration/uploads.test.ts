import path from "node:path";
import {afterAll, beforeAll, describe, expect, it} from "vitest";
import type {CallResult} from "../../src/core/common/api/index.js";
import {Core} from "../../src/core/node/Core.js";
import {loadLlama} from "../../src/core/node/engine/loadLlama.js";
import {createCoreService, type CoreService} from "../../src/core/node/rpc/createCoreService.js";
import {tempDir} from "../helpers/tempCore.js";

// Web mode's uploads (#23) through the core's door, as two browser tabs (connections) would use them: real core, real SQLite, real extraction.
let core: Core;
let service: CoreService;

const megabyte = 1024 * 1024;
const base64 = (text: string) => Buffer.from(text).toString("base64");
const source = "export const port = 8080;\nexport function listen(): number {\n    return port;\n}\n";

async function ok<T>(result: Promise<CallResult>): Promise<T> {
    const settled = await result;
    if (!settled.ok)
        throw new Error(`${settled.error.code}: ${settled.error.message}`);
    return settled.value as T;
}

async function refusal(result: Promise<CallResult>) {
    const settled = await result;
    if (settled.ok)
        throw new Error("expected a refusal");
    return settled.error;
}

/** Uploads `text` on `connection` in chunks of `chunk` bytes; returns its id, not finished. */
async function uploadText(connection: object, name: string, text: string, chunk = 16) {
    const bytes = Buffer.from(text);
    const {uploadId} = await ok<{uploadId: string}>(service.call("attachments.uploadBegin", {name, bytes: bytes.byteLength}, connection));
    for (let offset = 0; offset < bytes.byteLength; offset += chunk)
        await ok(service.call("attachments.uploadChunk", {uploadId, offset, base64: bytes.subarray(offset, offset + chunk).toString("base64")}, connection));
    return uploadId;
}

beforeAll(async () => {
    core = Core.create(await loadLlama(), {database: path.join(tempDir("uploads"), "uploads.db")});
    service = createCoreService(core);
});

afterAll(async () => {
    service.dispose();
    await core.dispose();
});

describe("web mode's uploads: chunked over the RPC, held per connection, read once whole", () => {
    it("a file sent in chunks is read once whole: name, format by content, size and pages come back", async () => {
        const tab = {};
        const uploadId = await uploadText(tab, "C:\\work\\server.ts", source);
        expect(await ok(service.call("attachments.uploadFinish", {uploadId}, tab)))
            .toEqual({uploadId, name: "server.ts", format: "code", bytes: Buffer.byteLength(source), pages: 1});
    });

    it("another connection can neither use nor discard an upload; a closed connection's uploads are gone", async () => {
        const tab = {};
        const otherTab = {};
        const uploadId = await uploadText(tab, "notes.txt", "Meeting notes for Tuesday.\n");
        const stranger = await refusal(service.call("attachments.uploadFinish", {uploadId}, otherTab));
        expect(stranger.code).toBe("INVALID_INPUT");
        expect(stranger.message).toContain(`no upload ${uploadId} on this connection`);
        expect(await ok(service.call("attachments.discard", {uploadId}, otherTab))).toEqual({discarded: false});

        service.disconnected!(tab);
        expect((await refusal(service.call("attachments.uploadFinish", {uploadId}, tab))).message).toContain("its connection closed");
    });

    it("chunks out of order, past the announced size, or a finish before the last byte are refused, saying what was expected", async () => {
        const tab = {};
        const {uploadId} = await ok<{uploadId: string}>(service.call("attachments.uploadBegin", {name: "a.txt", bytes: 10}, tab));
        expect((await refusal(service.call("attachments.uploadChunk", {uploadId, offset: 4, base64: base64("abcd")}, tab))).message)
            .toContain("offset: expected 0 (the bytes received so far), got 4");
        await ok(service.call("attachments.uploadChunk", {uploadId, offset: 0, base64: base64("abcd")}, tab));
        expect((await refusal(service.call("attachments.uploadFinish", {uploadId}, tab))).message).toContain("has 4 of its 10 bytes");
        expect((await refusal(service.call("attachments.uploadChunk", {uploadId, offset: 4, base64: base64("efghijklmn")}, tab))).message)
            .toContain("past the 10 bytes announced");
        expect((await refusal(service.call("attachments.uploadChunk", {uploadId: "not-an-id", offset: 0, base64: "AA=="}, tab))).code).toBe("INVALID_INPUT");
    });

    it("a file over the document limit is refused at once by name and limit; a connection holds at most 100 MB pending, another connection has its own", async () => {
        const tab = {};
        const tooLarge = await refusal(service.call("attachments.uploadBegin", {name: "huge.log", bytes: 51 * megabyte}, tab));
        expect(tooLarge.code).toBe("ATTACHMENT_UNREADABLE");
        expect(tooLarge.message).toBe("huge.log: is 51 MB; the limit is 50 MB");

        const first = await ok<{uploadId: string}>(service.call("attachments.uploadBegin", {name: "one.txt", bytes: 50 * megabyte}, tab));
        await ok(service.call("attachments.uploadBegin", {name: "two.txt", bytes: 50 * megabyte}, tab));
        const full = await refusal(service.call("attachments.uploadBegin", {name: "three.txt", bytes: 1}, tab));
        expect(full.message).toMatch(/three\.txt \(1 bytes?\) does not fit beside the 100 MB of documents already waiting to be sent \(at most 100 MB at once\): send or remove some first$/);
        await ok(service.call("attachments.uploadBegin", {name: "three.txt", bytes: 1}, {}));

        expect(await ok(service.call("attachments.discard", first, tab))).toEqual({discarded: true});
        await ok(service.call("attachments.uploadBegin", {name: "three.txt", bytes: 1}, tab));
        service.disconnected!(tab);
    });

    it("an unreadable file is refused at finish with ATTACHMENT_UNREADABLE and its reason, and its upload is gone", async () => {
        const tab = {};
        const binary = Buffer.from(Array.from({length: 256}, (_, index) => index));
        const {uploadId} = await ok<{uploadId: string}>(service.call("attachments.uploadBegin", {name: "blob.bin", bytes: binary.byteLength}, tab));
        await ok(service.call("attachments.uploadChunk", {uploadId, offset: 0, base64: binary.toString("base64")}, tab));
        const unreadable = await refusal(service.call("attachments.uploadFinish", {uploadId}, tab));
        expect(unreadable.code).toBe("ATTACHMENT_UNREADABLE");
        expect(unreadable.details).toMatchObject({name: "blob.bin", reason: "binary"});
        expect((await refusal(service.call("attachments.uploadFinish", {uploadId}, tab))).message).toContain("no upload");
    });

    it("chat.send with an upload of another connection, or one not finished, is refused and stores nothing", async () => {
        const tab = {};
        const conversation = await ok<{id: string}>(service.call("conversations.create", {}, tab));
        const finished = await uploadText({}, "elsewhere.txt", "From another tab.\n");
        const stranger = await refusal(service.call("chat.send", {conversationId: conversation.id, text: "Read it", uploads: [{uploadId: finished}]}, tab));
        expect(stranger.message).toContain(`no upload ${finished} on this connection`);

        const unfinished = await uploadText(tab, "half.txt", "Half of a file.\n");
        const early = await refusal(service.call("chat.send", {conversationId: conversation.id, text: "Read it", uploads: [{uploadId: unfinished}]}, tab));
        expect(early.message).toContain("is not finished: call attachments.uploadFinish first");
        const stored = await ok<{messages: unknown[]}>(service.call("conversations.get", {conversationId: conversation.id}, tab));
        expect(stored.messages).toEqual([]);
    });
});
