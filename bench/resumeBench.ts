import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {Command} from "commander";
import {Core} from "../src/core/node/Core.js";
import {createCoreServices} from "../src/core/node/createCoreServices.js";
import {loadLlama} from "../src/core/node/engine/loadLlama.js";
import {GpuSettingSchema} from "../src/core/common/api/schemas.js";
import {median, round} from "./stats.js";
import {synthetic86m, writeSyntheticModel} from "./syntheticModel.js";

type Options = {gpu?: string, model?: string, tokenizer: string, historyTokens: number, rounds: number, threads: number, out: string, json?: boolean};

const program = new Command()
    .description("Resume a long conversation after its session ended: restoring its sealed KV snapshot against evaluating its history again")
    .option("--model <gguf>", "model to measure; default: the synthetic 86M model with an 8K context, written on first use")
    .option("--tokenizer <gguf>", "tokenizer of the synthetic model", process.env.CLEANROOM_TEST_MODEL ?? path.resolve("../shared/models/stories260K.gguf"))
    .option("--history-tokens <n>", "prompt tokens of the conversation resumed", (value) => Number(value), 4000)
    .option("--rounds <n>", "resumes measured each way, alternating", (value) => Number(value), 5)
    .option("--gpu <setting>", "auto, vulkan, cuda, metal or off (the CPU); default: the app's (CLEANROOM_GPU, else auto)")
    .option("--threads <n>", "threads of the engine", (value) => Number(value), os.availableParallelism())
    .option("--out <file>", "also write the JSON report here", "bench-results/resume.json")
    .option("--json", "print the JSON report on stdout instead of the table");
program.parse();
const options = program.opts<Options>();
const log = (line: string) => (options.json === true ? process.stderr : process.stdout).write(line + "\n");
const command = `npm run bench:resume -- ${process.argv.slice(2).join(" ")}`.trim();

