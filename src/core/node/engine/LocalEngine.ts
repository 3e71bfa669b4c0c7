import {AsyncDisposeAggregator, EventRelay} from "lifecycle-utils";
import {
    resolveChatWrapper, LlamaText, type ChatHistoryItem, type ChatWrapper, type GbnfJsonSchema, type Llama, type LlamaGrammar, type LlamaModel, type Token
} from "node-llama-cpp";
import type * as z from "zod";
import type {BackgroundScrubFault} from "../../common/api/events.js";
import type {ModelInfoSchema} from "../../common/api/schemas.js";
import {CleanroomError, ContextOverflowError, ModelLoadError, ModelNotLoadedError, ScrubUnverifiedError} from "../../common/errors.js";
import type {ConversationId, ConversationSettings, DroppedHistory, SessionEndReason} from "../../common/types.js";
import type {AuditLogOf} from "../audit/AuditLogOf.js";
import {settingKeys} from "../settings/settingKeys.js";
import type {SettingsStore} from "../settings/SettingsStore.js";
import {ContextPool, conversationContextFactory, type ContextPoolOptions} from "./ContextPool.js";
import type {ContextSnapshot, ConversationContext, GenerateResult, SessionEnd} from "./ConversationContext.js";
import type {TurnSampling} from "./TurnSampling.js";
import {KvLayoutCache} from "./KvLayoutCache.js";
import {KvScrubber} from "./KvScrubber.js";
import {backgroundScrubFault} from "./backgroundScrubFault.js";
import {checkDevice, type DeviceCheckOutcome} from "./checkDevice.js";
import {PrivateScratchDir} from "./PrivateScratchDir.js";
import {describeLlamaBuild} from "./describeLlamaBuild.js";
import {llamaGpuChoice} from "./loadLlama.js";
import {traceStartup} from "../startupTrace.js";
import {startupThreadpoolSize} from "./startupThreadpoolSize.js";
import {machineFingerprint, measureThreads, modelFingerprint, pickBestThreads, threadTunerVersion, type ThreadTuning} from "./ThreadTuner.js";
import {unfollowedJsonSchemaPart} from "./unfollowedJsonSchemaPart.js";
import {scrubFactsOf} from "./toScrubReport.js";
import type {KvResume} from "../resume/KvResume.js";
import type {KvSnapshotBinding} from "../resume/sealKvSnapshot.js";
import fs from "node:fs";
import {validateModelFileRemembered, type CheckedModelFile} from "./ModelValidationMemo.js";
import {checkModelFileHead} from "./checkModelFileHead.js";
import type {ModelLoadStep} from "../../common/api/types.js";

export type LocalEngineOptions = {
    /** Tokens per conversation context. Defaults to the model's trained context, at most `4096`. */
    contextSize?: number,
    /** Fixed thread count. Defaults to the count measured fastest on this machine for this model (cached). */
    threads?: number,
    pool?: ContextPoolOptions,
    /** Folder for the scrub's transient files. Defaults to /dev/shm, else the temp folder. */
    scratchParent?: string,
    /** Prompt tokens evaluated per prefill step, between which a cancel is seen. Defaults to the context's batch size (at most `512`). */
    prefillChunkTokens?: number
};

/** The loaded model and how the engine runs it: `model.status`'s `info`. */
export type LoadedModelInfo = z.infer<typeof ModelInfoSchema>;

export type ChatTurnInput = TurnSampling & {
    conversationId: ConversationId,
    /** Whose `sampling` fills in what the turn leaves out. */
    settings: ConversationSettings,
    /** Earlier complete turns, oldest first. */
    history: Array<{role: "user" | "assistant", content: string}>,
    userText: string,
    signal?: AbortSignal,
    onText?: (text: string) => void,
    /** Called after each prefill step (see `GenerateOptions.onPrefill`). */
    onPrefill?: (tokensInContext: number, promptTokens: number) => void,
    captureFirstTokenProbabilities?: boolean
};

