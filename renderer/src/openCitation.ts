import type {Citation} from "../../src/core/common/api/documentSchemas.js";
import type {CitedText} from "./components/Citations.js";
import type {AppCoreClient} from "./transport/AppCoreClient.js";

/** Reads a citation's text from the conversation's stored documents (the core refuses another conversation's). */
export async function openCitation(client: AppCoreClient, conversationId: string, citation: Citation): Promise<CitedText> {
    return citation.kind === "passage"
        ? {kind: "passage", passage: await client.call("documents.passage", {conversationId, chunkId: citation.chunkId})}
        : {kind: "document", document: await client.call("documents.document", {conversationId, attachmentId: citation.attachmentId})};
}
