import {withLock} from "lifecycle-utils";
import crypto from "node:crypto";
import {LlamaGrammarEvaluationState, type LlamaContext, type LlamaContextSequence, type Token} from "node-llama-cpp";
import {CleanroomError, ContextOverflowError, ContextOwnershipError} from "../../common/errors.js";
import type {ConversationId, SessionEndReason} from "../../common/types.js";
import type {KvScrubber, ZeroAndVerifyResult} from "./KvScrubber.js";
import {loadSequenceState, readSequenceState} from "./SequenceStateBytes.js";
import {sequenceOptions} from "./sequenceOptions.js";
import {StopTextDetector} from "./StopTextDetector.js";
import type {ResolvedSampling} from "./TurnSampling.js";

export type GenerateOptions = Omit<ResolvedSampling, "stopTexts"> & {
    promptTokens: Token[],
    /** Every text that ends the reply: the chat template's turn terminators, the turn's own, its grammar's. */
    stopTexts?: string[],
    signal?: AbortSignal,
    /** Called with each new piece of reply text, in order. */
    onText?: (text: string) => void,
    /**
     * Prompt tokens evaluated per step of the prefill; `signal` is checked between steps, so a
     * turn cancelled during a long prefill stops within one step. Defaults to the context's batch size.
     */
    prefillChunkTokens?: number,
    /** Called after each prefill step with the prompt tokens now in the context (reused ones included) and the prompt's length. */
    onPrefill?: (tokensInContext: number, promptTokens: number) => void,
    /** Collect the probabilities of the first generated token (used by the self-test's differential check). */
    captureFirstTokenProbabilities?: boolean
};

export type GenerateResult = {
    text: string,
    tokens: Token[],
    /** Prompt tokens this turn evaluated (fewer than asked when it was cancelled during the prefill). */
    evaluatedPromptTokens: number,
    reusedPromptTokens: number,
    finishReason: "stop" | "maxTokens" | "aborted",
    firstTokenMs: number | null,
    /** From the start of the turn to the last generated token. */
    decodeMs: number,
    firstTokenProbabilities: Array<[Token, number]> | null
};

/** A context as it is at one moment: what a turn reports and the Isolation panel shows of it, never the context itself. */
export type ContextSnapshot = {
    contextId: string,
    kvCells: number,
    kvBytes: number,
    threads: number,
    tokensInContext: number
};

export type SessionEnd = ZeroAndVerifyResult & {contextId: string, reason: SessionEndReason};

/** Runs at a session's end before the scrub, with the sequence to itself: `readState` reads the state it is about to zero, of `tokens` tokens. */
export type BeforeScrub = (readState: () => Promise<Buffer>, tokens: number) => Promise<void>;

/**
 * One conversation's private llama.cpp context. Only the owning conversation may use it
 * (checked on every call), and its lifetime ends with a verified KV scrub.
 */
export class ConversationContext {
    public readonly id: string;
    public readonly owner: ConversationId;
    public readonly createdAt = Date.now();
    private readonly _context: LlamaContext;
    private readonly _sequence: LlamaContextSequence;
    private readonly _scrubber: KvScrubber;
    private _busy = 0;
    private _ended: Promise<SessionEnd> | null = null;
    private _lastUsedAt = Date.now();
    private _tokensGenerated = 0;
    private _everUsed = false;
    /** The most memory node-llama-cpp's checkpoints of this sequence were seen to take (copies of its state no scrub zeroes). */
    private _checkpointBytesSeen = 0;

    private constructor(context: LlamaContext, owner: ConversationId, scrubber: KvScrubber) {
        this.id = `ctx-${crypto.randomBytes(6).toString("hex")}`;
        this.owner = owner;
        this._context = context;
        this._sequence = context.getSequence(sequenceOptions);
        this._scrubber = scrubber;
    }

    /** @internal only ContextPool creates contexts */
    public static _create(context: LlamaContext, owner: ConversationId, scrubber: KvScrubber) {
        return new ConversationContext(context, owner, scrubber);
    }

    public get kvCells() {
        return this._scrubber.kvCells;
    }

    public get kvBytes() {
        return this._scrubber.kvBytes;
    }

    public get threads() {
        return this._context.idealThreads;
    }

    public get tokensInContext() {
        return this._sequence.nextTokenIndex;
    }

    public get tokensGenerated() {
        return this._tokensGenerated;
    }

    public get lastUsedAt() {
        return this._lastUsedAt;
    }

    public get busy() {
        return this._busy > 0;
    }

    public get disposed() {
        return this._ended != null;
    }

    public snapshot(): ContextSnapshot {
        return {contextId: this.id, kvCells: this.kvCells, kvBytes: this.kvBytes, threads: this.threads, tokensInContext: this.tokensInContext};
    }

