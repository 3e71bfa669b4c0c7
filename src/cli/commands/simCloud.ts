import {InvalidArgumentError, type Command} from "commander";
import {SharedCloudSimulator} from "../../core/node/cloud/sim/SharedCloudSimulator.js";
import {simFaults, simModes, type SimFault, type SimMode} from "../../core/node/cloud/sim/types.js";
import {parseIntegerOption, parseNumberOption, reportError} from "../output.js";

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
        .requiredOption("--port <p>", "port on 127.0.0.1 (0: any free port)", parseIntegerOption("--port"))
        .requiredOption("--mode <mode>", `one of ${simModes.join(", ")}`, parseMode)
        .option("--seed <s>", "seed for every choice the simulator makes (default: 1)", parseIntegerOption("--seed"))
        .option("--model <gguf>", "GGUF model to generate with (default: $CLEANROOM_MODEL, else a synthetic generator)")
        .option("--pool-tokens <n>", "KV memory shared by all tenants, in tokens (default: 4096)", parseIntegerOption("--pool-tokens"))
        .option("--page-tokens <n>", "tokens per KV page (default: 64)", parseIntegerOption("--page-tokens"))
        .option("--advertised-context <n>", "context length advertised (default: the pool; incident: pool x 1M/681K)",
            parseIntegerOption("--advertised-context"))
        .option("--leak-rate <r>", "leak chance per request for random-leak and paraphrase (default: 0.1)", parseNumberOption("--leak-rate"))
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
        throw new InvalidArgumentError(`--mode must be one of ${simModes.join(", ")}, got "${value}"`);
    return value as SimMode;
}

function parseFaults(value: string): SimFault[] {
    const faults = value.split(",").map((fault) => fault.trim()).filter((fault) => fault !== "");
    for (const fault of faults) {
        if (!(simFaults as readonly string[]).includes(fault))
            throw new InvalidArgumentError(`--faults takes ${simFaults.join(", ")}, got "${fault}"`);
    }
    return faults as SimFault[];
}
