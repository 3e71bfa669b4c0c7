import type {Command} from "commander";
import {SearchTextSchema} from "../../core/common/api/limits.js";
import type {ConversationStore} from "../../core/node/database/ConversationStore.js";
import type {AuditLog} from "../../core/node/audit/AuditLog.js";
import {ConversationIdSchema} from "../../core/common/types.js";
import {formatTable} from "../formatTable.js";
import {textOption} from "../optionParsers.js";
import {printJson} from "../output.js";
import {withDatabase, type DatabaseCliOptions} from "../withDatabase.js";

type Options = DatabaseCliOptions;

const purgePendingReason = "another reader holds the database, so the deleted text stays in its file and WAL until that reader is done; " +
    "Cleanroom finishes the purge at its next write to, or opening of, this database";

/** Conversation housekeeping needs no model: it opens the database alone. */
export function registerConversationsCommand(program: Command) {
    const conversations = program.command("conversations").description("List, search, show or delete stored conversations");

    conversations.command("list")
        .option("--db <file>", "SQLite database").option("--json", "JSON output")
        .action((options: Options) => withStore(options, (store) => {
            const list = store.list();
            if (options.json === true)
                printJson({conversations: list});
            else if (list.length === 0)
                process.stdout.write("No conversations.\n");
            else
                process.stdout.write(formatTable(
                    [{header: "ID"}, {header: "POLICY"}, {header: "MESSAGES", align: "right"}, {header: "UPDATED"}, {header: "TITLE"}],
                    list.map((conversation) => [
                        conversation.id, conversation.policy, String(conversation.messageCount), formatLocalTime(conversation.updatedAt), conversation.title
                    ])
                ));
        }));

    conversations.command("search")
        .argument("<text>", "words to find in titles and message text (every word; the last also as a prefix)",
            textOption("search text", SearchTextSchema, {private: true}))
        .option("--db <file>", "SQLite database").option("--json", "JSON output")
        .action((text: string, options: Options) => withStore(options, (store) => {
            const hits = store.search(text);
            if (options.json === true)
                printJson({hits});
            else if (hits.length === 0)
                process.stdout.write("No conversation matches.\n");
            else
                process.stdout.write(formatTable(
                    [{header: "ID"}, {header: "TITLE"}, {header: "FOUND IN"}, {header: "MATCH"}],
                    hits.map((hit) => [hit.conversation.id, hit.conversation.title, hit.matchedIn, hit.snippet?.replace(/\s+/g, " ") ?? ""])
                ));
        }));

    conversations.command("show")
        .argument("<id>", "conversation id", textOption("conversation id", ConversationIdSchema))
        .option("--db <file>", "SQLite database").option("--json", "JSON output")
        .action((id: string, options: Options) => withStore(options, (store, audit) => {
            const conversation = store.get(id);
            const messages = store.messages(id);
            if (options.json === true)
                printJson({conversation, messages, audit: audit.events({conversationId: id})});
            else {
                process.stdout.write(`${conversation.title} (${conversation.id}, ${conversation.policy})\n\n`);
                for (const message of messages)
                    process.stdout.write(`${message.role}${message.status !== "complete" ? ` [${message.status}]` : ""}${message.route != null ? ` via ${message.route}` : ""}:\n${message.content}\n\n`);
            }
        }));

    conversations.command("delete")
        .argument("<id>", "conversation id", textOption("conversation id", ConversationIdSchema))
        .option("--db <file>", "SQLite database").option("--json", "JSON output")
        .action((id: string, options: Options) => withStore(options, (store, audit) => {
            const {purge} = store.delete(id);
            audit.record({kind: "conversation.deleted", data: {purge}});
            if (options.json === true)
                printJson({deleted: id, purge, ...(purge === "pending" ? {purgePending: purgePendingReason} : {})});
            else
                process.stdout.write(purge === "done" ? `Deleted ${id}.\n` : `Deleted ${id}, but the purge is pending: ${purgePendingReason}.\n`);
        }));
}

/** Opens the database with its store and audit log (SQLite is loaded only now, so that `--help` never loads it). */
async function withStore(options: Options, work: (store: ConversationStore, audit: AuditLog) => void) {
    await withDatabase(options, async (db) => {
        const [{ConversationStore}, {AuditLog}] = await Promise.all([import("../../core/node/database/ConversationStore.js"), import("../../core/node/audit/AuditLog.js")]);
        const audit = new AuditLog(db);
        const store = new ConversationStore(db, {audit});
        work(store, audit);
        store.purger.dispose();
    });
}

/** "2026-10-28 14:05", in the local time zone. */
function formatLocalTime(at: number) {
    const date = new Date(at);
    const two = (value: number) => String(value).padStart(2, "0");
    return `${date.getFullYear()}-${two(date.getMonth() + 1)}-${two(date.getDate())} ${two(date.getHours())}:${two(date.getMinutes())}`;
}
