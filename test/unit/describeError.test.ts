import {describe, expect, it} from "vitest";
import {describeError} from "../../renderer/src/describeError.js";
import {toWireError} from "../../src/core/common/errors.js";
import {createCoreService} from "../../src/core/node/rpc/createCoreService.js";
import {LocalApiServer} from "../../src/core/node/serving/LocalApiServer.js";
import {loopbackTenant} from "../../src/core/node/turns/ApiRequestService.js";
import {startAppApiServer} from "../../src/serve/startAppApiServer.js";
import {inProcessCoreClientForFile} from "../helpers/inProcessCoreClient.js";

const opened = inProcessCoreClientForFile("describe-error");

/** The refusal a call ends with, as the app receives it. */
async function refusalOf(call: Promise<unknown>): Promise<unknown> {
    return await call.then(() => expect.unreachable("the call should have been refused"), (error: unknown) => error);
}

/**
 * The words the app shows (a banner, or the Local API server panel's line) for the MODEL_NOT_LOADED
 * a real core (no model, no embedding model) answers in each place, made by the renderer's `describeError`.
 */
describe("what the app says when no model is loaded tells the user what to do there", () => {
    it("a chat message: choose a model in Settings to start chatting", async () => {
        const conversation = await opened.client.call("conversations.create", {});
        const shown = describeError(await refusalOf(opened.client.call("chat.send", {conversationId: conversation.id, text: "hello"})));
        expect(shown).toEqual({title: "No model is loaded", detail: "Choose a GGUF model in Settings → Local model (or Models…) to start chatting.", kind: "warning"});
    });

    it("the local API server switched on: load a model first, then turn it on (it serves the app's model), not a word about chatting", async () => {
        const service = createCoreService(opened.core, {apiServer: new LocalApiServer(opened.core, startAppApiServer)});
        try {
            const result = await service.call("apiServer.start", {port: 0});
            expect(result).toMatchObject({ok: false, error: {code: "MODEL_NOT_LOADED"}});
            const shown = describeError(result.ok ? null : result.error);
            expect(shown).toEqual({
                title: "The local API server has no model to serve",
                detail: "Load a model first (Settings → Local model, or Models…), then turn the local API server on: it serves the model the app has loaded.",
                kind: "warning"
            });
            expect(shown.detail).not.toMatch(/chat/);
        } finally {
            service.dispose();
        }
    });

    it("embeddings asked of the local API server: choose an embedding model in Settings → Document search", async () => {
        const refused = await refusalOf(opened.core.embedForApi({tenant: loopbackTenant, texts: ["a sentence to embed"]}));
        const shown = describeError(toWireError(refused));
        expect(shown).toEqual({
            title: "No embedding model is chosen",
            detail: "Choose an embedding model in Settings → Document search: the local API server embeds with that one.",
            kind: "warning"
        });
    });

    it("a MODEL_NOT_LOADED without what it was needed for shows the core's own sentence", () => {
        const shown = describeError({code: "MODEL_NOT_LOADED", message: "No model: pass --model <gguf>.", details: {}});
        expect(shown).toEqual({title: "No model is loaded", detail: "No model: pass --model <gguf>.", kind: "warning"});
    });
});
