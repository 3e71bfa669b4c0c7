import * as z from "zod";

/**
 * What a reply was given of the conversation's documents (#23), shown under it as citations: a
 * retrieved passage (its chunk, page and lines) or a document given whole. Names and numbers only;
 * the text is read on request (`documents.passage`, `documents.document`).
 */
export const CitationSchema = z.discriminatedUnion("kind", [
    z.object({
        kind: z.literal("passage"),
        chunkId: z.number().int(),
        attachmentId: z.number().int(),
        name: z.string(),
        page: z.number().int(),
        startLine: z.number().int(),
        endLine: z.number().int()
    }),
    z.object({
        kind: z.literal("document"),
        attachmentId: z.number().int(),
        name: z.string(),
        pages: z.number().int()
    })
]);

/** A cited passage's text as the conversation stores it, with where it sits in its document. */
export const CitedPassageSchema = z.object({
    chunkId: z.number().int(),
    attachmentId: z.number().int(),
    name: z.string(),
    page: z.number().int(),
    startLine: z.number().int(),
    endLine: z.number().int(),
    text: z.string()
});

/** A document given whole, page by page, as the conversation stores it. */
export const CitedDocumentSchema = z.object({
    attachmentId: z.number().int(),
    name: z.string(),
    pages: z.array(z.object({page: z.number().int(), text: z.string()}))
});

/**
 * One of the conversation's documents in the Isolation panel: what it is, and what of it was sent
 * where. `local`: the replies of the local model given it whole, and the passages given (each
 * retrieved chunk, once per reply). `cloud`: each cloud request that carried its whole text.
 */
export const IsolationDocumentSchema = z.object({
    attachmentId: z.number().int(),
    name: z.string(),
    bytes: z.number().int(),
    pages: z.number().int(),
    mode: z.enum(["whole", "retrieved"]),
    attachedAt: z.number(),
    local: z.object({
        repliesGivenWhole: z.number().int(),
        passagesGiven: z.number().int(),
        repliesGivenPassages: z.number().int()
    }),
    cloud: z.array(z.object({endpointHost: z.string(), at: z.number()}))
});

export type Citation = z.infer<typeof CitationSchema>;
export type CitedPassage = z.infer<typeof CitedPassageSchema>;
export type CitedDocument = z.infer<typeof CitedDocumentSchema>;
export type IsolationDocument = z.infer<typeof IsolationDocumentSchema>;
