import readline from "node:readline/promises";
import {Option, type Command} from "commander";
import {
    CloudContextLimitSchema, ContextSizeSchema, MaxTokensSchema, MessageTextSchema, SeedSchema, TemperatureSchema, ThreadsSchema
} from "../../core/common/api/limits.js";
import {catchScrubFault} from "../../core/common/catchScrubFault.js";
import {CleanroomError, isCleanroomError} from "../../core/common/errors.js";
import {titleFromText} from "../../core/common/titleFromText.js";
import {ConversationIdSchema, ConversationSettingsSchema, type CloudTurnResult, type LocalTurnResult, type ScrubReport} from "../../core/common/types.js";
import type {DocumentSource} from "../../core/node/documents/extraction/types.js";
import type {GpuSetting} from "../../core/common/api/types.js";
import type {Core} from "../../core/node/Core.js";
import type {NewConversation} from "../../core/node/database/ConversationStore.js";
import type {LoadedModelInfo} from "../../core/node/engine/LocalEngine.js";
import type {SecretKindId} from "../../core/common/secretScan/secretKinds.js";
import type {CloudSecretsOptions, SecretFinding} from "../../core/common/secretScan/types.js";
import {traceStartup} from "../../core/node/startupTrace.js";
import {gpuOption, gpuOptionDescription, numberOption, secretKindOption, textOption} from "../optionParsers.js";
import {exitCodes, printJson, reportError, reportWarning} from "../output.js";

type ChatOptions = {
    model?: string,
    db?: string,
    conversation?: string,
    prompt?: string,
    maxTokens?: number,
    temperature?: number,
    seed?: number,
    system?: string,
    threads?: number,
    contextSize?: number,
    gpu?: GpuSetting,
    json?: boolean,
    cloud?: boolean,
    endpoint?: string,
    cloudModel?: string,
    contextLimit?: number,
    incognito?: boolean,
    redactSecrets?: boolean,
    allowSecret?: SecretKindId[],
    attach?: string[],
    sendAttachments?: boolean
};