export type PreparedPrompt = {
    tokens: Token[],
    stopTexts: string[],
    maxTokens: number,
    dropped: DroppedHistory
};

export type EngineTurnResult = GenerateResult & {
    /** The turn's context as the turn left it (it may have ended since: a cancelled turn's is scrubbed at once). */
    isolation: ContextSnapshot,
    prompt: PreparedPrompt,
    contextCreated: boolean,
    evicted: ConversationId[]
};

const defaultMaxContextSize = 4096;

/**
 * The local model and the pool of per-conversation contexts. One model at a time; unloading
 * it ends (and scrubs) every session first.
 */
export class LocalEngine {
    private readonly _llama: () => Promise<Llama>;
    /** Where each event goes: a conversation's steps to that conversation's trail (an incognito one's in memory). */
    private readonly _audits: AuditLogOf;
    private readonly _settings: SettingsStore | null;
    private readonly _options: LocalEngineOptions;
    private _model: LlamaModel | null = null;
    private _facts: CheckedModelFile | null = null;
    private _info: LoadedModelInfo | null = null;
    private _pool: ContextPool | null = null;
    private _chatWrapper: ChatWrapper | null = null;
    private _unload: AsyncDisposeAggregator | null = null;
    private _resume: KvResume | null = null;
    /** What a resume snapshot of the loaded model must match; null without a model. */
    private _snapshotBinding: (() => KvSnapshotBinding) | null = null;
    /** A session no call waited for (evicted, idle, model switched) ended with a scrub that could not be verified. */
    public readonly onBackgroundScrubFault = new EventRelay<BackgroundScrubFault>();

    /** `llama` may be a function: it is called when the first model loads, not before. */
    public constructor(llama: Llama | (() => Promise<Llama>), audits: AuditLogOf, settings: SettingsStore | null, options: LocalEngineOptions = {}) {
        this._llama = typeof llama === "function" ? llama : async () => llama;
        this._audits = audits;
        this._settings = settings;
        this._options = options;
    }

    public get model() {
        return this._model;
    }

    public get info() {
        return this._info;
    }

    public get pool() {
        return this._pool;
    }

    /** The `Llama` model loads use (loaded now when it is not yet). */
    public llama(): Promise<Llama> {
        return this._llama();
    }

    /** Keeps resume snapshots (`KvResume`) from the next model load on. */
    public useResume(resume: KvResume | null) {
        this._resume = resume;
    }