    /** Throws unless `requester` owns this context. Every use goes through here. */
    public assertOwner(requester: ConversationId) {
        if (requester !== this.owner)
            throw new ContextOwnershipError(this.id, this.owner, requester);
        if (this._ended != null)
            throw new CleanroomError("CONTEXT_DISPOSED", `Context ${this.id} has ended its session and cannot be used.`, {contextId: this.id});
    }

    public async generate(requester: ConversationId, options: GenerateOptions): Promise<GenerateResult> {
        this.assertOwner(requester);
        return await this._withLock(async () => {
            this.assertOwner(requester);
            return await this._generate(options);
        });
    }

    /**
     * Loads a saved state (a resume snapshot, already authenticated) into this context, which must be
     * fresh: owned by `requester`, never used, nothing evaluated. Its tokens become the context's, so
     * the next turn reuses the prefix they share with its prompt.
     */
    public async restoreState(requester: ConversationId, state: Buffer): Promise<void> {
        this.assertOwner(requester);
        await this._withLock(async () => {
            this.assertOwner(requester);
            if (this._everUsed || this._sequence.nextTokenIndex !== 0)
                throw new CleanroomError("INTERNAL", `Context ${this.id} has been used: a saved state is loaded only into a fresh context.`, {contextId: this.id});
            this._everUsed = true;
            await loadSequenceState(this._sequence, this._scrubber.scratch, state);
        });
    }

    /**
     * Ends the session: zero every KV cell, verify, then free the context. Runs once; later calls get
     * the same result. It never rejects: a scrub that throws, or a context that cannot be freed,
     * ends the session unverified (`failure` says why), and the context is freed all the same.
     * `beforeScrub` (a resume snapshot) runs first when the context holds tokens; its failure never stops the scrub.
     */
    public dispose(reason: SessionEndReason, beforeScrub?: BeforeScrub): Promise<SessionEnd> {
        this._ended ??= this._scrubAndFree(beforeScrub).then((result) => ({...result, contextId: this.id, reason}));
        return this._ended;
    }

    /** `await using`: the session ends as a close (the pool passes its own reason to `dispose`). */
    public async [Symbol.asyncDispose](): Promise<void> {
        await this.dispose("close");
    }

    private async _scrubAndFree(beforeScrub: BeforeScrub | undefined): Promise<ZeroAndVerifyResult> {
        const started = performance.now();
        let result: ZeroAndVerifyResult;
        try {
            result = await this._withLock(async () => {
                this._noteCheckpoints();
                if (beforeScrub != null && this._sequence.nextTokenIndex > 0)
                    await beforeScrub(() => readSequenceState(this._sequence, this._scrubber.scratch), this._sequence.nextTokenIndex).catch(() => undefined);
                return await this._scrubber.zeroAndVerify(this._sequence);
            });
        } catch (error) {
            result = this._scrubber.unverifiedResult(`the scrub failed: ${messageOf(error)}`, performance.now() - started);
        }
        if (this._checkpointBytesSeen > 0) {
            const failure = `node-llama-cpp kept ${this._checkpointBytesSeen} bytes of checkpoints of this sequence (copies of its state in RAM), which no scrub zeroes`;
            result = {...result, verified: false, failure: result.failure == null ? failure : `${result.failure}; ${failure}`};
        }
        try {
            await this._context.dispose();
        } catch (error) {
            const failure = `the context could not be freed: ${messageOf(error)}`;
            result = {...result, verified: false, failure: result.failure == null ? failure : `${result.failure}; ${failure}`};
        }
        return result;
    }

