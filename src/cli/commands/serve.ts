import os from "node:os";
import type {Command} from "commander";
import * as z from "zod";
import {ContextSizeSchema, ThreadsSchema} from "../../core/common/api/limits.js";
import type {GpuSetting} from "../../core/common/api/types.js";
import {CleanroomError} from "../../core/common/errors.js";
import type {Core} from "../../core/node/Core.js";
import {startupThreadpoolSize} from "../../core/node/engine/startupThreadpoolSize.js";
import {apiModelName} from "../../core/node/serving/apiModelName.js";
import {gpuOption, gpuOptionDescription, numberOption, textOption} from "../optionParsers.js";
import {reportError, reportWarning} from "../output.js";

type ServeOptions = {
    host: string,
    port: number,
    model?: string,
    embeddingModel?: string,
    apiKey: string[],
    storedKeys: boolean,
    parallel?: number,
    cacheIdle: number,
    db?: string,
    threads?: number,
    contextSize?: number,
    gpu?: GpuSetting
};

const PortSchema = z.number().int().min(0).max(65_535);
const ParallelSchema = z.number().int().min(1).max(64);
/** Seconds a `cache_salt` reuse cache is kept unused: at most the pool's own idle scrub (10 minutes). */
const CacheIdleSchema = z.number().min(0.1).max(600);
/** Contexts serve keeps created ahead, so that a request does not wait for its own to be made (docs/local-server.md). */
const serveFreshContextReserve = 2;
const ApiKeySchema = z.string().min(8, "a key has at least 8 characters").max(512, "a key has at most 512 characters")
    .regex(/^\S+$/, "a key cannot hold spaces");

function apiKeyOption(given: string, previous: string[] = []) {
    return [...previous, textOption("--api-key", ApiKeySchema, {private: true})(given)];
}

export function registerServeCommand(program: Command) {
    program.command("serve")
        .description("Serve the model to other apps as an OpenAI-compatible API: every request in a context of its own, scrubbed when it ends")
        .option("--host <address>", "address to listen on; other than loopback only with --api-key", "127.0.0.1")
        .option("--port <n>", "port (0 picks a free one)", numberOption("--port", PortSchema), 1234)
        .option("--model <gguf>", "GGUF model file (default: $CLEANROOM_MODEL)")
        .option("--embedding-model <gguf>", "GGUF embedding model for POST /v1/embeddings (default: the one chosen with `settings embedding-model set`)")
        .option("--api-key <key>", "a key clients send as `Authorization: Bearer <key>` (repeatable; each key a tenant)", apiKeyOption, [])
        .option("--no-stored-keys", "without --api-key, do not use the keys made in the app (Settings → Local API server)")
        .option("--parallel <n>", "requests served at once, more are answered 429 (default: 4, at most what the memory budget holds)",
            numberOption("--parallel", ParallelSchema))
        .option("--cache-idle <seconds>", "how long a client's cache_salt cache (same key, same salt) is kept unused before it is scrubbed",
            numberOption("--cache-idle", CacheIdleSchema), 300)
        .option("--db <file>", "SQLite database for the audit (default: the app's data folder)")
        .option("--threads <n>", "override the measured thread count", numberOption("--threads", ThreadsSchema))
        .option("--context-size <n>", "tokens per request context (rounded up to a multiple of 256)", numberOption("--context-size", ContextSizeSchema))
        .option("--gpu <backend>", gpuOptionDescription, gpuOption)
        .action(async (options: ServeOptions) => {
            let core: Core | undefined;
            try {
                const [{openCore, requireCliModel}, {startApiServer, checkListenAddress, defaultApiParallel}, {describeRequestEnd, describeCacheEnd, describeEmbeddingsEnd}, {ApiKeyRing}, {describeServing},
                    {serveThreadsInAll, describeServeThreading}] = await Promise.all([
                    import("../openCore.js"), import("../../serve/startApiServer.js"), import("../../serve/describeRequestEnd.js"), import("../../serve/ApiKeyRing.js"),
                    import("../../serve/describeServing.js"), import("../../serve/serveThreading.js")
                ]);
                const useStoredKeys = options.apiKey.length === 0 && options.storedKeys;
                if (!useStoredKeys)
                    checkListenAddress(options.host, options.apiKey.length);
                const modelPath = requireCliModel(options.model);
                // Its libuv pool was set when the process started: the core's 1, or a UV_THREADPOOL_SIZE of the user's.
                const threadsInAll = serveThreadsInAll(startupThreadpoolSize(), os.availableParallelism());
                core = await openCore({
                    db: options.db, threads: options.threads, contextSize: options.contextSize, gpu: options.gpu, freshContextReserve: serveFreshContextReserve,
                    maxThreads: threadsInAll ?? undefined
                });
                if (options.embeddingModel != null)
                    core.useEmbeddingModel(options.embeddingModel);
                const opened = core;
                // Without --api-key, the keys made in the app (stored hashed), read at each request: one revoked there is refused here too.
                const keys = new ApiKeyRing(useStoredKeys ? {stored: () => opened.apiKeys.hashes()} : options.apiKey);
                checkListenAddress(options.host, keys.size);
                const info = await core.loadModel(modelPath);
                if (info.contextSizeNotice != null)
                    reportWarning({code: "CONTEXT_SIZE_CAPPED", message: info.contextSizeNotice}, false);
                if (options.parallel != null && options.parallel > info.poolCapacity)
                    throw new CleanroomError("INVALID_INPUT",
                        `--parallel ${options.parallel} is refused: the memory budget holds ${info.poolCapacity} contexts of this model at once.`,
                        {option: "--parallel", value: options.parallel, poolCapacity: info.poolCapacity});

                const parallel = options.parallel ?? Math.min(defaultApiParallel, info.poolCapacity);

                core.onApiCacheEnd.createListener((end) => process.stderr.write(describeCacheEnd(end) + "\n"));
                const server = await startApiServer({
                    core, modelName: apiModelName(modelPath), host: options.host, port: options.port,
                    keys, parallel,
                    cacheIdleMs: options.cacheIdle * 1000,
                    onRequestEnd: (report) => process.stderr.write(describeRequestEnd(report) + "\n"),
                    onEmbedded: (result, tenant) => process.stderr.write(describeEmbeddingsEnd(tenant, result) + "\n"),
                    onClientLeft: (requestId, tenant) => process.stderr.write(`${requestId} (${tenant}): the client disconnected; its generation is stopped.\n`)
                });
                process.stdout.write(server.baseUrl + "\n");
                process.stderr.write(describeServing({modelName: apiModelName(modelPath), embeddingModelName: core.apiEmbeddingModelName, endpoints: server.endpoints}) + "\n");
                process.stderr.write(describeServeThreading({
                    threadpoolSize: info.uvThreadpoolSize, parallel, threadsPerContext: Math.min(info.threads, threadsInAll ?? info.threads), threadsInAll
                }) + "\n");

                await new Promise<void>((resolve) => {
                    // Later signals are ignored while the sessions are scrubbed: the default handler would kill the process mid-scrub.
                    process.on("SIGINT", () => resolve());
                    process.on("SIGTERM", () => resolve());
                });
                process.stderr.write("Stopping: requests in flight are stopped, every context is scrubbed.\n");
                await server.close();
                const closing = core;
                core = undefined;
                await closing.dispose();
                process.stderr.write("Stopped: every context was scrubbed and verified.\n");
            } catch (error) {
                reportError(error, false);
            } finally {
                await core?.dispose().catch((error: unknown) => reportError(error, false));
            }
            process.exit(process.exitCode ?? 0);
        });
}
