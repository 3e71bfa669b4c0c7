import {APIError} from "openai";

/** The HTTP status an OpenAI SDK call ends with: 200 when it succeeds, the error's status when the server refuses it. */
export async function openAiStatusOf(request: Promise<unknown>): Promise<number> {
    try {
        await request;
        return 200;
    } catch (error) {
        if (error instanceof APIError)
            return error.status ?? 0;
        throw error;
    }
}
