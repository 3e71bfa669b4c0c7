import type {ConversationExportFile} from "../../common/api/types.js";
import type {Conversation, Message} from "../../common/types.js";
import type {AttachmentWithText} from "../documents/AttachmentStore.js";
import {pagesFromText} from "../documents/documentPrompt.js";

type ExportedConversation = ConversationExportFile["conversations"][number];

/** One conversation as it is exported: its shown branch (older versions kept by edits stay in the app), with each message's documents. */
export function exportedConversation(conversation: Conversation, messages: Message[], documents: readonly AttachmentWithText[] = []): ExportedConversation {
    return {
        title: conversation.title,
        policy: conversation.policy,
        pinned: conversation.pinned,
        createdAt: conversation.createdAt,
        messages: messages.filter((message) => message.status !== "blocked").map((message) => ({
            role: message.role, content: message.content, status: message.status,
            route: message.route, tokens: message.tokens, createdAt: message.createdAt,
            ...exportedAttachments(documents.filter((document) => document.messageId === message.id))
        }))
    };
}

function exportedAttachments(documents: readonly AttachmentWithText[]) {
    return documents.length === 0 ? {} : {attachments: documents.map((document) => ({
        name: document.name, format: document.format, bytes: document.bytes, tokens: document.tokens, mode: document.mode,
        pages: pagesFromText(document.text).map((page) => page.text)
    }))};
}

/** The JSON export file, which `parseConversationExport` reads back. */
export function conversationsToJson(conversations: ExportedConversation[], exportedAt = Date.now()): string {
    const file: ConversationExportFile = {format: "cleanroom.conversations", version: 1, exportedAt, conversations};
    return JSON.stringify(file, null, 2) + "\n";
}

/** Readable Markdown: a heading per conversation, one per message with who wrote it and when. */
export function conversationsToMarkdown(conversations: ExportedConversation[]): string {
    return conversations.map((conversation) => [
        `# ${conversation.title}`,
        "",
        `_${conversation.policy === "local" ? "Local only" : "Cloud allowed"} · started ${new Date(conversation.createdAt).toISOString()}_`,
        "",
        ...conversation.messages.flatMap((message) => [
            `## ${message.role === "user" ? "You" : "Assistant"}${message.status === "interrupted" ? " (stopped)" : ""}`,
            "",
            message.content,
            ...(message.attachments ?? []).map((attachment) => `\n_Attached: ${attachment.name} (${attachment.pages.length} page${attachment.pages.length === 1 ? "" : "s"}, ${attachment.bytes} bytes)_`),
            ""
        ])
    ].join("\n")).join("\n---\n\n");
}

/** A file name for an export: the title's letters and digits, or `cleanroom-conversations`. */
export function exportFileName(title: string | null, format: "markdown" | "json"): string {
    const stem = title == null ? "cleanroom-conversations" : title.normalize("NFKD").replace(/[^A-Za-z0-9]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 60).toLowerCase() || "conversation";
    return `${stem}.${format === "markdown" ? "md" : "json"}`;
}

export const exportMimeTypes = {markdown: "text/markdown", json: "application/json"} as const satisfies Record<string, string>;
