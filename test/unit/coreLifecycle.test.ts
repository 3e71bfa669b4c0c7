import path from "node:path";
import {describe, expect, it} from "vitest";
import {loadLlama} from "../../src/core/node/engine/loadLlama.js";
import {openTestCore, servicesOf} from "../helpers/coreServices.js";
import {tempDir} from "../helpers/tempCore.js";

describe("core lifecycle", () => {
    it("disposing twice at once: the second dispose waits for the first, and the database is closed when either resolves", async () => {
        const core = openTestCore(() => loadLlama(), {database: path.join(tempDir("lifecycle"), "core.db")});
        const {database} = servicesOf(core);
        const first = core.dispose();
        await core.dispose();
        expect(database.open).toBe(false);
        await first;
    });

    it("`await using` disposes the core when its block is left: the database is closed", async () => {
        let database: ReturnType<typeof servicesOf>["database"];
        {
            await using core = openTestCore(() => loadLlama(), {database: path.join(tempDir("lifecycle"), "core.db")});
            ({database} = servicesOf(core));
            core.createConversation({title: "kept until the block ends"});
            expect(database.open).toBe(true);
        }
        expect(database.open).toBe(false);
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
            await core.dispose();
        }
    });
});
