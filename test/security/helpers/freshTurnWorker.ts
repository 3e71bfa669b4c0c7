// A fresh process for one local turn: opens the given database (a copy of a test's), loads the
// model, sends one message to one conversation at temperature 0 and prints the result as JSON.
// Used to show that a turn after a cancelled one depends on the stored history only.
import {Core} from "../../../src/core/node/Core.js";
import {loadLlama} from "../../../src/core/node/engine/loadLlama.js";
import {asLocalTurn} from "../../helpers/coreServices.js";

export type FreshTurnRequest = {
    database: string,
    modelPath: string,
    conversationId: string,
    text: string,
    maxTokens: number,
    contextSize: number,
    prefillChunkTokens: number
};

export type FreshTurnResult = {reply: string, tokens: {prompt: number, evaluated: number, reused: number, generated: number}, contextCreated: boolean};

const request = JSON.parse(process.argv[2]!) as FreshTurnRequest;
const core = Core.create(await loadLlama(), {
    database: request.database,
    engine: {threads: 1, contextSize: request.contextSize, prefillChunkTokens: request.prefillChunkTokens, pool: {idleTimeoutMs: 0}}
});
await core.loadModel(request.modelPath);
const created: boolean[] = [];
core.onAuditEvent((event) => void (event.kind === "context.created" && created.push(true)));
const result = asLocalTurn(await core.sendMessage({conversationId: request.conversationId, text: request.text, maxTokens: request.maxTokens, temperature: 0}));
await core.dispose();
process.stdout.write(JSON.stringify({reply: result.reply, tokens: result.tokens, contextCreated: created.length === 1} satisfies FreshTurnResult) + "\n");