    /** Loads the model; `onStep` hears each step as it begins (`threads` only when the thread count is measured). */
    public async loadModel(modelPath: string, onStep?: (step: ModelLoadStep) => void): Promise<LoadedModelInfo> {
        await this.unloadModel();
        onStep?.("reading");
        // Before llama.cpp is loaded (seconds, the first time): a missing or foreign file is refused at once.
        checkModelFileHead(modelPath);
        const llama = await this._llama();
        const facts = await validateModelFileRemembered(llama, modelPath, this._settings);
        traceStartup("model file checked");
        const gpu = await llamaGpuChoice(llama);
        const fitContextSize = Math.min(this._options.contextSize ?? defaultMaxContextSize, facts.trainContextSize ?? defaultMaxContextSize);
        let model: LlamaModel;
        onStep?.("loading");
        try {
            // On a GPU: as many layers as node-llama-cpp's estimate fits in free VRAM beside one
            // conversation's context (never a blind "max"); RAM is checked by its load and the pool's budget.
            model = await llama.loadModel({modelPath, gpuLayers: gpu.backend == null ? 0 : {fitContext: {contextSize: fitContextSize}}});
        } catch (error) {
            throw new ModelLoadError("MODEL_LOAD_FAILED", `llama.cpp could not load the model: ${error instanceof Error ? error.message : String(error)}`, {path: modelPath}, error);
        }
        traceStartup("model loaded (llama.cpp)");

        let device: DeviceCheckOutcome | null = null;
        if (gpu.backend != null && model.gpuLayers > 0) {
            onStep?.("deviceCheck");
            device = await checkDevice(model, {
                backend: gpu.backend, device: gpu.device ?? "unnamed device", architecture: facts.architecture, threads: this._options.threads, settings: this._settings
            });
            if (device.ranProbe)
                this._audits.auditOf(null).record({kind: "device.probed", data: {...device.key, passed: device.check.passed, problem: device.check.problem ?? "", durationMs: Math.round(device.check.durationMs)}});
            if (!device.check.passed)
                model = await this._reloadOnCpu(model, modelPath, device.check.device, device.check.problem);
        }

        try {
            const {threads, source, measurements} = await this._chooseThreads(model, modelPath, onStep);
            traceStartup("threads chosen");
            onStep?.("kvLayout");
            const contextSize = Math.min(this._options.contextSize ?? defaultMaxContextSize, model.trainContextSize);
            // swaFullCache: a sliding-window model's window cache gets a cell per context cell, as its full-attention
            // cache does, so the scrub's zero state fills both (and node-llama-cpp needs no checkpoints for it).
            const contextOptions = {contextSize, threads, sequences: 1, batchSize: Math.min(512, contextSize), swaFullCache: true};
            const scratch = PrivateScratchDir.create(this._options.scratchParent);
            traceStartup("scratch folder");
            if (scratch.staleFoldersRemoved > 0)
                this._audits.auditOf(null).record({kind: "scratch.swept", data: {staleFoldersRemoved: scratch.staleFoldersRemoved}});
            let scrubber: KvScrubber;
            try {
                // Learned once per model, context options, machine and build; each scrub proves it again.
                const cache = this._settings == null ? null : new KvLayoutCache(this._settings, {
                    model: modelFingerprint(modelPath), machine: machineFingerprint(), backend: describeBackend(model), contextOptions
                });
                scrubber = await KvScrubber.learn(model, contextOptions, scratch, {
                    cache,
                    gpuLayers: gpu.backend == null ? 0 : model.gpuLayers,
                    onRelearned: (contradiction) => {
                        this._audits.auditOf(null).record({kind: "kv.layout.discarded", data: {contradiction}});
                        if (this._info != null && this._pool === pool)
                            this._info = {...this._info, contextSize: scrubber.kvCells, kvBytesPerContext: scrubber.kvBytes};
                    }
                });
            } catch (error) {
                scratch.dispose();
                throw error;
            }
            traceStartup("KV layout (learned or cached, proved)");
            const estimate = model.fileInsights.estimateContextResourceRequirements({contextSize: scrubber.kvCells, sequences: 1, modelGpuLayers: model.gpuLayers});
            const contextBytes = Math.max(estimate.cpuRam, scrubber.kvBytes);
            const pool = new ContextPool(conversationContextFactory(model, contextOptions, scrubber), contextBytes, this._options.pool);
            pool.onSessionEnding.createListener(({conversationId, contextId, reason}) =>
                this._audits.auditOf(conversationId).record({kind: "scrub.started", conversationId, data: {contextId, reason}}));
            pool.onSessionEnd.createListener((end) => {
                this._recordSessionEnd(end.conversationId, end);
                const fault = backgroundScrubFault(end);
                if (fault != null)
                    this.onBackgroundScrubFault.dispatchEvent(fault);
            });
            const modelFile = fs.statSync(modelPath);
            const modelId = `${modelFingerprint(modelPath)} ${modelFile.size} ${Math.round(modelFile.mtimeMs)}`;
            // Read when used: a layout learned again can change the cells.
            const snapshotBinding = (): KvSnapshotBinding => ({
                model: modelId,
                context: `cells ${scrubber.kvCells} state ${scrubber.kvBytes} batch ${contextOptions.batchSize} swa-full ${contextOptions.swaFullCache} gpu-layers ${model.gpuLayers}`,
                build: describeBackend(model)
            });
            const resume = this._resume;
            if (resume != null) {
                pool.beforeScrub = (conversationId, reason, readState, tokens) =>
                    resume.save(conversationId, reason, snapshotBinding(), readState, Math.ceil(tokens * scrubber.kvBytes / scrubber.kvCells));
                resume.removeStale(snapshotBinding());
            }

            this._model = model;
            this._facts = facts;
            this._pool = pool;
            this._snapshotBinding = snapshotBinding;
            // Unloading, in the order it must run: every session ended (scrubbed), the model freed, the scratch folder removed.
            this._unload = new AsyncDisposeAggregator();
            this._unload.add(() => pool.dispose("unload"));
            this._unload.add(model);
            this._unload.add(scratch);
            this._chatWrapper = resolveChatWrapper(model);
            this._info = {
                path: modelPath,
                architecture: facts.architecture,
                fileBytes: facts.fileBytes,
                parameters: facts.parameters,
                trainContextSize: facts.trainContextSize,
                contextSize: scrubber.kvCells,
                requestedContextSize: this._options.contextSize ?? null,
                contextSizeNotice: contextSizeNotice(this._options.contextSize, model.trainContextSize),
                threads,
                threadsSource: source,
                threadMeasurements: measurements,
                llamaBuild: describeLlamaBuild(llama),
                uvThreadpoolSize: startupThreadpoolSize(),
                kvBytesPerContext: scrubber.kvBytes,
                poolBudgetBytes: pool.budgetBytes,
                poolCapacity: pool.capacity,
                gpuRequested: gpu.requested,
                gpu: model.gpuLayers > 0 ? gpu.backend : null,
                gpuDevice: model.gpuLayers > 0 ? gpu.device : null,
                gpuLayers: model.gpuLayers,
                modelLayers: model.fileInsights.totalLayers,
                kvReadBack: scrubber.kvReadBack.kvReadBack,
                kvReadBackProblem: scrubber.kvReadBack.problem,
                sequenceMemory: scrubber.stateCoverage.memory,
                stateCovered: scrubber.stateCoverage.complete,
                stateCoverageProblem: scrubber.stateCoverage.problem,
                deviceCheck: device?.check ?? null
            };
            this._audits.auditOf(null).record({kind: "model.loaded", data: {
                architecture: facts.architecture, fileBytes: facts.fileBytes, contextSize: scrubber.kvCells, threads,
                threadsSource: source, llamaBuild: describeLlamaBuild(llama), uvThreadpoolSize: startupThreadpoolSize(), kvBytesPerContext: scrubber.kvBytes, poolCapacity: pool.capacity,
                kvLayers: scrubber.layout?.layers.length ?? 0, kvTransposed: scrubber.layout?.vTransposed ?? false, kvLayoutSource: scrubber.layoutSource,
                sequenceMemory: scrubber.stateCoverage.memory, stateCovered: scrubber.stateCoverage.complete,
                stateParts: scrubber.stateLayout?.sections.map((section) => section.kind).join(" + ") ?? "not understood",
                gpuRequested: gpu.requested, gpu: this._info.gpu ?? "cpu", gpuDevice: this._info.gpuDevice ?? "", gpuLayers: model.gpuLayers,
                modelLayers: this._info.modelLayers, kvReadBack: scrubber.kvReadBack.kvReadBack, kvDeviceLayers: scrubber.kvReadBack.deviceLayers.length,
                ...(gpu.vulkanDevices != null ? {vulkanDevices: gpu.vulkanDevices.reason} : {}),
                ...(device != null ? {deviceCheck: device.check.passed ? `passed (${device.check.source})` : `FAILED (${device.check.source}): ${device.check.problem ?? ""}`} : {})
            }});
            if (!scrubber.stateCoverage.complete)
                this._audits.auditOf(null).record({kind: "security.fault", data: {
                    what: `the scrub cannot zero and read back all of a conversation's state: ${scrubber.stateCoverage.problem ?? "unknown"}`
                }});
            if (scrubber.kvReadBack.kvReadBack === "unverified")
                this._audits.auditOf(null).record({kind: "security.fault", data: {
                    what: `the KV read-back from the GPU could not be verified (${scrubber.kvReadBack.problem ?? "unknown"}): every scrub on this model is reported unverified`
                }});
            return this._info;
        } catch (error) {
            await model.dispose();
            if (error instanceof CleanroomError)
                throw error;
            // llama.cpp accepted the file, but no context could be set up on it (a damaged hyperparameter, for one).
            throw new ModelLoadError(
                "MODEL_LOAD_FAILED",
                `The model loaded, but no working context could be set up for it: ${error instanceof Error ? error.message : String(error)}`,
                {path: modelPath}, error
            );
        }
    }

