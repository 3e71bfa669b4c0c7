import {QueryObserver, type QueryClient} from "@tanstack/react-query";
import {afterEach, describe, expect, it} from "vitest";
import type {ApiInput, ApiMethod, ApiOutput} from "../../src/core/common/api/index.js";
import type {CoreClient} from "../../src/core/common/rpc/index.js";
import {applyCoreEvent, type OpenConversation} from "../../renderer/src/queries/coreEventCache.js";
import {conversationQuery, isolationQuery} from "../../renderer/src/queries/coreQueries.js";
import {createCoreQueryClient} from "../../renderer/src/queries/CoreQueryProvider.js";
import {FrameBatchedEvents} from "../../renderer/src/queries/frameBatchedEvents.js";
import {queryKeys} from "../../renderer/src/queries/queryKeys.js";

const message = (id: number, conversationId: string, content: string, status = "complete") =>
    ({id, conversationId, role: "assistant", content, status, route: null, routeReason: null, tokens: null, createdAt: 0, updatedAt: 0}) as OpenConversation["messages"][number];
const conversation = (id: string, ...messages: OpenConversation["messages"]): OpenConversation =>
    ({conversation: {id, title: id, policy: "local_only", pinned: false, settings: {}, createdAt: 0, updatedAt: 0, incognito: false},
        messages, generating: false, draft: ""}) as unknown as OpenConversation;

/** A core whose answers the test gives, one call at a time, in any order. */
function heldCore() {
    const calls: Array<{method: ApiMethod, input: unknown, answer: (value: unknown) => void}> = [];
    const client: CoreClient = {
        call: <M extends ApiMethod>(method: M, input: ApiInput<M>) => new Promise<ApiOutput<M>>((resolve) => {
            calls.push({method, input, answer: resolve as (value: unknown) => void});
        }),
        subscribe: () => () => undefined
    };
    const callFor = (method: ApiMethod, conversationId: string) => {
        const found = calls.find((call) => call.method === method && (call.input as {conversationId?: string}).conversationId === conversationId);
        if (found == null)
            throw new Error(`no ${method} call for ${conversationId}`);
        return found;
    };
    return {client, calls, callFor};
}

let queryClient: QueryClient;
afterEach(() => queryClient?.clear());

describe("core events in the renderer's cache", () => {
    it("streamed text lands in its own conversation's copy, never in another one's", () => {
        queryClient = createCoreQueryClient();
        queryClient.setQueryData(queryKeys.conversation("a"), conversation("a", message(1, "a", "Once")));
        queryClient.setQueryData(queryKeys.conversation("b"), conversation("b", message(1, "b", "Other")));

        applyCoreEvent(queryClient, "message.text", {conversationId: "a", messageId: 1, text: " upon a time"});

        expect(queryClient.getQueryData<OpenConversation>(queryKeys.conversation("a"))!.messages[0]).toMatchObject({content: "Once upon a time", status: "streaming"});
        expect(queryClient.getQueryData<OpenConversation>(queryKeys.conversation("b"))!.messages[0]).toMatchObject({content: "Other", status: "complete"});
    });

    it("text for a conversation not in the cache creates nothing (it is read whole when opened)", () => {
        queryClient = createCoreQueryClient();
        applyCoreEvent(queryClient, "message.text", {conversationId: "never-opened", messageId: 1, text: "x"});
        expect(queryClient.getQueryCache().getAll()).toEqual([]);
    });

    it("a turn shows as generating from its start to its end; a blocked reply's text goes at once; the list and the conversation are read again", () => {
        queryClient = createCoreQueryClient();
        queryClient.setQueryData(queryKeys.conversations, []);
        queryClient.setQueryData(queryKeys.conversation("a"), conversation("a", message(2, "a", "leaked text", "streaming")));

        applyCoreEvent(queryClient, "turn.started", {conversationId: "a", userMessageId: 1, assistantMessageId: 2});
        expect(queryClient.getQueryData<OpenConversation>(queryKeys.conversation("a"))!.generating).toBe(true);

        applyCoreEvent(queryClient, "turn.finished", {conversationId: "a", routeReason: "", userMessageId: 1, assistantMessageId: 2, status: "blocked",
            route: "cloud", cloud: {verdict: null}} as never);
        const after = queryClient.getQueryData<OpenConversation>(queryKeys.conversation("a"))!;
        expect(after.generating).toBe(false);
        expect(after.messages[0]).toMatchObject({content: "", status: "blocked"});
        expect(queryClient.getQueryState(queryKeys.conversation("a"))!.isInvalidated).toBe(true);
        expect(queryClient.getQueryState(queryKeys.conversations)!.isInvalidated).toBe(true);
    });

    it("an audit event makes only its own conversation's isolation report stale", () => {
        queryClient = createCoreQueryClient();
        queryClient.setQueryData(queryKeys.isolation("a"), null);
        queryClient.setQueryData(queryKeys.isolation("b"), null);
        applyCoreEvent(queryClient, "audit.event", {id: 1, conversationId: "a", at: 0, kind: "conversation.trashed", data: {}});
        expect(queryClient.getQueryState(queryKeys.isolation("a"))!.isInvalidated).toBe(true);
        expect(queryClient.getQueryState(queryKeys.isolation("b"))!.isInvalidated).toBe(false);
    });

    it("the model's status from core.status is written in; a reconnect reads each shown query again, once", async () => {
        queryClient = createCoreQueryClient();
        const core = heldCore();
        const shown = new QueryObserver(queryClient, isolationQuery(core.client, "a", true));
        const stop = shown.subscribe(() => undefined);
        core.callFor("isolation.report", "a").answer(null);
        await expect.poll(() => shown.getCurrentResult().status).toBe("success");

        const model = {state: "ready", path: "/m.gguf", info: null, error: null} as const;
        applyCoreEvent(queryClient, "core.status", {state: "ready", model, pendingRestart: [], message: null});
        expect(queryClient.getQueryData(queryKeys.model)).toEqual(model);

        applyCoreEvent(queryClient, "core.status", {state: "restarted", model: null, pendingRestart: [], message: "Reconnected to the core."});
        expect(core.calls.filter((call) => call.method === "isolation.report")).toHaveLength(2);
        stop();
    });
});

