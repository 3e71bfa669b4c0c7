import type {Command} from "commander";
import {z} from "zod";
import {SeedSchema} from "../../core/common/api/limits.js";
import {SharedCloudSimulator} from "../../core/node/cloud/sim/SharedCloudSimulator.js";
import {simFaults, simModes, type SimFault, type SimMode} from "../../core/node/cloud/sim/types.js";
import {InvalidOptionError} from "../InvalidOptionError.js";
import {numberOption} from "../optionParsers.js";
import {reportError} from "../output.js";

const PortSchema = z.number().int().min(0).max(65_535);
const TokenCountSchema = z.number().int().min(1).max(100_000_000);
const LeakRateSchema = z.number().min(0).max(1);

type SimCloudCommandOptions = {
    port: number,
    mode: SimMode,
    seed?: number,
    model?: string,
    poolTokens?: number,
    pageTokens?: number,
    advertisedContext?: number,
    leakRate?: number,
    faults?: SimFault[]
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
        .action(async (options: SimCloudCommandOptions) => {
            try {
                const modelPath = options.model ?? process.env.CLEANROOM_MODEL;
                const simulator = await SharedCloudSimulator.start({
                    port: options.port,
                    mode: options.mode,
                    seed: options.seed,
                    modelPath: modelPath != null && modelPath !== "" ? modelPath : undefined,
                    poolTokens: options.poolTokens,
                    pageTokens: options.pageTokens,
                    advertisedContext: options.advertisedContext,
                    leakRate: options.leakRate,
                    faults: options.faults
                });
                process.stdout.write(`${simulator.url}\n`);

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