    /**
     * The model again with no layer offloaded, after its GPU device failed the isolation probe: the
     * device is not used, and the fault is recorded with the reason.
     */
    private async _reloadOnCpu(model: LlamaModel, modelPath: string, device: string, problem: string | null): Promise<LlamaModel> {
        this._audits.auditOf(null).record({kind: "security.fault", data: {
            what: `the GPU device ${device} failed the isolation probe (${problem ?? "unknown"}): it is not used, the model runs on the CPU`
        }});
        const llama = model.llama;
        await model.dispose();
        try {
            return await llama.loadModel({modelPath, gpuLayers: 0});
        } catch (error) {
            throw new ModelLoadError("MODEL_LOAD_FAILED", `llama.cpp could not load the model on the CPU: ${error instanceof Error ? error.message : String(error)}`, {path: modelPath}, error);
        }
    }

    public async unloadModel() {
        const unload = this._unload;
        this._unload = null;
        this._pool = null;
        this._snapshotBinding = null;
        this._model = null;
        this._info = null;
        this._facts = null;
        this._chatWrapper = null;
        await unload?.dispose();
    }

    /**
     * The engine's end: ends every session (scrubbed, as a "shutdown") and unloads the model, whatever the sessions' ends reported;
     * then throws `ScrubUnverifiedError` if a scrub could not be verified. A second call finds nothing left to end.
     */
    public async dispose() {
        const pool = this._pool;
        let ends: SessionEnd[];
        try {
            ends = pool != null ? await pool.endAllSessions("shutdown") : [];
        } finally {
            await this.unloadModel();
            // The snapshots the sessions just left are sealed and written meanwhile; the database closes after them (bounded).
            await this._resume?.settle();
        }
        for (const end of ends)
            throwUnlessVerified(end);
    }