const modelPath = options.model ?? path.resolve("bench-results/synthetic-86m-ctx8k.gguf");
if (options.model == null && !fs.existsSync(modelPath)) {
    log(`Writing the synthetic model to ${modelPath}...`);
    writeSyntheticModel(modelPath, {tokenizerFrom: options.tokenizer, ...synthetic86m, contextLength: 8192});
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cleanroom-bench-resume-"));
const services = createCoreServices(await loadLlama(options.gpu == null ? undefined : GpuSettingSchema.parse(options.gpu)), {
    database: path.join(dir, "bench.db"),
    engine: {threads: options.threads, contextSize: options.historyTokens + 512, pool: {idleTimeoutMs: 0}}
});
const core = new Core(services);
const words = "the little girl found a red ball in the garden and she ran to show her mother who smiled at her".split(" ");

try {
    await core.loadModel(modelPath);
    const conversation = core.createConversation({title: "A long one"});
    const question = "What did the girl do next?";
    const promptTokens = () => services.engine.preparePrompt({
        settings: conversation.settings, userText: question, maxTokens: 1,
        history: services.store.messages(conversation.id).map((message) => ({role: message.role, content: message.content}))
    }).tokens.length;
    for (let index = 0; promptTokens() < options.historyTokens; index++)
        services.store.appendMessage(conversation.id, {
            role: index % 2 === 0 ? "user" : "assistant", status: "complete",
            content: Array.from({length: 40}, (_, word) => words[(index * 3 + word) % words.length]).join(" ")
        });

    /** One resumed turn (first token only) from a session that ended, the turn then taken back so that each round resumes the same history. */
    const resumeOnce = async () => {
        const started = performance.now();
        const outcome = await core.sendMessage({conversationId: conversation.id, text: question, maxTokens: 1, temperature: 0, route: "local"});
        const ms = performance.now() - started;
        core.rewindToLastPrompt(conversation.id);
        return {ms, evaluated: outcome.tokens.evaluated, prompt: outcome.tokens.prompt};
    };
    const endSession = async (reason: "evict" | "close") => {
        const started = performance.now();
        await services.engine.endSession(conversation.id, reason);
        return performance.now() - started;
    };
    const snapshotBytes = () => (services.database.prepare("SELECT length(sealed) AS bytes FROM kv_snapshots WHERE conversation_id = ?")
        .get(conversation.id) as {bytes: number} | undefined)?.bytes ?? 0;

    await resumeOnce(); // builds the context once (and warms the engine)
    const figures = {restoreMs: [] as number[], reevaluateMs: [] as number[], endWithSaveMs: [] as number[], endWithoutSaveMs: [] as number[]};
    let restoredEvaluated = 0;
    let prompt = 0;
    let sealedBytes = 0;
    for (let round_ = 0; round_ < options.rounds; round_++) {
        for (const way of round_ % 2 === 0 ? ["restore", "reevaluate"] as const : ["reevaluate", "restore"] as const) {
            if (way === "restore") {
                figures.endWithSaveMs.push(await endSession("evict"));
                sealedBytes = snapshotBytes();
                const {ms, evaluated, prompt: tokens} = await resumeOnce();
                figures.restoreMs.push(ms);
                restoredEvaluated = evaluated;
                prompt = tokens;
            } else {
                figures.endWithoutSaveMs.push(await endSession("close"));
                services.database.prepare("DELETE FROM kv_snapshots WHERE conversation_id = ?").run(conversation.id);
                figures.reevaluateMs.push((await resumeOnce()).ms);
            }
            log(`  round ${round_ + 1} ${way}: ${round(way === "restore" ? figures.restoreMs.at(-1)! : figures.reevaluateMs.at(-1)!)} ms`);
        }
    }
    const restored = core.auditEvents({conversationId: conversation.id, kinds: ["kv.restored"]});
    const medians = Object.fromEntries(Object.entries(figures).map(([name, values]) => [name, round(median(values))])) as Record<keyof typeof figures, number>;
    const report = {
        when: new Date().toISOString(),
        command,
        machine: {cpus: os.cpus().length, cpu: os.cpus()[0]?.model ?? "unknown", node: process.version, loadAverage: os.loadavg().map((value) => round(value))},
        model: services.engine.info == null ? modelPath : {path: modelPath, parameters: services.engine.info.parameters, llamaBuild: services.engine.info.llamaBuild},
        threads: options.threads,
        gpu: services.engine.info?.gpu ?? "cpu",
        gpuDevice: services.engine.info?.gpuDevice ?? null,
        rounds: options.rounds,
        promptTokens: prompt,
        restoredTurn: {evaluatedTokens: restoredEvaluated, restores: restored.length},
        snapshotBytes: sealedBytes,
        medians,
        speedup: round(medians.reevaluateMs / medians.restoreMs, 1),
        saveCostMs: round(medians.endWithSaveMs - medians.endWithoutSaveMs),
        notes: "restore/reevaluate: wall time of the resumed turn to its first token (sendMessage, maxTokens 1) after the session ended; " +
            "end with/without save: the session end by eviction (snapshot sealed and stored, then the scrub) against a close (the scrub alone)"
    };
    fs.mkdirSync(path.dirname(path.resolve(options.out)), {recursive: true});
    fs.writeFileSync(options.out, JSON.stringify(report, null, 2) + "\n");
    if (options.json === true)
        process.stdout.write(JSON.stringify(report, null, 2) + "\n");
    else {
        log(`Resume a ${prompt}-token conversation (${path.basename(modelPath)}, ${report.gpu}, ${options.threads} threads, load ${report.machine.loadAverage.join(" ")}), median of ${options.rounds}:`);
        log(`  restore the sealed snapshot   ${String(medians.restoreMs).padStart(9)} ms  (${restoredEvaluated} tokens evaluated, snapshot ${round(sealedBytes / 2 ** 20, 1)} MiB)`);
        log(`  evaluate the history again    ${String(medians.reevaluateMs).padStart(9)} ms  (${prompt} tokens)`);
        log(`  speedup                       ${String(report.speedup).padStart(9)} x`);
        log(`  session end: save + scrub ${medians.endWithSaveMs} ms, scrub alone ${medians.endWithoutSaveMs} ms`);
        log(`Report: ${options.out}  (${command})`);
    }
} finally {
    await core.dispose();
    fs.rmSync(dir, {recursive: true, force: true});
}
