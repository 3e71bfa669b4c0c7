import {CanaryScanner} from "../../common/cloud/CanaryScanner.js";
import type {FingerprintMatcher} from "../../common/cloud/fingerprints.js";
import {plantCanaries} from "../../common/cloud/plantCanaries.js";
import type {ScanFinding} from "../../common/cloud/types.js";
import {CleanroomError} from "../../common/errors.js";
import type {CloudVerdict} from "../../common/types.js";
import type {CanaryLedger} from "./CanaryLedger.js";
import type {CloudChatMessage, CloudClient, CloudStreamEvent, CloudTokenCount} from "./CloudClient.js";

export type GuardedCloudTurnInput = {
    client: CloudClient,
    ledger: CanaryLedger,
    conversationId: string,
    requestId: string,
    messages: CloudChatMessage[],
    maxTokens: number,
    /** The conversation's `cache_salt`, sent to endpoints that take it. Defaults to none. */
    cacheSalt?: string,
    fingerprints?: FingerprintMatcher,
    /** One more canary per this many characters of long messages. Defaults to `1500`. */
    charsPerCanary?: number,
    /**
     * Characters held back beyond the scanner's own scan-ahead (which already keeps back a
     * canary, or a fingerprint run, and the 8 words before it until they are judged: `scanAhead`
     * of `CanaryScanner`). A longer hold-back keeps more of a leaked page before its canary
     * from the screen (the canary spacing, 1500 characters, would keep all of it), at the cost
     * of replies shorter than it appearing only when they end. Defaults to `0`.
     */
    holdBackChars?: number,
    signal?: AbortSignal,
    onText?: (text: string) => void
};

export type GuardedCloudTurnResult = {
    text: string,
    blocked: boolean,
    verdict: CloudVerdict | null,
    warnings: string[],
    canariesPlanted: number,
    /** Ours as the endpoint's tokenizer counts (or our estimate, `countedBy`), and what the server reported using. */
    promptTokens: {ours: number, reported: number | null, countedBy: CloudTokenCount["countedBy"]},
    completionTokens: number | null,
    finishReason: string | null,
    model: string | null
};

/** Per message, chat templates add a few tokens of their own. */
const templateTokensPerMessage = 4;
const defaultHoldBackChars = 0;

/**
 * One cloud request wrapped in the canary protocol: fresh canaries planted and remembered,
 * the limit checked before sending, the reply scanned while it streams (cut at the first
 * blocking finding), then usage, model and finish reason checked. HTTP 200 is not success.
 */