    /** `await using engine = new LocalEngine(…)`. */
    public [Symbol.asyncDispose](): Promise<void> {
        return this.dispose();
    }

    /** Ends every session (each scrubbed), the model staying loaded; then throws `ScrubUnverifiedError` if a scrub could not be verified. */
    public async endAllSessions(reason: SessionEndReason): Promise<SessionEnd[]> {
        const ends = this._pool != null ? await this._pool.endAllSessions(reason) : [];
        for (const end of ends)
            throwUnlessVerified(end);
        return ends;
    }

    /** Ends the conversation's session (scrubbed); `ScrubUnverifiedError` when the scrub could not be verified (the context is discarded all the same). */
    public async endSession(conversationId: ConversationId, reason: SessionEndReason): Promise<SessionEnd | null> {
        const end = await this._pool?.endSession(conversationId, reason) ?? null;
        if (end != null)
            throwUnlessVerified(end);
        return end;
    }

    /**
     * Builds the prompt for a turn and checks that it fits before anything is evaluated. Older
     * turns are left out only under the `drop-oldest` policy, reported in `dropped`; the system
     * prompt and the newest message are never cut.
     */
    public preparePrompt(input: Pick<ChatTurnInput, "settings" | "history" | "userText" | "maxTokens">): PreparedPrompt {
        const {model, chatWrapper, info} = this._requireModel();
        const maxTokens = input.maxTokens ?? input.settings.sampling.maxTokens;
        const contextSize = info.contextSize;

        let history = input.history;
        let dropped: DroppedHistory = {droppedMessages: 0, droppedTokens: 0};
        const render = (turns: ChatTurnInput["history"]) => {
            const chatHistory: ChatHistoryItem[] = [];
            if (input.settings.systemPrompt.trim() !== "")
                chatHistory.push({type: "system", text: input.settings.systemPrompt});
            for (const turn of turns)
                chatHistory.push(turn.role === "user" ? {type: "user", text: turn.content} : {type: "model", response: [turn.content]});
            chatHistory.push({type: "user", text: input.userText}, {type: "model", response: []});
            const state = chatWrapper.generateContextState({chatHistory});
            return {
                tokens: state.contextText.tokenize(model.tokenizer),
                stopTexts: state.stopGenerationTriggers.map(textOfTrigger).filter((text): text is string => text != null)
            };
        };

        let rendered = render(history);
        const fullLength = rendered.tokens.length;
        while (rendered.tokens.length + maxTokens > contextSize && history.length > 0 && input.settings.historyPolicy === "drop-oldest") {
            // Drop a whole exchange at a time so the window never starts with a reply.
            const drop = history[0]?.role === "user" && history[1]?.role === "assistant" ? 2 : 1;
            history = history.slice(drop);
            rendered = render(history);
            dropped = {droppedMessages: input.history.length - history.length, droppedTokens: fullLength - rendered.tokens.length};
        }
        if (rendered.tokens.length + maxTokens > contextSize)
            throw new ContextOverflowError(rendered.tokens.length, maxTokens, contextSize);

        return {tokens: rendered.tokens, stopTexts: rendered.stopTexts, maxTokens, dropped};
    }

