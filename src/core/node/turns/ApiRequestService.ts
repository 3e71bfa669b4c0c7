import crypto from "node:crypto";
import {ContextOverflowError, CleanroomError} from "../../common/errors.js";
import {MaxTokensSchema} from "../../common/api/limits.js";
import type {ConversationSettings, ScrubReport} from "../../common/types.js";
import type {AuditLog} from "../audit/AuditLog.js";
import type {SessionEnd} from "../engine/ConversationContext.js";
import type {ChatTurnInput, LocalEngine, PreparedPrompt} from "../engine/LocalEngine.js";
import {toScrubReport} from "../engine/toScrubReport.js";

/** One message of an API request, its text already joined from its parts. */
export type ApiMessage = {role: "system" | "user" | "assistant", content: string};

export type ApiRequestInput = {
    /** Who asks: a label for the API key (`key 1`), or `loopback` without keys. Never the key itself. */
    tenant: string,
    /** What the model continues: a conversation (the last message the user's, rendered by the chat template), or a raw text prompt. */
    source: {kind: "chat", messages: ApiMessage[]} | {kind: "text", prompt: string},
    /** Reply budget in tokens. Defaults to the room the prompt leaves in the context. */
    maxTokens?: number,
    temperature: number,
    topP?: number,
    seed?: number | null,
    /** Texts that end the reply. Defaults to none. */
    stop?: string[],
    /** The reply must be JSON (`{schema: null}`), or JSON matching `schema`. Defaults to free text. */
    json?: {schema: Record<string, unknown> | null}
};

/** A request accepted: its prompt fits the context, with its reply budget. */
export type PreparedApiRequest = {
    requestId: string,
    input: ApiRequestInput,
    settings: ConversationSettings,
    turn: Pick<ChatTurnInput, "history" | "userText" | "grammar">,
    prompt: PreparedPrompt
};

export type ApiRequestResult = {
    requestId: string,
    text: string,
    finishReason: "stop" | "length" | "aborted",
    promptTokens: number,
    completionTokens: number,
    /** Prompt tokens found already evaluated: always 0, since every request starts in a fresh context. */
    cachedTokens: number,
    /** The scrub of the request's context, which ended with it. */
    scrub: ScrubReport
};

/** Top-k is not an OpenAI parameter: llama-server's default. */
const apiTopK = 40;

/**
 * Requests of the local API server (`cleanroom serve`): each runs in a llama.cpp context of its
 * own, created for it and ended (zeroed, verified, freed) as soon as it is answered, so nothing
 * (KV, prompt cache, slot) passes from one request to another. A request that does not fit is
 * refused by `prepare`, before anything is evaluated.
 */
export class ApiRequestService {
    private readonly _engine: LocalEngine;
    private readonly _audit: AuditLog;

    public constructor(engine: LocalEngine, audit: AuditLog) {
        this._engine = engine;
        this._audit = audit;
    }

    /**
     * Builds the prompt and checks that it fits with its reply budget (`ContextOverflowError` otherwise,
     * recorded), and the JSON grammar asked for (`INVALID_INPUT` for a schema that cannot be followed).
     */
    public async prepare(input: ApiRequestInput): Promise<PreparedApiRequest> {
        const requestId = `api-${crypto.randomBytes(8).toString("hex")}`;
        const {source} = input;
        const messages = source.kind === "chat" ? source.messages : [];
        const last = source.kind === "chat" ? messages.at(-1) : {role: "user" as const, content: source.prompt};
        if (last?.role !== "user")
            throw new CleanroomError("INVALID_INPUT", "The last message must be the user's.", {param: "messages"});
        const systemPrompt = messages.filter((message) => message.role === "system").map((message) => message.content).join("\n\n");
        const history = messages.slice(0, -1).flatMap((message) => message.role === "system" ? [] : [{role: message.role, content: message.content}]);
        const settings: ConversationSettings = {
            systemPrompt,
            historyPolicy: "refuse",
            sampling: {temperature: input.temperature, topK: apiTopK, topP: input.topP ?? 1, seed: input.seed ?? null, maxTokens: input.maxTokens ?? 1}
        };
        let prompt: PreparedPrompt;
        try {
            prompt = source.kind === "text"
                ? this._engine.prepareTextPrompt(source.prompt, input.maxTokens ?? 1)
                : this._engine.preparePrompt({settings, history, userText: last.content, maxTokens: input.maxTokens ?? 1});
            if (input.maxTokens == null) {
                const room = Math.min(this._engine.info!.contextSize - prompt.tokens.length, MaxTokensSchema.maxValue!);
                prompt = {...prompt, maxTokens: room};
            }
        } catch (error) {
            if (error instanceof ContextOverflowError)
                this._audit.record({kind: "api.refused", conversationId: requestId, data: {tenant: input.tenant, ...error.details}});
            throw error;
        }
        const grammar = input.json == null ? undefined : await this._engine.createJsonGrammar(input.json.schema);
        return {requestId, input, settings, turn: {history, userText: last.content, grammar}, prompt};
    }

    /** Runs the request in its own context, then ends that context's session (scrubbed); `ScrubUnverifiedError` if the scrub could not be verified. */
    public async run(request: PreparedApiRequest, {signal, onText}: {signal?: AbortSignal, onText?: (text: string) => void} = {}): Promise<ApiRequestResult> {
        const {requestId, input} = request;
        let end: SessionEnd | null = null;
        const pool = this._engine.pool;
        if (pool == null)
            throw new CleanroomError("MODEL_NOT_LOADED", "No local model is loaded.");
        // The engine ends a cancelled or failed request's session itself: its scrub report is caught here.
        const endListener = pool.onSessionEnd.createListener((ended) => {
            if (ended.conversationId === requestId)
                end = ended;
        });
        this._audit.record({kind: "api.request", conversationId: requestId, data: {tenant: input.tenant, promptTokens: request.prompt.tokens.length, maxTokens: request.prompt.maxTokens}});
        try {
            const result = await this._engine.runTurn({
                conversationId: requestId, settings: request.settings, ...request.turn,
                maxTokens: request.prompt.maxTokens, stopTexts: input.stop, signal, onText
            }, request.prompt);
            end ??= await this._engine.endSession(requestId, "request");
            const finishReason = result.finishReason === "maxTokens" ? "length" : result.finishReason;
            this._audit.record({kind: "api.answered", conversationId: requestId, data: {
                tenant: input.tenant, finishReason, promptTokens: request.prompt.tokens.length, completionTokens: result.tokens.length,
                cachedTokens: result.reusedPromptTokens
            }});
            // A JSON reply is complete at its closing brace: the whitespace its grammar allows after it is not part of it.
            const text = request.turn.grammar?.trimWhitespaceSuffix === true ? result.text.trimEnd() : result.text;
            return {
                requestId, text, finishReason, promptTokens: request.prompt.tokens.length,
                completionTokens: result.tokens.length, cachedTokens: result.reusedPromptTokens, scrub: toScrubReport(end!)
            };
        } finally {
            // Whatever happened, the request's context does not outlive it.
            if (end == null)
                await this._engine.endSession(requestId, "request").catch(() => undefined);
            endListener.dispose();
        }
    }
}
