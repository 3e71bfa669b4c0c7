import * as z from "zod";
import {GpuSettingSchema} from "../core/common/api/schemas.js";

/** What web mode's core process is started with (one JSON argument): the core's options, never a key or a passphrase. */
export const WebCoreOptionsSchema = z.object({
    database: z.string().min(1),
    /** The model to load at start and after each unlock; null for none (`--no-model`); absent: the usual search (`resolveStartupModel`). */
    startupModel: z.string().min(1).nullable().optional(),
    /** Locks after this long idle; null never; absent: the saved idle time. */
    idleLockMs: z.number().int().nonnegative().nullable().optional(),
    threads: z.number().int().nonnegative().optional(),
    contextSize: z.number().int().nonnegative().optional(),
    gpu: GpuSettingSchema.optional(),
    modelsDir: z.string().min(1).optional(),
    catalogPath: z.string().min(1).optional(),
    allowLoopbackDownloads: z.boolean()
}).strict();
export type WebCoreOptions = z.infer<typeof WebCoreOptionsSchema>;

const HeadersSchema = z.record(z.string(), z.union([z.string(), z.array(z.string())]).optional());

/** From the process serving the page to the core process. */
export const ToWebCoreSchema = z.discriminatedUnion("type", [
    /** An upgrade the server accepted; the socket comes with the message, `head` (base64) is what was read past the request. */
    z.object({type: z.literal("connection"), request: z.object({method: z.string(), url: z.string(), headers: HeadersSchema}), head: z.string()}),
    /** End every session (scrubbed) and exit. */
    z.object({type: z.literal("shutdown")})
]);
export type ToWebCore = z.infer<typeof ToWebCoreSchema>;

/** From the core process to the process serving the page. */
export const FromWebCoreSchema = z.discriminatedUnion("type", [
    /** Open (or locked) and taking connections. */
    z.object({type: z.literal("ready")}),
    /** It could not open the core; it exits with status 1. */
    z.object({type: z.literal("failed"), message: z.string()}),
    /** It locked: it closes its sockets and exits; a fresh process takes the next unlock. */
    z.object({type: z.literal("locked")})
]);
export type FromWebCore = z.infer<typeof FromWebCoreSchema>;