    /**
     * A raw text prompt (an API `/v1/completions` request: no chat template), with the model's BOS
     * token when it wants one, checked to fit with its reply budget before anything is evaluated.
     */
    public prepareTextPrompt(text: string, maxTokens: number): PreparedPrompt {
        const {model, info} = this._requireModel();
        const bos = model.tokens.shouldPrependBosToken && model.tokens.bos != null ? [model.tokens.bos] : [];
        const tokens = [...bos, ...model.tokenize(text)];
        if (tokens.length + maxTokens > info.contextSize)
            throw new ContextOverflowError(tokens.length, maxTokens, info.contextSize);
        return {tokens, stopTexts: [], maxTokens, dropped: {droppedMessages: 0, droppedTokens: 0}};
    }

    public async runTurn(input: ChatTurnInput, prepared: PreparedPrompt = this.preparePrompt(input)): Promise<EngineTurnResult> {
        const pool = this._requirePool();
        const opened = await pool.open(input.conversationId);
        const {created, evicted} = opened;
        for (const evictedId of evicted)
            this._audits.auditOf(evictedId).record({kind: "context.evicted", conversationId: evictedId, data: {forConversation: input.conversationId}});
        let context = opened.context;
        if (created) {
            this._recordContextCreated(input.conversationId, context);
            context = await this._resumeInto(pool, input.conversationId, context, prepared.tokens);
        }
        const sampling = input.settings.sampling;
        let result: GenerateResult;
        try {
            result = await context.generate(input.conversationId, {
                promptTokens: prepared.tokens,
                maxTokens: prepared.maxTokens,
                temperature: input.temperature ?? sampling.temperature,
                topK: input.topK ?? sampling.topK,
                topP: input.topP ?? sampling.topP,
                seed: input.seed !== undefined ? input.seed : sampling.seed,
                stopTexts: [...prepared.stopTexts, ...input.stopTexts ?? [], ...grammarStopTexts(input.grammar)],
                grammar: input.grammar,
                signal: input.signal,
                onText: input.onText,
                prefillChunkTokens: this._options.prefillChunkTokens,
                onPrefill: input.onPrefill,
                captureFirstTokenProbabilities: input.captureFirstTokenProbabilities
            });
        } catch (error) {
            await this._endUnfinishedTurn(pool, input.conversationId, context, "fault", error);
            throw error;
        }
        // A cancelled turn leaves KV cells it never finished (a half-done prefill, a reply cut off):
        // that state is scrubbed now, and the next turn is rebuilt from the stored history.
        if (result.finishReason === "aborted")
            await this._endUnfinishedTurn(pool, input.conversationId, context, "abort");
        return {...result, isolation: context.snapshot(), prompt: prepared, contextCreated: created, evicted};
    }