export function registerChatCommand(program: Command) {
    program.command("chat")
        .description("Chat with the local model. With --prompt: one turn, then the session ends (scrubbed) and the command exits.")
        .option("--model <gguf>", "GGUF model file (default: $CLEANROOM_MODEL)")
        .option("--db <file>", "SQLite database (default: the app's data folder)")
        .option("--conversation <id>", "conversation to continue (created when new; letters, digits and _ . : -)",
            textOption("--conversation", ConversationIdSchema))
        .option("--prompt <text>", "send one message and exit", textOption("--prompt", MessageTextSchema, {private: true}))
        .option("--max-tokens <n>", "reply budget in tokens", numberOption("--max-tokens", MaxTokensSchema))
        .option("--temperature <t>", "sampling temperature (0 = greedy, deterministic)", numberOption("--temperature", TemperatureSchema))
        .option("--seed <s>", "sampling seed (same seed, same reply)", numberOption("--seed", SeedSchema))
        .option("--system <text>", "system prompt for a new conversation",
            textOption("--system", ConversationSettingsSchema.shape.systemPrompt, {private: true}))
        .option("--threads <n>", "override the measured thread count", numberOption("--threads", ThreadsSchema))
        .option("--context-size <n>", "tokens per conversation context (rounded up to a multiple of 256)",
            numberOption("--context-size", ContextSizeSchema))
        .option("--gpu <backend>", gpuOptionDescription, gpuOption)
        .option("--cloud", "send this turn to the shared cloud (canary-checked); the conversation must allow it")
        .option("--endpoint <base-url>", "OpenAI-compatible base URL for --cloud (key: $CLEANROOM_CLOUD_API_KEY)")
        .option("--cloud-model <name>", "model name at the endpoint")
        .option("--context-limit <n>", "the endpoint's context limit in tokens (default: as the endpoint reports)",
            numberOption("--context-limit", CloudContextLimitSchema))
        .option("--redact-secrets", "a cloud turn sends each secret found replaced by a typed placeholder ([AWS access key 1]), put back in the reply")
        .option("--allow-secret <kind>", "a cloud turn sends secrets of this kind as they are (repeatable; e.g. aws-access-key, card-number, jwt)",
            secretKindOption)
        .option("--attach <file>", "a document for this turn (text, Markdown, code, PDF, DOCX, HTML; repeatable): given whole when it fits, else retrieved chunk by chunk",
            (file: string, previous: string[] = []) => [...previous, file])
        .option("--send-attachments", "a cloud turn may send the conversation's documents (otherwise it is refused, naming each)")
        .option("--incognito", "a chat that is never written to disk (an in-memory database), its context scrubbed at the end as any other")
        .addOption(new Option("--json", "one JSON object on stdout"))
        .action(async (options: ChatOptions) => {
            const json = options.json === true;
            let core: Core | undefined;
            try {
                const {openCore, requireCliModel, resolveCliModel} = await import("../openCore.js"); // the core and llama.cpp: loaded by the commands that run them
                traceStartup("core modules loaded");
                if (options.incognito === true) {
                    if (options.conversation != null || options.db != null)
                        throw new CleanroomError("INVALID_INPUT", "--incognito keeps nothing on disk: it cannot continue a stored conversation (--conversation) or use a database (--db).",
                            {option: "--incognito"});
                    options.db = ":memory:";
                    if (!json)
                        process.stderr.write("Incognito: nothing of this chat is written to disk; its context is scrubbed when it ends.\n");
                }
                if (options.cloud === true) {
                    if (options.endpoint == null || options.cloudModel == null || options.prompt == null)
                        throw new CleanroomError("INVALID_INPUT", "--cloud needs --endpoint <base-url>, --cloud-model <name> and --prompt <text>.");
                    core = await openCore({db: options.db, threads: options.threads, contextSize: options.contextSize, gpu: options.gpu, json, cloud: {settingsOverride: {
                        endpoint: options.endpoint, model: options.cloudModel, fallback: true, contextLimit: options.contextLimit ?? null
                    }}});
                    // A cloud turn needs no local model: one is loaded when there is one (a local fallback), a default whose file is gone is said and skipped.
                    const {path: modelPath, missingDefault} = resolveCliModel(options.model);
                    if (missingDefault != null && !json)
                        process.stderr.write(`Note: ${missingDefault.message} This cloud turn goes on without a local model.\n`);
                    if (modelPath != null)
                        await core.loadModel(modelPath);
                    await cloudTurn(core, conversationFor(core, options, "cloud-allowed"), options, json);
                    return;
                }
                const modelPath = requireCliModel(options.model);
                if (json && options.prompt == null)
                    throw new CleanroomError("INVALID_INPUT", "--json needs --prompt <text>: interactive chat prints text, not JSON.", {option: "--json"});

                core = await openCore({db: options.db, threads: options.threads, contextSize: options.contextSize, gpu: options.gpu, json});
                const info = await core.loadModel(modelPath);
                traceStartup("model ready");
                if (info.contextSizeNotice != null)
                    reportWarning({code: "CONTEXT_SIZE_CAPPED", message: info.contextSizeNotice}, json);
                const conversation = conversationFor(core, options);
                if (options.prompt != null)
                    await singleTurn(core, conversation, options, json, info);
                else
                    await interactive(core, conversation.id ?? core.createConversation(conversation.create).id, options);
            } catch (error) {
                reportError(error, json);
            } finally {
                await core?.dispose();
                traceStartup("core closed");
            }
        });
}

/** The stored conversation to continue, or the one to create: by the first turn once it is accepted (a refused turn leaves none). */
type ChatConversation = {id: string, create?: undefined} | {id?: undefined, create: NewConversation};

function conversationFor(core: Core, options: ChatOptions, policy: "local" | "cloud-allowed" = "local"): ChatConversation {
    if (options.conversation != null && core.findConversation(options.conversation) != null)
        return {id: options.conversation};

    const title = options.prompt != null ? titleFromText(options.prompt, {fallback: "Terminal chat"}) : "Terminal chat";
    return {create: {id: options.conversation, title, policy, settings: options.system != null ? {systemPrompt: options.system} : {}}};
}

/** The turn of `--prompt`: in the stored conversation, or the first of a new one. */
function sendPrompt(core: Core, conversation: ChatConversation, options: ChatOptions, json: boolean, route?: "cloud") {
    const input = {
        text: options.prompt!, maxTokens: options.maxTokens, temperature: options.temperature, seed: options.seed, route, secrets: secretsOptions(options),
        attachments: attachmentSources(options.attach), sendAttachments: options.sendAttachments === true
    };
    const callbacks = {onText: json ? undefined : (piece: string) => process.stdout.write(piece)};
    return conversation.id != null
        ? core.sendMessage({...input, conversationId: conversation.id}, callbacks)
        : core.startConversation(conversation.create, input, callbacks);
}

