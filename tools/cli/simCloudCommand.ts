import type {Command} from "commander";
import * as z from "zod";
import {SeedSchema} from "../../src/core/common/api/limits.js";
import {fillerText} from "../endpointAudit/fillerText.js";
import {SeededRandom} from "../cloudSim/SeededRandom.js";
import type {SharedCloudSimulator} from "../cloudSim/SharedCloudSimulator.js";
import {simFaults, simModes, type SimFault, type SimMode} from "../cloudSim/types.js";
import {InvalidOptionError} from "../../src/cli/InvalidOptionError.js";
import {numberOption} from "../../src/cli/optionParsers.js";
import {reportError} from "../../src/cli/output.js";

const PortSchema = z.number().int().min(0).max(65_535);
const TokenCountSchema = z.number().int().min(1).max(100_000_000);
const LeakRateSchema = z.number().min(0).max(1);
const OtherTenantsSchema = z.number().int().min(0).max(64);
/** Modes whose leaks need other tenants' data in the KV memory to be seen at once. */
const leakingModes: readonly SimMode[] = ["incident", "random-leak", "paraphrase"];
const defaultOtherTenants = 3;

type SimCloudCommandOptions = {
    port: number,
    mode: SimMode,
    seed?: number,
    model?: string,
    echo?: boolean,
    poolTokens?: number,
    pageTokens?: number,
    advertisedContext?: number,
    leakRate?: number,
    faults?: SimFault[],
    otherTenants?: number
};

/** `cleanroom sim-cloud`: the shared-cloud simulator, for tests and demos. Runs until SIGINT/SIGTERM. */
export function registerSimCloudCommand(program: Command) {
    program.command("sim-cloud")
        .description("Run the multi-tenant shared-cloud simulator (OpenAI-compatible) on 127.0.0.1 until interrupted")
        .requiredOption("--port <p>", "port on 127.0.0.1 (0: any free port)", numberOption("--port", PortSchema))
        .requiredOption("--mode <mode>", `one of ${simModes.join(", ")}`, parseMode)
        .option("--seed <s>", "seed for every choice the simulator makes (default: 1)", numberOption("--seed", SeedSchema))
        .option("--model <gguf>", "GGUF model to generate with (default: $CLEANROOM_MODEL, else a synthetic generator)")
        .option("--pool-tokens <n>", "KV memory shared by all tenants, in tokens (default: 4096)", numberOption("--pool-tokens", TokenCountSchema))
        .option("--page-tokens <n>", "tokens per KV page (default: 64)", numberOption("--page-tokens", TokenCountSchema))
        .option("--advertised-context <n>", "context length advertised (default: the pool; incident: pool x 1M/681K)",
            numberOption("--advertised-context", TokenCountSchema))
        .option("--leak-rate <r>", "leak chance per request for random-leak and paraphrase (default: 0.1)", numberOption("--leak-rate", LeakRateSchema))
        .option("--faults <list>", `faulty mode: comma-separated, taken in turn (${simFaults.join(", ")})`, parseFaults)
        .option("--other-tenants <n>", `tenants whose requests are in the KV memory from the start (default: ${defaultOtherTenants} in ` +
            `${leakingModes.join(", ")}, else 0)`, numberOption("--other-tenants", OtherTenantsSchema))
        .option("--echo", "reply with \"You said: \" and the last message instead of generated text (e.g. to see a redacted secret's placeholder come back)")
        .action(async (options: SimCloudCommandOptions) => {
            try {
                const modelPath = options.model ?? process.env.CLEANROOM_MODEL;
                const {SharedCloudSimulator} = await import("../cloudSim/SharedCloudSimulator.js"); // its server and model: only here
                const simulator = await SharedCloudSimulator.start({
                    port: options.port,
                    mode: options.mode,
                    seed: options.seed,
                    modelPath: modelPath != null && modelPath !== "" ? modelPath : undefined,
                    poolTokens: options.poolTokens,
                    pageTokens: options.pageTokens,
                    advertisedContext: options.advertisedContext,
                    leakRate: options.leakRate,
                    faults: options.faults,
                    otherTenants: options.otherTenants ?? (leakingModes.includes(options.mode) ? defaultOtherTenants : 0),
                    reply: options.echo === true ? "echo" : "generate"
                });
                process.stdout.write(describeSimulator(simulator, options));

                await new Promise<void>((resolve) => {
                    process.once("SIGINT", resolve);
                    process.once("SIGTERM", resolve);
                });
                await simulator.close();
            } catch (error) {
                reportError(error, false);
            }
        });
}