    /** The conversation's context as it is now, if it has one that has not ended. */
    public liveContext(conversationId: ConversationId): ContextSnapshot | null {
        const context = this._pool?.peek(conversationId);
        return context == null || context.disposed ? null : context.snapshot();
    }

    private _recordContextCreated(conversationId: ConversationId, context: ConversationContext) {
        this._audits.auditOf(conversationId).record({kind: "context.created", conversationId, data: {
            contextId: context.id, kvCells: context.kvCells, kvBytes: context.kvBytes, threads: context.threads
        }});
    }

    /**
     * Loads the conversation's resume snapshot, if it has a valid one, into its fresh context. A
     * load the engine failed may have left part of the state: that context is ended (scrubbed) and
     * a fresh one opened, in which the history is evaluated as without a snapshot.
     */
    private async _resumeInto(pool: ContextPool, conversationId: ConversationId, context: ConversationContext, promptTokens: Token[]): Promise<ConversationContext> {
        if (this._resume == null || this._snapshotBinding == null)
            return context;
        const outcome = await this._resume.restore(conversationId, this._snapshotBinding(), promptTokens,
            (state) => context.restoreState(conversationId, state));
        if (outcome.restored || !outcome.loadFailed)
            return context;
        await this._endUnfinishedTurn(pool, conversationId, context, "fault");
        const reopened = await pool.open(conversationId);
        this._recordContextCreated(conversationId, reopened.context);
        return reopened.context;
    }

    /**
     * Ends the session of a turn that did not finish (scrubbed and verified, then freed), unless it
     * already ended another way. A scrub that cannot be verified is thrown (`ScrubUnverifiedError`),
     * over the turn's own failure (`cause`).
     */
    private async _endUnfinishedTurn(pool: ContextPool, conversationId: ConversationId, context: ConversationContext, reason: "abort" | "fault", cause?: unknown) {
        if (pool.peek(conversationId) !== context)
            return;
        const end = await pool.endSession(conversationId, reason);
        if (end != null)
            throwUnlessVerified(end, cause);
    }

    /**
     * A grammar that lets the model write only JSON (`schema: null`) or only JSON matching the schema,
     * through node-llama-cpp's JSON-schema grammar; `INVALID_INPUT` for a schema it cannot follow.
     */
    public async createJsonGrammar(schema: Record<string, unknown> | null): Promise<LlamaGrammar> {
        const {llama} = this._requireModel().model;
        const unfollowed = schema == null ? null : unfollowedJsonSchemaPart(schema);
        if (unfollowed != null)
            throw new CleanroomError("INVALID_INPUT", `The JSON schema cannot be followed: ${unfollowed}.`, {param: "response_format.json_schema.schema"});
        try {
            return schema == null ? await llama.getGrammarFor("json") : await llama.createGrammarForJsonSchema<GbnfJsonSchema>(schema as GbnfJsonSchema);
        } catch (error) {
            throw new CleanroomError("INVALID_INPUT", `The JSON schema cannot be followed: ${error instanceof Error ? error.message : String(error)}`,
                {param: "response_format.json_schema.schema"});
        }
    }

    /** Tokens of a text in the loaded model's vocabulary. */
    public countTokens(text: string) {
        return this._requireModel().model.tokenize(text).length;
    }