async function singleTurn(core: Core, conversation: ChatConversation, options: ChatOptions, json: boolean, info: LoadedModelInfo) {
    const result = await sendPrompt(core, conversation, options, json);
    traceStartup("turn");
    const conversationId = result.conversationId;
    if (result.route === "cloud") {
        // An existing conversation that allows the cloud, with the fallback on: the local engine could not serve it.
        reportCloudTurn(result, json);
        return;
    }
    // A scrub that cannot be verified is thrown (and the CLI exits 4), after the reply is printed.
    const {value: scrub, fault} = await catchScrubFault(core.closeConversation(conversationId, "close"));
    traceStartup("session ended (scrub)");

    if (json)
        printJson({
            conversationId,
            ...(options.incognito === true ? {incognito: true} : {}),
            route: result.route,
            routeReason: result.routeReason,
            reply: result.reply,
            status: result.status,
            finishReason: result.finishReason,
            tokens: result.tokens,
            // The documents this turn brought, and the passages retrieved from the conversation's earlier ones (#23).
            attachments: result.attachments ?? [],
            ...(result.retrieved != null ? {retrieved: result.retrieved} : {}),
            history: result.history,
            timings: result.timings,
            // Where the model ran: the GPU backend (null: the CPU), its device, the layers offloaded.
            gpu: info.gpu,
            gpuDevice: info.gpuDevice,
            gpuLayers: info.gpuLayers,
            // The GPU device's isolation probe (null: no GPU was to be used); failed: the model ran on the CPU instead.
            deviceCheck: info.deviceCheck,
            isolation: {...result.isolation, scrub, kvReadBack: info.kvReadBack}
        });
    else {
        process.stdout.write("\n");
        describeDocuments(result);
        if (fault == null)
            process.stderr.write(describeScrub(scrub) + "\n");
    }
    if (fault != null)
        throw fault;
}

async function cloudTurn(core: Core, conversation: ChatConversation, options: ChatOptions, json: boolean) {
    const result = await sendPrompt(core, conversation, options, json, "cloud");
    if (result.route !== "cloud")
        throw new CleanroomError("INTERNAL", `A turn sent to the cloud was answered by the ${result.route} engine.`);
    reportCloudTurn(result, json);
}

/** `--redact-secrets` and `--allow-secret`, as the core takes them for a cloud turn. */
function secretsOptions(options: ChatOptions): CloudSecretsOptions {
    return {redact: options.redactSecrets === true, allow: options.allowSecret ?? []};
}

function describeFindings(findings: readonly SecretFinding[]) {
    return findings.map((finding) => `${finding.kind} (${finding.where}, line ${finding.line}: ${finding.preview})`).join(", ");
}

function reportCloudTurn(result: CloudTurnResult, json: boolean) {
    const {cloud} = result;
    if (json)
        printJson({
            conversationId: result.conversationId,
            route: result.route,
            routeReason: result.routeReason,
            blocked: cloud.blocked,
            verdict: cloud.verdict,
            reply: result.reply,
            status: result.status,
            canariesPlanted: cloud.canariesPlanted,
            warnings: cloud.warnings,
            promptTokens: cloud.promptTokens,
            model: cloud.model,
            finishReason: cloud.finishReason,
            secrets: cloud.secrets
        });
    else {
        process.stdout.write("\n");
        if (cloud.blocked)
            process.stderr.write(`Reply blocked: ${cloud.verdict?.detail ?? ""} Nothing of it was kept. You can retry locally.\n`);
        else if (cloud.verdict != null)
            process.stderr.write(`Warning: ${cloud.verdict.detail}\n`);
        for (const warning of cloud.warnings)
            process.stderr.write(`Note: ${warning}\n`);
        if (cloud.secrets.redacted.length > 0)
            process.stderr.write(`Sent redacted: ${describeFindings(cloud.secrets.redacted)}.\n`);
        if (cloud.secrets.allowed.length > 0)
            process.stderr.write(`Sent as they were (--allow-secret): ${describeFindings(cloud.secrets.allowed)}.\n`);
    }
    if (cloud.blocked)
        process.exitCode = exitCodes.blocked;
}

