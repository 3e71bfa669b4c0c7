import type {Core} from "../Core.js";

export type ProbeRequest = {
    systemPrompt: string,
    prompt: string,
    maxTokens: number
};

export type ProbeResult = {
    reply: string,
    generatedTokens: number,
    /** [token, probability] of the first generated token, as node-llama-cpp reports them. */
    firstTokenProbabilities: Array<[number, number]>
};

/** A fresh conversation's greedy reply and first-token distribution; its session ends (scrubbed) after. */
export async function probeGreedyReply(core: Core, request: ProbeRequest): Promise<ProbeResult> {
    const conversation = core.createConversation({title: "probe", settings: {systemPrompt: request.systemPrompt}});
    const result = await core.sendMessage(
        {conversationId: conversation.id, text: request.prompt, maxTokens: request.maxTokens, temperature: 0, route: "local"},
        {captureFirstTokenProbabilities: true}
    );
    await core.closeConversation(conversation.id, "selftest");
    return {
        reply: result.reply,
        generatedTokens: result.tokens.generated,
        firstTokenProbabilities: result.firstTokenProbabilities ?? []
    };
}

/** Exact comparison: same reply text and bit-identical probabilities (doubles survive JSON unchanged). */
export function compareProbes(inProcess: ProbeResult, fresh: ProbeResult) {
    const sameReply = inProcess.reply === fresh.reply;
    const a = inProcess.firstTokenProbabilities;
    const b = fresh.firstTokenProbabilities;
    let differing = a.length === b.length ? 0 : Math.max(a.length, b.length);
    if (a.length === b.length)
        for (let index = 0; index < a.length; index++)
            if (a[index]![0] !== b[index]![0] || !Object.is(a[index]![1], b[index]![1]))
                differing++;

    return {identical: sameReply && differing === 0 && a.length > 0, sameReply, probabilities: a.length, differingProbabilities: differing};
}
