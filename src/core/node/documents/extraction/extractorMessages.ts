import {z} from "zod";
import {attachmentUnreadableReasons} from "./types.js";

/** What the core sends the extractor process: one file, already read and sniffed. */
export const ExtractionRequestSchema = z.discriminatedUnion("format", [
    z.object({format: z.enum(["pdf", "docx"]), name: z.string(), bytes: z.custom<Uint8Array>((value) => value instanceof Uint8Array, "bytes"), maxInflatedBytes: z.number().int().positive()}),
    z.object({format: z.literal("html"), name: z.string(), text: z.string()})
]);
export type ExtractionRequest = z.infer<typeof ExtractionRequestSchema>;

/** The extractor process's one answer. */
export const ExtractionReplySchema = z.discriminatedUnion("type", [
    z.object({
        type: z.literal("extracted"),
        pages: z.array(z.object({page: z.number().int().positive(), text: z.string()})),
        maxRssBytes: z.number().nonnegative()
    }),
    z.object({
        type: z.literal("refused"),
        reason: z.enum(attachmentUnreadableReasons),
        problem: z.string(),
        details: z.record(z.string(), z.union([z.number(), z.string()]))
    })
]);
export type ExtractionReply = z.infer<typeof ExtractionReplySchema>;