async function interactive(core: Core, conversationId: string, options: ChatOptions) {
    const startedAt = Date.now();
    const {conversation, messages} = core.getConversation(conversationId);
    process.stderr.write(`Conversation ${conversation.id} (${messages.length} earlier messages). /quit to leave; Ctrl+C stops a reply.\n`);
    process.stderr.write("/attach <file> adds a document to your next message.\n");
    let pendingAttachments: string[] = [];
    const terminal = readline.createInterface({input: process.stdin, output: process.stdout, terminal: process.stdin.isTTY});
    let generation: AbortController | null = null;
    // Ctrl+C stops the reply being generated, else leaves (the session is scrubbed either way). It
    // arrives from readline on a terminal, and as a signal otherwise (a pipe, `kill -INT`).
    const stop = () => {
        if (generation != null)
            generation.abort();
        else
            terminal.close();
    };
    terminal.on("SIGINT", stop);
    process.on("SIGINT", stop);

    // Lines read through the iterator are queued: lines piped in while a reply is generated are
    // answered in turn (`question()` drops any line that arrives while no question is asked).
    terminal.setPrompt("you> ");
    const lines = terminal[Symbol.asyncIterator]();
    try {
        for (;;) {
            terminal.prompt();
            const next = await lines.next().catch(() => ({done: true as const, value: undefined}));
            if (next.done)
                break; // input closed
            const text = next.value.trim();
            if (text === "/quit" || text === "/exit")
                break;
            if (text === "")
                continue;
            if (text === "/attach" || text.startsWith("/attach ")) {
                const file = text.slice("/attach".length).trim();
                if (file === "")
                    process.stderr.write("Usage: /attach <file>\n");
                else {
                    pendingAttachments = [...pendingAttachments, file];
                    process.stderr.write(`Attached ${file}: it goes with your next message.\n`);
                }
                continue;
            }

            generation = new AbortController();
            process.stdout.write("assistant> ");
            try {
                const attachments = attachmentSources(pendingAttachments);
                // Sent or refused, the documents stay with the message that tried them: a refusal leaves nothing stored, and the user attaches again.
                pendingAttachments = [];
                const result = await core.sendMessage(
                    {conversationId, text, maxTokens: options.maxTokens, temperature: options.temperature, seed: options.seed, secrets: secretsOptions(options),
                        attachments, sendAttachments: options.sendAttachments === true},
                    {signal: generation.signal, onText: (piece) => process.stdout.write(piece)}
                );
                if (result.route === "local" && result.finishReason === "aborted")
                    process.stdout.write(" (stopped)");
                if (result.route === "local" && ((result.attachments?.length ?? 0) > 0 || (result.retrieved?.length ?? 0) > 0)) {
                    process.stdout.write("\n");
                    describeDocuments(result);
                }
            } catch (error) {
                if (isCleanroomError(error, "GENERATION_ABORTED"))
                    process.stdout.write(" (stopped)");
                else {
                    // The conversation goes on after a failed turn; a security fault (exit 4) stays reported.
                    const exitCode = process.exitCode;
                    reportError(error, false);
                    if (process.exitCode !== exitCodes.securityFault)
                        process.exitCode = exitCode;
                }
            } finally {
                generation = null;
                process.stdout.write("\n");
            }
        }
    } finally {
        process.off("SIGINT", stop);
        terminal.close();
        // A scrub that cannot be verified is thrown here (reported by the command, exit 4).
        const scrub = await core.closeConversation(conversationId, "close");
        // A stopped reply ends its session at once (its half-done KV state is scrubbed then), so
        // the proof to show may be that earlier scrub; if it failed, that was reported when the reply stopped.
        const earlier = scrub == null ? core.lastScrubReport(conversationId, startedAt) : null;
        if (earlier == null || earlier.verified)
            process.stderr.write(describeScrub(scrub ?? earlier, earlier != null) + "\n");
    }
}

/** `--attach` files as the core reads them. */
function attachmentSources(files: readonly string[] = []): DocumentSource[] {
    return files.map((file) => ({kind: "path", path: file}));
}

/** On stderr: each document the turn brought (whole or retrieved) and the passages it was given, as (document, page). */
function describeDocuments(result: LocalTurnResult) {
    for (const attachment of result.attachments ?? [])
        process.stderr.write(`Attached ${attachment.name} (${attachment.pages} page${attachment.pages === 1 ? "" : "s"}, ${attachment.bytes} bytes, ` +
            `${attachment.tokens} tokens): ${attachment.mode === "whole" ? "given whole" : "too large to give whole; its most relevant passages were given"}.\n`);
    const cited = [
        ...(result.attachments ?? []).filter((attachment) => attachment.mode === "retrieved")
            .flatMap((attachment) => attachment.passages.map((passage) => `${attachment.name}, page ${passage.page}`)),
        ...(result.retrieved ?? []).map((passage) => `${passage.name}, page ${passage.page}`)
    ];
    if (cited.length > 0)
        process.stderr.write(`Passages given: ${[...new Set(cited)].map((label) => `(${label})`).join(" ")}\n`);
}

/** A verified scrub (an unverified one is a `ScrubUnverifiedError`, reported as an error). */
function describeScrub(scrub: ScrubReport | null, whenStopped = false) {
    if (scrub == null)
        return "Session ended (no context was open).";

    const when = whenStopped ? ", when the last reply was stopped" : "";
    return `Session ended: ${scrub.kvCells} KV cells zeroed, ${scrub.bytesChecked} bytes read back, ${scrub.nonZeroBytes} non-zero (${scrub.durationMs.toFixed(1)} ms${when}).`;
}
