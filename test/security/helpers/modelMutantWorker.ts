/**
 * Fuzz worker, run as a child process (`node modelMutantWorker.mjs <model> <seed> <from> <to> <dir>`, compiled in the test build: test/setup/testBundle.ts).
 * For each mutant index in [from, to): builds the mutant, hands it to the real engine
 * (validateModelFile, then llama.cpp), and when it loads, runs a 4-token turn and ends the
 * session (scrub). Protocol on fd 3, one JSON object a line: `start` before each mutant, `result`
 * after it, `done` at the end. A native crash shows up as the process dying after a `start`.
 */
import fs from "node:fs";
import path from "node:path";
import {CleanroomError} from "../../../src/core/common/errors.js";
import {ConversationSettingsSchema} from "../../../src/core/common/types.js";
import {AuditLog} from "../../../src/core/node/audit/AuditLog.js";
import {LocalEngine} from "../../../src/core/node/engine/LocalEngine.js";
import {loadLlama} from "../../../src/core/node/engine/loadLlama.js";
import {parseGgufLayout} from "./ggufLayout.js";
import {makeModelMutant} from "./modelMutants.js";

export type WorkerLine =
    | {event: "ready"}
    | {event: "start", index: number, kind: string, detail: string, bytes: number}
    | {event: "result", index: number, outcome: "refused", code: string, message: string, stage: "validate" | "llama.cpp", ms: number}
    | {event: "result", index: number, outcome: "loaded", turn: "ok" | string, ms: number}
    | {event: "result", index: number, outcome: "unexpected", name: string, message: string, ms: number}
    | {event: "done"};

const protocolFd = 3;

function emit(line: WorkerLine) {
    fs.writeSync(protocolFd, JSON.stringify(line) + "\n");
}

const [modelPath, seedText, fromText, toText, dir] = process.argv.slice(2);
if (modelPath == null || seedText == null || fromText == null || toText == null || dir == null)
    throw new Error("usage: modelMutantWorker <model> <seed> <from> <to> <dir>");

const original = fs.readFileSync(modelPath);
const layout = parseGgufLayout(original);
const llama = await loadLlama();
const settings = ConversationSettingsSchema.parse({systemPrompt: ""});
emit({event: "ready"});

for (let index = Number(fromText); index < Number(toText); index++) {
    const mutant = makeModelMutant(original, layout, Number(seedText), index);
    const file = path.join(dir, `mutant-${index}.gguf`);
    fs.writeFileSync(file, mutant.bytes);
    emit({event: "start", index, kind: mutant.kind, detail: mutant.detail, bytes: mutant.bytes.length});

    if (process.env.CLEANROOM_FUZZ_ABORT_AT === String(index))
        process.abort(); // harness self-check: a native abort must be seen as a crash on this mutant

    const engine = new LocalEngine(llama, new AuditLog(null), null, {threads: 1, contextSize: 128});
    const started = performance.now();
    const ms = () => Math.round(performance.now() - started);
    try {
        await engine.loadModel(file);
        let turn = "ok";
        try {
            const input = {conversationId: "fuzz", settings, history: [], userText: "Once upon a time", maxTokens: 4, temperature: 0, seed: 1};
            await engine.runTurn(input, engine.preparePrompt(input));
            await engine.endSession("fuzz", "close");
        } catch (error) {
            turn = error instanceof CleanroomError ? `refused: ${error.code}` : `threw: ${error instanceof Error ? error.message : String(error)}`;
        }
        emit({event: "result", index, outcome: "loaded", turn, ms: ms()});
    } catch (error) {
        if (error instanceof CleanroomError && error.code.startsWith("MODEL_"))
            emit({
                event: "result", index, outcome: "refused", code: error.code, message: error.message,
                stage: error.code === "MODEL_LOAD_FAILED" ? "llama.cpp" : "validate", ms: ms()
            });
        else
            emit({
                event: "result", index, outcome: "unexpected", name: error instanceof Error ? error.name : typeof error,
                message: error instanceof Error ? error.message : String(error), ms: ms()
            });
    } finally {
        await engine.dispose().catch(() => undefined);
        fs.rmSync(file, {force: true});
    }
}
emit({event: "done"});
