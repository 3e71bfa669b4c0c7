import fs from "node:fs";
import path from "node:path";
import {describe, expect, it, vi} from "vitest";
import * as z from "zod";
import {coreEvents, WireErrorSchema} from "../../src/core/common/api/index.js";
import {errorCodes, errorDetailOf, internalErrorMessage, toWireError} from "../../src/core/common/errors.js";
import {servicesOf} from "../helpers/coreServices.js";
import {inProcessCoreClientForFile} from "../helpers/inProcessCoreClient.js";

const opened = inProcessCoreClientForFile("wire-errors");

/** What the client receives when listing conversations fails inside the core with `fail`'s error, and what the core's local log got. */
async function failListingWith(fail: () => never) {
    const log = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const listing = vi.spyOn(opened.core, "listConversations").mockImplementation(fail);
    try {
        const received = await opened.client.call("conversations.list", {}).catch((error: unknown) => error);
        return {received: received as {code: string, message: string, details: unknown}, logged: log.mock.calls.flat().map(String).join("\n")};
    } finally {
        listing.mockRestore();
        log.mockRestore();
    }
}

describe("only Cleanroom's error codes cross the wire", () => {
    it("a file-system error reaches the client as INTERNAL without its path; the path is in the core's local log", async () => {
        const missingFile = path.join(opened.home, "private-folder", "notes-about-me.txt");
        const {received, logged} = await failListingWith(() => fs.readFileSync(missingFile) as never);
        expect(received).toMatchObject({code: "INTERNAL", message: internalErrorMessage, details: {}});
        expect(JSON.stringify(received)).not.toContain("private-folder");
        expect(JSON.stringify(received)).not.toContain("ENOENT");
        expect(logged).toContain(missingFile);
        expect(logged).toContain("ENOENT");
    });

    it("a SQLite error reaches the client as INTERNAL without its SQLITE_ code or SQL; both are in the local log", async () => {
        const {received, logged} = await failListingWith(() => servicesOf(opened.core).database.prepare("SELECT secret_column FROM no_such_table").all() as never);
        expect(received).toMatchObject({code: "INTERNAL", message: internalErrorMessage, details: {}});
        expect(JSON.stringify(received)).not.toMatch(/SQLITE|no_such_table/);
        expect(logged).toMatch(/SqliteError \[SQLITE_ERROR\]: no such table: no_such_table/);
    });

    it("Cleanroom's own codes cross with their message and details", async () => {
        await expect(opened.client.call("conversations.get", {conversationId: "gone"}))
            .rejects.toMatchObject({code: "CONVERSATION_NOT_FOUND", message: "No conversation with id gone.", details: {conversationId: "gone"}});
    });

    it("an object with an unknown code is INTERNAL too, and a relayed wire error keeps its code", () => {
        const quiet = () => undefined;
        expect(toWireError({code: "EACCES", message: "permission denied, open '/home/someone/key'"}, quiet))
            .toEqual({code: "INTERNAL", message: internalErrorMessage, details: {}});
        expect(toWireError({code: "DISK_FULL", message: "The disk is full.", details: {phase: "during"}}, quiet))
            .toEqual({code: "DISK_FULL", message: "The disk is full.", details: {phase: "during"}});
    });

    it("a receiver reads a detail only from an error of the expected code and in the expected shape", () => {
        const documents = z.array(z.object({name: z.string(), bytes: z.number()})).min(1);
        const held = {code: "CLOUD_ATTACHMENTS_UNCONFIRMED", message: "Confirm.", details: {documents: [{name: "lease.pdf", bytes: 2048}]}};
        expect(errorDetailOf(held, "CLOUD_ATTACHMENTS_UNCONFIRMED", "documents", documents)).toEqual([{name: "lease.pdf", bytes: 2048}]);
        expect(errorDetailOf(held, "SECRET_IN_CLOUD_REQUEST", "documents", documents)).toBeNull();
        expect(errorDetailOf({...held, details: {documents: [{name: "lease.pdf"}]}}, "CLOUD_ATTACHMENTS_UNCONFIRMED", "documents", documents)).toBeNull();
        expect(errorDetailOf({...held, code: "EACCES"}, "CLOUD_ATTACHMENTS_UNCONFIRMED", "documents", documents)).toBeNull();
    });
});

describe("a message that does not exist is MESSAGE_NOT_FOUND", () => {
    it("showing a version of a message of another conversation, or of none, says the message is not found", async () => {
        const holder = await opened.client.call("conversations.create", {title: "Holds the message"});
        const other = await opened.client.call("conversations.create", {title: "Another one"});
        const {store} = servicesOf(opened.core);
        const prompt = store.appendMessage(holder.id, {role: "user", content: "a prompt", status: "complete"});

        await expect(opened.client.call("chat.showVersion", {conversationId: other.id, messageId: prompt.id}))
            .rejects.toMatchObject({code: "MESSAGE_NOT_FOUND", details: {conversationId: other.id, messageId: prompt.id}});
        await expect(opened.client.call("chat.showVersion", {conversationId: holder.id, messageId: prompt.id + 1000}))
            .rejects.toMatchObject({code: "MESSAGE_NOT_FOUND", message: `Conversation ${holder.id} holds no message with id ${prompt.id + 1000}.`});
        await expect(opened.client.call("chat.showVersion", {conversationId: holder.id, messageId: prompt.id})).resolves.toMatchObject({messages: [{id: prompt.id}]});
    });
});

describe("the wire schema knows every error code", () => {
    it("takes each declared code, and refuses an undeclared one: an event carrying it never reaches the app", () => {
        for (const code of errorCodes)
            expect(WireErrorSchema.safeParse({code, message: "m", details: {}}).success, code).toBe(true);
        expect(WireErrorSchema.safeParse({code: "EACCES", message: "permission denied", details: {}}).success).toBe(false);
        expect(coreEvents["turn.error"].safeParse({conversationId: "conv-1", messageId: 7, error: {code: "SQLITE_CORRUPT", message: "m", details: {}}}).success).toBe(false);
        expect(coreEvents["turn.error"].safeParse({conversationId: "conv-1", messageId: 7, error: toWireError(new Error("raw"), () => undefined)}).success).toBe(true);
    });
});
