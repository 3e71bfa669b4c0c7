import {InvalidInputError} from "../../common/errors.js";
import {ConversationExportFileSchema} from "../../common/api/schemas.js";
import type {ConversationExportFile} from "../../common/api/types.js";
import {describeZodIssues} from "../../common/describeZodIssues.js";

// Apart from conversationExport.ts, and imported by Core at the first import: its schema is most of
// the API's, which a process that imports nothing need not build (#25 item 1).

/** Reads a JSON export back; INVALID_INPUT, saying what is wrong, for anything else. */
export function parseConversationExport(text: string): ConversationExportFile {
    let json: unknown;
    try {
        json = JSON.parse(text);
    } catch (error) {
        throw new InvalidInputError("the import file", [`it is not JSON (${error instanceof Error ? error.message : String(error)})`]);
    }
    const parsed = ConversationExportFileSchema.safeParse(json);
    if (!parsed.success)
        throw new InvalidInputError("the import file", describeZodIssues(parsed.error.issues, {whole: "file"}));
    return parsed.data;
}
