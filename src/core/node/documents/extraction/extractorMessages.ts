import * as z from "zod";
import {AttachmentUnreadableError, attachmentUnreadableReasons, type ExtractedPage} from "./types.js";

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

/** The pages of the extractor's answer, or the refusal it carries (or a crash, for an answer that is not one) thrown. */
export function pagesOfReply(name: string, raw: unknown): {pages: ExtractedPage[], maxRssBytes: number} {
    const reply = ExtractionReplySchema.safeParse(raw);
    if (!reply.success)
        throw new AttachmentUnreadableError(name, "extractor-crashed", "could not be read: the extractor answered something unexpected");
    if (reply.data.type === "refused")
        throw new AttachmentUnreadableError(name, reply.data.reason, reply.data.problem, reply.data.details);
    return reply.data;
}