    private async _generate(options: GenerateOptions): Promise<GenerateResult> {
        const {promptTokens, maxTokens} = options;
        if (promptTokens.length === 0)
            throw new CleanroomError("INVALID_INPUT", "Cannot generate from an empty prompt.");
        if (promptTokens.length + maxTokens > this.kvCells)
            throw new ContextOverflowError(promptTokens.length, maxTokens, this.kvCells);

        this._lastUsedAt = Date.now();
        this._everUsed = true;
        const started = performance.now();

        // Reuse the evaluated prefix this conversation already has in its own KV cache.
        const {firstDifferentIndex} = this._sequence.compareContextTokens(promptTokens);
        let keep = Math.min(firstDifferentIndex, promptTokens.length - 1);
        if (this._sequence.nextTokenIndex > keep) {
            // A sliding-window, hybrid or recurrent state cannot lose its tail: node-llama-cpp would then
            // evaluate the kept prefix again and take a checkpoint (a copy of the state no scrub zeroes).
            // Such a sequence is cleared whole instead, and the prompt evaluated from its start.
            if (this._sequence.needsCheckpoints)
                keep = 0;
            await this._sequence.eraseContextTokenRanges([{start: keep, end: this._sequence.nextTokenIndex}]);
        }
        const toEvaluate = promptTokens.slice(keep);

        // The prefill, step by step: a cancel lands between two steps, never after the whole prompt.
        const step = Math.max(1, options.prefillChunkTokens ?? this._context.batchSize);
        const cancelled = () => options.signal?.aborted === true;
        let evaluated = 0;
        while (!cancelled() && toEvaluate.length - evaluated > step) {
            await this._sequence.evaluateWithoutGeneratingNewTokens(toEvaluate.slice(evaluated, evaluated + step));
            evaluated += step;
            options.onPrefill?.(keep + evaluated, promptTokens.length);
        }
        if (cancelled()) {
            this._lastUsedAt = Date.now();
            return {
                text: "", tokens: [], evaluatedPromptTokens: evaluated, reusedPromptTokens: keep, finishReason: "aborted",
                firstTokenMs: null, decodeMs: performance.now() - started, firstTokenProbabilities: null
            };
        }

        const model = this._sequence.model;
        const stop = new StopTextDetector(options.stopTexts ?? []);
        const tokens: Token[] = [];
        let pending: Token[] = [];
        let text = "";
        let firstTokenMs: number | null = null;
        let lastTokenAt = started;
        let firstTokenProbabilities: Array<[Token, number]> | null = null;
        let finishReason: GenerateResult["finishReason"] = "maxTokens";

        const emit = (piece: string) => {
            const {emit: visible, stopped} = stop.push(piece);
            if (visible.length > 0) {
                text += visible;
                options.onText?.(visible);
            }
            return stopped;
        };

        // Greedy decoding needs no sampler chain; top-k/top-p would only cost time.
        const grammarEvaluationState = options.grammar == null ? undefined : new LlamaGrammarEvaluationState({model, grammar: options.grammar});
        const sampling = options.temperature > 0
            ? {temperature: options.temperature, topK: options.topK, topP: options.topP, seed: options.seed ?? undefined, grammarEvaluationState}
            : {temperature: 0, grammarEvaluationState};
        const iterator = this._sequence.evaluateWithMetadata(toEvaluate.slice(evaluated), {
            confidence: false,
            probabilities: options.captureFirstTokenProbabilities === true
        }, sampling);

        try {
            for await (const output of iterator) {
                if (firstTokenMs == null) {
                    firstTokenMs = performance.now() - started;
                    options.onPrefill?.(promptTokens.length, promptTokens.length);
                    if (options.captureFirstTokenProbabilities === true && "probabilities" in output)
                        firstTokenProbabilities = [...(output.probabilities as Map<Token, number>).entries()];
                }
                if (cancelled()) {
                    finishReason = "aborted";
                    break;
                }
                const token = output.token;
                lastTokenAt = performance.now();
                if (model.isEogToken(token)) {
                    finishReason = "stop";
                    break;
                }
                tokens.push(token);
                this._tokensGenerated++;

                pending.push(token);
                const piece = model.detokenize(pending, false, tokens.slice(Math.max(0, tokens.length - pending.length - 8), tokens.length - pending.length));
                // A multi-byte character split over tokens decodes to U+FFFD until its last byte arrives.
                if (!(piece.endsWith("\uFFFD") && pending.length < 4)) {
                    pending = [];
                    if (emit(piece)) {
                        finishReason = "stop";
                        break;
                    }
                }
                if (tokens.length >= maxTokens) {
                    finishReason = "maxTokens";
                    break;
                }
            }
        } finally {
            await iterator.return(undefined);
        }
        if (finishReason !== "stop")
            emit(stop.flush());
        else
            stop.flush();

        this._lastUsedAt = Date.now();
        this._noteCheckpoints();
        return {
            text,
            tokens,
            evaluatedPromptTokens: toEvaluate.length, // every step ran (only the prefill is cut short by a cancel)
            reusedPromptTokens: keep,
            finishReason,
            firstTokenMs,
            decodeMs: lastTokenAt - started,
            firstTokenProbabilities
        };
    }

    private _noteCheckpoints() {
        this._checkpointBytesSeen = Math.max(this._checkpointBytesSeen, this._sequence.checkpointsMemoryUsage);
    }

    /** One use of the sequence at a time; `busy` counts the waiting ones too (a busy context is never evicted). */
    private async _withLock<T>(work: () => Promise<T>): Promise<T> {
        this._busy++;
        try {
            return await withLock([this, "sequence"], work);
        } finally {
            this._busy--;
        }
    }
}

function messageOf(error: unknown) {
    return error instanceof Error ? error.message : String(error);
}