export async function runGuardedCloudTurn(input: GuardedCloudTurnInput): Promise<GuardedCloudTurnResult> {
    const {messages, canaries} = plantCanaries(input.messages, {charsPerCanary: input.charsPerCanary});
    // Remembered before anything leaves: counting with the endpoint's tokenizer sends the text too.
    input.ledger.remember(canaries, {conversationId: input.conversationId, requestId: input.requestId});
    // One count for all messages, as the endpoint counts them; the template adds a few tokens per message.
    const counted = await input.client.countTokens(messages.map((message) => message.content).join("\n\n"), input.signal);
    const ourPromptTokens = counted.tokens + templateTokensPerMessage * messages.length;

    const limit = await input.client.contextLimit(input.signal);
    if (limit != null && ourPromptTokens + input.maxTokens > limit)
        throw new CleanroomError(
            "CLOUD_OVER_LIMIT",
            `This turn needs about ${ourPromptTokens + input.maxTokens} tokens (${ourPromptTokens} prompt + ${input.maxTokens} reply budget) ` +
            `but the cloud endpoint accepts ${limit}: not sent` +
            `${counted.countedBy === "estimate" ? " (estimated: the endpoint offers no tokenizer)" : " (counted by the endpoint's tokenizer)"}.`,
            {promptTokens: ourPromptTokens, replyBudget: input.maxTokens, contextLimit: limit, countedBy: counted.countedBy}
        );

    const scanner = new CanaryScanner({
        conversationId: input.conversationId, requestId: input.requestId, book: input.ledger, fingerprints: input.fingerprints
    });

    const cut = new AbortController();
    const signal = input.signal == null ? cut.signal : AbortSignal.any([input.signal, cut.signal]);
    const holdBack = Math.max(0, input.holdBackChars ?? defaultHoldBackChars);
    let text = "";
    let released = 0;
    let end: Extract<CloudStreamEvent, {type: "end"}> | null = null;
    const releaseUpTo = (upTo: number) => {
        if (upTo > released) {
            input.onText?.(text.slice(released, upTo));
            released = upTo;
        }
    };
    const show = (piece: string) => {
        if (piece.length > 0) {
            text += piece;
            releaseUpTo(text.length - holdBack);
        }
    };

    try {
        for await (const event of input.client.streamChat(messages, {maxTokens: input.maxTokens, signal, cacheSalt: input.cacheSalt})) {
            if (event.type === "end") {
                end = event;
                break;
            }
            const step = scanner.feed(event.text);
            if (step.blocked) {
                cut.abort();
                break;
            }
            show(step.text);
        }
    } catch (error) {
        if (!scanner.blocked)
            throw error;
    }

    if (!scanner.blocked) {
        if (end == null)
            throw new CleanroomError("CLOUD_BAD_RESPONSE", "The cloud reply ended without a finish: the stream was cut.");
        show(scanner.finish().text);
        releaseUpTo(text.length);
    }

    const findings = scanner.findings;
    const blocking = findings.find((finding) => finding.blocking);
    const warnings: string[] = [];
    const echoes = findings.filter((finding) => finding.kind === "prompt-echo").length;
    if (echoes > 0)
        warnings.push(`the reply echoed ${echoes} of this request's own canaries; they were removed`);

    if (blocking != null)
        return {
            text: "",
            blocked: true,
            verdict: verdictOf(blocking, findings),
            warnings,
            canariesPlanted: canaries.length,
            promptTokens: {ours: ourPromptTokens, reported: null, countedBy: counted.countedBy},
            completionTokens: null,
            finishReason: null,
            model: null
        };

    let verdict: CloudVerdict | null = null;
    const reported = end!.usage?.promptTokens ?? null;
    if (reported == null)
        warnings.push("the server reported no token usage");
    else if (reported < ourPromptTokens / 2)
        verdict = {
            kind: "truncation",
            blocked: false,
            detail: `The server counted ${reported} prompt tokens; about ${ourPromptTokens} were sent. ` +
                "It probably dropped part of the conversation silently.",
            findings: []
        };
    if (end!.model != null && !sameModel(end!.model, input.client.endpoint.model))
        warnings.push(`the server answered with model "${end!.model}", not "${input.client.endpoint.model}"`);
    if (end!.finishReason !== "stop" && end!.finishReason !== "length")
        warnings.push(`unexpected finish reason "${end!.finishReason}"`);

    return {
        text,
        blocked: false,
        verdict,
        warnings,
        canariesPlanted: canaries.length,
        promptTokens: {ours: ourPromptTokens, reported, countedBy: counted.countedBy},
        completionTokens: end!.usage?.completionTokens ?? null,
        finishReason: end!.finishReason,
        model: end!.model
    };
}

function verdictOf(first: ScanFinding, all: readonly ScanFinding[]): CloudVerdict {
    const kind = first.kind === "fingerprint" ? "fingerprint" : first.kind === "foreign-canary" ? "foreign-canary" : "cross-request";
    const detail = {
        "cross-request": "The reply carried one of our canaries from another conversation or request: cross-request contamination.",
        "foreign-canary": "The reply carried another install's canary: another tenant's data.",
        "fingerprint": "The reply repeated 8 or more words verbatim from another of your conversations, absent from this request."
    }[kind];
    return {
        kind,
        blocked: true,
        detail,
        findings: all.filter((finding) => finding.blocking).map((finding) => ({kind: finding.kind, start: finding.start, end: finding.end}))
    };
}

function sameModel(reported: string, requested: string) {
    const normalise = (name: string) => name.toLowerCase().replace(/\.gguf$/, "").split("/").pop()!;
    return normalise(reported) === normalise(requested) || normalise(reported).includes(normalise(requested));
}