describe("keys per conversation: a slow answer never replaces the conversation shown", () => {
    it("the answer for the conversation left, arriving after the one opened since, is not what the open conversation shows", async () => {
        queryClient = createCoreQueryClient();
        const core = heldCore();
        // What useOpenConversation does: one observer, its key following the open conversation.
        const open = new QueryObserver(queryClient, conversationQuery(core.client, "a", true));
        const stop = open.subscribe(() => undefined);
        open.setOptions(conversationQuery(core.client, "b", true));

        core.callFor("conversations.get", "b").answer(conversation("b", message(1, "b", "The story of B")));
        await expect.poll(() => open.getCurrentResult().data?.conversation.id).toBe("b");
        const left = queryClient.getQueryCache().find<OpenConversation>({queryKey: queryKeys.conversation("a")})!;
        core.callFor("conversations.get", "a").answer(conversation("a", message(1, "a", "The story of A")));
        // The late answer arrived, under its own key...
        await expect.poll(() => left.state.data?.conversation.id).toBe("a");
        // ...and the open conversation still shows B.

        expect(open.getCurrentResult().data?.messages.map((shown) => shown.content)).toEqual(["The story of B"]);
        expect(queryClient.getQueryData<OpenConversation>(queryKeys.conversation("b"))!.conversation.id).toBe("b");
        stop();
    });
});

describe("streamed text, at most once a frame", () => {
    /** A frame scheduler the test runs by hand, counting the frames asked for. */
    function handFrames() {
        const pending: Array<() => void> = [];
        let asked = 0;
        return {
            schedule: (flush: () => void) => {
                asked++;
                pending.push(flush);
                return () => pending.splice(pending.indexOf(flush), 1);
            },
            drawFrame: () => pending.splice(0).forEach((flush) => flush()),
            asked: () => asked
        };
    }
    const contentOf = (id: string) => queryClient.getQueryData<OpenConversation>(queryKeys.conversation(id))!.messages.map((entry) => entry.content);

    it("pieces of text arriving within a frame change the cache once, together and in order, when the frame comes", () => {
        queryClient = createCoreQueryClient();
        queryClient.setQueryData(queryKeys.conversation("a"), conversation("a", message(1, "a", "Once"), message(2, "a", "")));
        queryClient.setQueryData(queryKeys.conversation("b"), conversation("b", message(1, "b", "Other")));
        const frames = handFrames();
        const events = new FrameBatchedEvents(queryClient, frames.schedule);
        let changes = 0;
        const stop = queryClient.getQueryCache().subscribe((change) => change.type === "updated" && changes++);

        for (const text of [" upon", " a", " time"])
            events.apply("message.text", {conversationId: "a", messageId: 1, text});
        events.apply("message.text", {conversationId: "b", messageId: 1, text: " words"});
        expect(contentOf("a")).toEqual(["Once", ""]);
        expect(frames.asked()).toBe(1);

        frames.drawFrame();
        stop();
        expect(contentOf("a")).toEqual(["Once upon a time", ""]);
        expect(contentOf("b")).toEqual(["Other words"]);
        expect(changes).toBe(2);
    });

    it("another event first applies the text held back: a turn's last words land before its end, and no frame is left to come", () => {
        queryClient = createCoreQueryClient();
        queryClient.setQueryData(queryKeys.conversation("a"), conversation("a", message(2, "a", "The end", "streaming")));
        const frames = handFrames();
        const events = new FrameBatchedEvents(queryClient, frames.schedule);

        events.apply("message.text", {conversationId: "a", messageId: 2, text: " of the story."});
        events.apply("turn.error", {conversationId: "a", messageId: 2, error: {code: "INTERNAL", message: "stopped", details: {}}});
        expect(contentOf("a")).toEqual(["The end of the story."]);
        expect(queryClient.getQueryData<OpenConversation>(queryKeys.conversation("a"))!.generating).toBe(false);
        frames.drawFrame();
        expect(contentOf("a")).toEqual(["The end of the story."]);
    });

    it("text held back when the cache goes (the app locks) is dropped, and its frame called off", () => {
        queryClient = createCoreQueryClient();
        queryClient.setQueryData(queryKeys.conversation("a"), conversation("a", message(1, "a", "Secret")));
        const frames = handFrames();
        const events = new FrameBatchedEvents(queryClient, frames.schedule);
        events.apply("message.text", {conversationId: "a", messageId: 1, text: " more"});
        events.dispose();
        frames.drawFrame();
        expect(contentOf("a")).toEqual(["Secret"]);
    });
});
