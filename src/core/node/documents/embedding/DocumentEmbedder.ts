import crypto from "node:crypto";
import {withLock} from "lifecycle-utils";
import type {Llama, LlamaContextSequence, LlamaEmbeddingContext, LlamaModel} from "node-llama-cpp";
import {ModelLoadError} from "../../../common/errors.js";
import {KvScrubber, type ZeroAndVerifyResult} from "../../engine/KvScrubber.js";
import {PrivateScratchDir} from "../../engine/PrivateScratchDir.js";
import {modelFingerprint} from "../../engine/ThreadTuner.js";
import {validateModelFile} from "../../engine/validateModelFile.js";
import {unitVector} from "../chunkVectors.js";

export type DocumentEmbedderOptions = {
    /** Tokens per embedding context. Defaults to the model's trained context, at most `512`. */
    contextSize?: number,
    /** Threads of the embedding context. Defaults to `2` (`EmbeddingModelChoice` passes the chat model's count). */
    threads?: number,
    /** Folder for the scrub's transient files. Defaults to /dev/shm, else the temp folder. */
    scratchParent?: string
};

/** The scrub that ended an embedding context: the same report as a conversation context's. */
export type EmbeddingScrub = ZeroAndVerifyResult & {contextId: string};

export type EmbeddingBatch = {vectors: Float32Array[], scrub: EmbeddingScrub};

const defaultMaxContextSize = 512;
const defaultThreads = 2;

/**
 * A local embedding model (#23): turns texts into unit vectors for retrieval. Every call runs in an
 * embedding context of its own (`createEmbeddingContext`), which is a llama.cpp context like any
 * other: created for that call, used for one conversation's texts only, and ended by the same KV
 * scrub as a conversation's (zeroed, read back, verified) before it is freed. An encoder such as
 * BERT has no KV memory: its scrub proves that instead (its state read back holds nothing, method
 * `no-kv-memory`). Nothing is kept between calls, so nothing passes from one conversation's
 * documents to another's.
 */
export class DocumentEmbedder {
    /** The model's fingerprint: stored with each vector, so that vectors of another model are never compared. */
    public readonly modelId: string;
    public readonly path: string;
    private readonly _model: LlamaModel;
    private readonly _scrubber: KvScrubber;
    private readonly _scratch: PrivateScratchDir;
    private readonly _contextOptions: {contextSize: number, threads: number, batchSize: number};
    private _disposed = false;

    private constructor(path: string, model: LlamaModel, scrubber: KvScrubber, scratch: PrivateScratchDir, contextOptions: DocumentEmbedder["_contextOptions"]) {
        this.path = path;
        this.modelId = `${modelFingerprint(path)}:${model.embeddingVectorSize ?? 0}`;
        this._model = model;
        this._scrubber = scrubber;
        this._scratch = scratch;
        this._contextOptions = contextOptions;
    }

    /**
     * Loads the embedding model (on the CPU) and learns the KV layout its contexts' scrub zeroes, on
     * a throwaway context fed one neutral token (as for a chat model). `MODEL_LOAD_FAILED` when it cannot.
     */
    public static async load(llama: Llama, modelPath: string, options: DocumentEmbedderOptions = {}): Promise<DocumentEmbedder> {
        const facts = await validateModelFile(llama, modelPath);
        let model: LlamaModel;
        try {
            model = await llama.loadModel({modelPath, gpuLayers: 0});
        } catch (error) {
            throw new ModelLoadError("MODEL_LOAD_FAILED", `llama.cpp could not load the embedding model: ${error instanceof Error ? error.message : String(error)}`,
                {path: modelPath}, error);
        }
        const contextSize = Math.min(options.contextSize ?? defaultMaxContextSize, facts.trainContextSize ?? defaultMaxContextSize, model.trainContextSize);
        // The whole input in one batch: an embedding is read from one evaluation.
        const contextOptions = {contextSize, threads: options.threads ?? defaultThreads, batchSize: contextSize};
        const scratch = PrivateScratchDir.create(options.scratchParent);
        try {
            const scrubber = await KvScrubber.learn(model, {...contextOptions, sequences: 1}, scratch);
            return new DocumentEmbedder(modelPath, model, scrubber, scratch, contextOptions);
        } catch (error) {
            scratch.dispose();
            await model.dispose();
            throw new ModelLoadError("MODEL_LOAD_FAILED",
                `The embedding model loaded, but no embedding context could be set up for it: ${error instanceof Error ? error.message : String(error)}`, {path: modelPath}, error);
        }
    }

    /** Tokens an embedding context holds; a longer text is embedded from its beginning. */
    public get contextSize(): number {
        return this._contextOptions.contextSize;
    }

    /** The most tokens of one text that are embedded whole (the context, less the beginning and end tokens it adds). */
    public get maxInputTokens(): number {
        return Math.max(1, this.contextSize - 4);
    }

    /** The tokens of `text` as this model reads it (without the tokens the embedding context adds). */
    public countTokens(text: string): number {
        return this._model.tokenize(text).length;
    }

    /**
     * The unit vectors of `texts` (in order), computed in a new embedding context that is scrubbed
     * before this returns: `scrub` says how. When the scrub cannot be verified the context is
     * discarded all the same; the caller decides what to do with the report (see `LocalTurnService`).
     * One call at a time: a context is created, used and scrubbed before the next.
     */
    public async embed(texts: readonly string[]): Promise<EmbeddingBatch> {
        return await withLock([this, "embed"], async () => {
            if (this._disposed)
                throw new Error("The embedding model was unloaded");
            const contextId = `embed-${crypto.randomBytes(6).toString("hex")}`;
            const context = await this._model.createEmbeddingContext(this._contextOptions);
            let scrub: EmbeddingScrub | null = null;
            try {
                const vectors: Float32Array[] = [];
                for (const text of texts)
                    vectors.push(unitVector((await context.getEmbeddingFor(this._fittingTokens(text))).vector));
                scrub = {...await this._scrub(context), contextId};
                return {vectors, scrub};
            } finally {
                if (scrub == null)
                    // A failed call still ends its context with a scrub; its report is lost with the error thrown.
                    await this._scrub(context).catch(() => undefined);
                await context.dispose();
            }
        });
    }

    public async dispose(): Promise<void> {
        if (this._disposed)
            return;
        this._disposed = true;
        await withLock([this, "embed"], async () => {
            await this._model.dispose();
            this._scratch.dispose();
        });
    }

    public [Symbol.asyncDispose](): Promise<void> {
        return this.dispose();
    }

    /** The text's tokens, cut so that they fit the context with the beginning and end tokens the embedding context adds. */
    private _fittingTokens(text: string) {
        return this._model.tokenize(text).slice(0, this.maxInputTokens);
    }

    private async _scrub(context: LlamaEmbeddingContext): Promise<ZeroAndVerifyResult> {
        return await this._scrubber.zeroAndVerify(sequenceOf(context));
    }
}

/**
 * The one sequence of an embedding context. node-llama-cpp keeps it internal (`_sequence`), and
 * it is what the scrub must zero: checked here, so that a change of the library fails loudly.
 */
function sequenceOf(context: LlamaEmbeddingContext): LlamaContextSequence {
    const sequence = (context as unknown as {_sequence?: LlamaContextSequence})._sequence;
    if (sequence == null || typeof sequence.saveStateToFile !== "function" || typeof sequence.loadStateFromFile !== "function")
        throw new Error("node-llama-cpp's embedding context no longer exposes its sequence: its KV cannot be scrubbed");
    return sequence;
}