function parseMode(value: string): SimMode {
    if (!(simModes as readonly string[]).includes(value))
        throw new InvalidOptionError("--mode", value, `one of ${simModes.join(", ")}`, {mustBe: true});
    return value as SimMode;
}

function parseFaults(value: string): SimFault[] {
    const faults = value.split(",").map((fault) => fault.trim()).filter((fault) => fault !== "");
    for (const fault of faults) {
        if (!(simFaults as readonly string[]).includes(fault))
            throw new InvalidOptionError("--faults", value, `a comma-separated list of ${simFaults.join(", ")}`, {mustBe: true});
    }
    return faults as SimFault[];
}

/**
 * What someone starting the simulator needs to point a client at it: the URL (alone on the
 * first line, for scripts), the model id, the API-key rule, how it counts tokens, and what its
 * mode does, with sizes in tokens and in characters of English as its tokenizer counts them.
 */
function describeSimulator(sim: SharedCloudSimulator, options: SimCloudCommandOptions) {
    const random = new SeededRandom(1);
    const sample = fillerText(() => random.next(), 4000);
    const charsPerToken = sample.length / Math.max(1, sim.countTokens(sample));
    const chars = (tokens: number) => (Math.round(tokens * charsPerToken / 100) * 100).toLocaleString("en-US");
    const origin = new URL(sim.url).origin;
    const modes: Record<SimMode, string> = {
        "honest": `Requests needing more than ${sim.advertisedContext} tokens (prompt + max_tokens) are refused with HTTP 400; ` +
            "each request's KV pages are zeroed after it.",
        "incident": `A request needing ${sim.poolTokens + 1} to ${sim.advertisedContext} tokens (prompt + max_tokens; ` +
            `about ${chars(sim.poolTokens)} to ${chars(sim.advertisedContext)} characters of English) does not fit the KV memory\n` +
            "             and is answered with HTTP 200 from other tenants' stale KV pages. More is refused with HTTP 400.",
        "random-leak": `Each request leaks a stale run of KV pages of an earlier request with chance ${options.leakRate ?? 0.1}.`,
        "paraphrase": `Each request leaks a stale run of KV pages with chance ${options.leakRate ?? 0.1}, its case, spacing and punctuation changed.`,
        "truncate": "Long prompts lose their start silently; the usage reported counts only what was kept.",
        "faulty": "Requests fail in turn: HTTP 5xx, stalls, cut streams, malformed stream events."
    };
    return [
        sim.url,
        `Shared-cloud simulator, mode ${sim.mode}.`,
        `  Model id:  ${sim.modelName}${sim.textModel === "synthetic" ? " (a synthetic word generator; --model <gguf> for a real model)" : ""}`,
        "  API key:   any non-empty key, as \"Authorization: Bearer <key>\"; each distinct key is one tenant.",
        `  Tokens:    POST ${origin}/tokenize {"content": "…"} counts as this server does ` +
            `(${sim.textModel === "synthetic" ? "synthetic: " : ""}about ${charsPerToken.toFixed(1)} characters per token of English).`,
        `  Memory:    KV memory for ${sim.poolTokens} tokens, shared by all tenants; it advertises a context of ${sim.advertisedContext} tokens.`,
        `  Mode:      ${modes[sim.mode]}`,
        `  Others:    ${sim.otherTenants} other tenants' earlier requests are in the KV memory.`,
        "Stop with Ctrl+C.",
        ""
    ].join("\n");
}
