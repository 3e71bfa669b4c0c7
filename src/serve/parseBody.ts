import type * as z from "zod";
import {describeZodIssues} from "../core/common/describeZodIssues.js";
import {OpenAiHttpError} from "./OpenAiHttpError.js";

/** A request body parsed as JSON and validated by `schema`; OpenAI's 400 error, naming the first wrong field, otherwise. */
export function parseBody<T>(text: string, schema: z.ZodType<T>): T {
    let json: unknown;
    try {
        json = JSON.parse(text);
    } catch {
        throw new OpenAiHttpError(400, "invalid_request_error", "The request body is not valid JSON.", {code: "invalid_json"});
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        const param = issue.path.length > 0 ? issue.path.map(String).join(".") : null;
        throw new OpenAiHttpError(400, "invalid_request_error", `${describeZodIssues([issue], {whole: "The body"})[0]}.`, {param, code: "invalid_value"});
    }
    return parsed.data;
}
