import path from "node:path";
import {describe, expect, it} from "vitest";
import {loadLlama} from "../../src/core/node/engine/loadLlama.js";
import {openTestCore, servicesOf} from "../helpers/coreServices.js";
import {tempDir} from "../helpers/tempCore.js";

describe("core lifecycle", () => {
    it("closing twice at once: the second close waits for the first, and the database is closed when either resolves", async () => {
        const core = openTestCore(() => loadLlama(), {database: path.join(tempDir("lifecycle"), "core.db")});
        const {database} = servicesOf(core);
        const first = core.close();
        await core.close();
        expect(database.open).toBe(false);
        await first;
    });

    it("stops relaying audit events once the listener's handle is disposed", async () => {
        const core = openTestCore(() => loadLlama(), {database: path.join(tempDir("lifecycle"), "core.db")});
        try {
            const seen: string[] = [];
            const listener = core.onAuditEvent((event) => seen.push(event.kind));
            core.createConversation({title: "one"});
            listener.dispose();
            core.createConversation({title: "two"});
            expect(seen).toEqual(["conversation.created"]);
        } finally {
            await core.close();
        }
    });
});
