import readline from "node:readline/promises";
import {Option, type Command} from "commander";
import {CleanroomError} from "../../core/common/errors.js";
import type {Core} from "../../core/node/Core.js";
import {openCore, resolveModelPath} from "../openCore.js";
import {exitCodes, parseIntegerOption, parseNumberOption, printJson, reportError} from "../output.js";

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
    json?: boolean
};

export function registerChatCommand(program: Command) {
    program.command("chat")
        .description("Chat with the local model. With --prompt: one turn, then the session ends (scrubbed) and the command exits.")
        .option("--model <gguf>", "GGUF model file (default: $CLEANROOM_MODEL)")
        .option("--db <file>", "SQLite database (default: the app's data folder)")
        .option("--conversation <id>", "conversation to continue (created when new)")
        .option("--prompt <text>", "send one message and exit")
        .option("--max-tokens <n>", "reply budget in tokens", parseIntegerOption("--max-tokens"))
        .option("--temperature <t>", "sampling temperature (0 = greedy, deterministic)", parseNumberOption("--temperature"))
        .option("--seed <s>", "sampling seed (same seed, same reply)", parseIntegerOption("--seed"))
        .option("--system <text>", "system prompt for a new conversation")
        .option("--threads <n>", "override the measured thread count", parseIntegerOption("--threads"))
        .option("--context-size <n>", "tokens per conversation context", parseIntegerOption("--context-size"))
        .addOption(new Option("--json", "one JSON object on stdout"))
        .action(async (options: ChatOptions) => {
            const json = options.json === true;
            let core: Core | undefined;
            try {
                const modelPath = resolveModelPath(options.model);
                if (modelPath == null)
                    throw new CleanroomError("MODEL_NOT_LOADED", "No model: pass --model <gguf> or set CLEANROOM_MODEL.");

                core = await openCore(options);
                await core.loadModel(modelPath);
                const conversationId = ensureConversation(core, options);
                if (options.prompt != null)
                    await singleTurn(core, conversationId, options, json);
                else
                    await interactive(core, conversationId, options);
            } catch (error) {
                reportError(error, json);
            } finally {
                await core?.close();
            }
        });
}

function ensureConversation(core: Core, options: ChatOptions) {
    if (options.conversation != null && core.store.find(options.conversation) != null)
        return options.conversation;

    const title = options.prompt != null ? options.prompt.slice(0, 60) : "Terminal chat";
    return core.createConversation({
        id: options.conversation,
        title,
        settings: options.system != null ? {systemPrompt: options.system} : {}
    }).id;
}

async function singleTurn(core: Core, conversationId: string, options: ChatOptions, json: boolean) {
    const result = await core.sendMessage({
        conversationId, text: options.prompt!, maxTokens: options.maxTokens, temperature: options.temperature, seed: options.seed
    }, {onText: json ? undefined : (piece) => process.stdout.write(piece)});
    const scrub = await core.closeConversation(conversationId, "close");

    if (json)
        printJson({
            conversationId,
            route: result.route,
            routeReason: result.routeReason,
            reply: result.reply,
            status: result.status,
            finishReason: result.finishReason,
            tokens: result.tokens,
            history: result.history,
            timings: result.timings,
            isolation: {...result.isolation, scrub}
        });
    else {
        process.stdout.write("\n");
        process.stderr.write(describeScrub(scrub) + "\n");
    }

    if (scrub != null && !scrub.verified)
        process.exitCode = exitCodes.securityFault;
}

async function interactive(core: Core, conversationId: string, options: ChatOptions) {
    const {conversation, messages} = core.getConversation(conversationId);
    process.stderr.write(`Conversation ${conversation.id} (${messages.length} earlier messages). /quit to leave; Ctrl+C stops a reply.\n`);
    const terminal = readline.createInterface({input: process.stdin, output: process.stdout, terminal: process.stdin.isTTY});
    let generation: AbortController | null = null;
    terminal.on("SIGINT", () => {
        if (generation != null)
            generation.abort();
        else
            terminal.close();
    });

    try {
        for (;;) {
            let line: string;
            try {
                line = await terminal.question("you> ");
            } catch {
                break; // input closed
            }
            const text = line.trim();
            if (text === "/quit" || text === "/exit")
                break;
            if (text === "")
                continue;

            generation = new AbortController();
            process.stdout.write("assistant> ");
            try {
                await core.sendMessage(
                    {conversationId, text, maxTokens: options.maxTokens, temperature: options.temperature, seed: options.seed},
                    {signal: generation.signal, onText: (piece) => process.stdout.write(piece)}
                );
            } catch (error) {
                reportError(error, false);
                process.exitCode = 0;
            } finally {
                generation = null;
                process.stdout.write("\n");
            }
        }
    } finally {
        terminal.close();
        const scrub = await core.closeConversation(conversationId, "close");
        process.stderr.write(describeScrub(scrub) + "\n");
    }
}

function describeScrub(scrub: Awaited<ReturnType<Core["closeConversation"]>>) {
    if (scrub == null)
        return "Session ended (no context was open).";
    if (!scrub.verified)
        return `SECURITY FAULT: the KV scrub of ${scrub.contextId} could not be verified (${scrub.nonZeroBytes} non-zero bytes); the context was discarded.`;

    return `Session ended: ${scrub.kvCells} KV cells zeroed, ${scrub.bytesChecked} bytes read back, ${scrub.nonZeroBytes} non-zero (${scrub.durationMs.toFixed(1)} ms).`;
}