    private _recordSessionEnd(conversationId: ConversationId, end: SessionEnd) {
        const data = scrubFactsOf(end);
        const audit = this._audits.auditOf(conversationId);
        if (end.verified) {
            audit.record({kind: "scrub.verified", conversationId, data});
        } else {
            audit.record({kind: "scrub.failed", conversationId, data: {...data, failure: end.failure}});
            // The error as every front end shows it: the app raises it from this event for sessions that end with no caller (idle, evict).
            audit.record({kind: "security.fault", conversationId, data: {
                contextId: end.contextId, what: "KV scrub could not be verified; the context was discarded",
                error: new ScrubUnverifiedError(end).toWire()
            }});
        }
        audit.record({kind: "context.disposed", conversationId, data: {contextId: end.contextId, reason: end.reason}});
    }

    private async _chooseThreads(model: LlamaModel, modelPath: string, onStep?: (step: ModelLoadStep) => void) {
        if (this._options.threads != null)
            return {threads: this._options.threads, source: "override" as const, measurements: []};

        // Measured per model, machine, llama.cpp build, libuv pool and tuner version: a build made
        // by `npm run build:llama`, another pool, or a tuner that measures differently can make
        // another count fastest.
        const fingerprints = {
            model: modelFingerprint(modelPath), machine: machineFingerprint(),
            backend: `${describeBackend(model)} pool ${startupThreadpoolSize()}`
        };
        const key = settingKeys.threadTuning(threadTunerVersion, fingerprints);
        const cached = this._settings?.get<ThreadTuning>(key);
        if (cached != null && Number.isInteger(cached.threads) && cached.threads > 0)
            return {threads: cached.threads, source: "cached" as const, measurements: cached.measurements};
        onStep?.("threads");

        const measurements = await measureThreads(model);
        const threads = pickBestThreads(measurements);
        const tuning: ThreadTuning = {
            threads, measurements, modelFingerprint: fingerprints.model, machineFingerprint: fingerprints.machine,
            backend: fingerprints.backend, measuredAt: Date.now()
        };
        this._settings?.set(key, tuning);
        this._audits.auditOf(null).record({kind: "threads.tuned", data: {threads, measurements, backend: fingerprints.backend}});
        return {threads, source: "tuned" as const, measurements};
    }

    private _requireModel() {
        if (this._model == null || this._chatWrapper == null || this._info == null)
            throw new ModelNotLoadedError("chat", "No local model is loaded.");

        return {model: this._model, chatWrapper: this._chatWrapper, info: this._info};
    }

    private _requirePool() {
        if (this._pool == null)
            throw new ModelNotLoadedError("chat", "No local model is loaded.");

        return this._pool;
    }
}

/** The binary and how many layers run on its GPU: thread counts and KV layouts are kept per backend. */
function describeBackend(model: LlamaModel) {
    return model.gpuLayers > 0 ? `${describeLlamaBuild(model.llama)} gpu ${model.gpuLayers}` : describeLlamaBuild(model.llama);
}

/** The texts at which a grammar's output is complete (node-llama-cpp's JSON grammars: four newlines of trailing whitespace). */
function grammarStopTexts(grammar: LlamaGrammar | undefined): string[] {
    return (grammar?.stopGenerationTriggers ?? []).map((trigger) => textOfTrigger(LlamaText(trigger))).filter((text): text is string => text != null);
}

function textOfTrigger(trigger: LlamaText): string | null {
    const values = LlamaText(trigger).values;
    return values.every((value) => typeof value === "string") ? values.join("") : null;
}

function throwUnlessVerified(end: SessionEnd, cause?: unknown) {
    if (!end.verified)
        throw new ScrubUnverifiedError(end, cause);
}

/** Says that a context size asked for was above what the model was trained with, and capped to it; null when it was not. */
function contextSizeNotice(requested: number | undefined, trainContextSize: number): string | null {
    return requested != null && requested > trainContextSize
        ? `The context size asked for (${requested} tokens) is above what this model was trained with (${trainContextSize}): it was capped to ${trainContextSize}.`
        : null;
}
