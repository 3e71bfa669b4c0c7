import {SecretInCloudRequestError} from "../../../common/errors.js";
import {maskSecret} from "../../../common/secretScan/maskSecret.js";
import {PlaceholderRestorer} from "../../../common/secretScan/PlaceholderRestorer.js";
import {secretKindName} from "../../../common/secretScan/secretKinds.js";
import type {CloudSecretsOptions, SecretFinding, SecretKindCounts, SecretMatch} from "../../../common/secretScan/types.js";
import type {CloudChatMessage} from "../CloudClient.js";
import type {SecretScanner} from "./SecretScanner.js";

export type ScreenedCloudRequest = {
    /** What may be sent: the messages as given, or with each secret replaced by its placeholder. */
    messages: CloudChatMessage[],
    /** Puts the values back into the reply where it repeats a placeholder. */
    restorer: PlaceholderRestorer,
    redacted: SecretFinding[],
    allowed: SecretFinding[]
};

/**
 * Scans every message of a cloud request (system prompt, history, prompt) before anything of it
 * leaves. A secret of a kind the turn does not allow stops it (`SecretInCloudRequestError`),
 * unless the turn redacts: then each value is replaced by a typed placeholder, the same value by
 * the same placeholder in every message (`[AWS access key 1]`).
 */
export async function screenCloudRequest(
    messages: readonly CloudChatMessage[],
    {scanner, neverSend = [], options = {}}: {scanner: SecretScanner, neverSend?: readonly string[], options?: CloudSecretsOptions}
): Promise<ScreenedCloudRequest> {
    const allow = new Set(options.allow ?? []);
    const found = await scanner.scan(messages.map((message) => message.content), neverSend);
    const hasSystem = messages[0]?.role === "system";
    const lineStarts = new Map<number, number[]>();
    const describe = (index: number, match: SecretMatch): SecretFinding => {
        const message = messages[index]!;
        if (!lineStarts.has(index))
            lineStarts.set(index, newlinesOf(message.content));
        return {
            kind: secretKindName(match.kind),
            kindId: match.kind,
            where: index === messages.length - 1 ? "the prompt" : index === 0 && hasSystem ? "the system prompt" : `history message ${index + (hasSystem ? 0 : 1)}`,
            message: index,
            role: message.role,
            line: lineOf(lineStarts.get(index)!, match.start),
            preview: maskSecret(message.content.slice(match.start, match.end), match.kind)
        };
    };

    const allowed: SecretFinding[] = [];
    const held: Array<{index: number, match: SecretMatch, finding: SecretFinding}> = [];
    found.forEach((matches, index) => {
        for (const match of matches) {
            const finding = describe(index, match);
            if (allow.has(match.kind))
                allowed.push(finding);
            else
                held.push({index, match, finding});
        }
    });
    if (held.length > 0 && options.redact !== true)
        throw new SecretInCloudRequestError(held.map((entry) => entry.finding));

    const placeholders = new Map<string, string>(); // value → placeholder
    const perKind = new Map<string, number>();
    const redactedMessages = messages.map((message, index) => {
        let content = "";
        let at = 0;
        for (const {match} of held.filter((entry) => entry.index === index)) {
            const value = message.content.slice(match.start, match.end);
            let placeholder = placeholders.get(value);
            if (placeholder == null) {
                const number = (perKind.get(match.kind) ?? 0) + 1;
                perKind.set(match.kind, number);
                placeholder = `[${secretKindName(match.kind)} ${number}]`;
                placeholders.set(value, placeholder);
            }
            content += message.content.slice(at, match.start) + placeholder;
            at = match.end;
        }
        return {role: message.role, content: content + message.content.slice(at)};
    });
    return {
        messages: redactedMessages,
        restorer: new PlaceholderRestorer(new Map([...placeholders].map(([value, placeholder]) => [placeholder, value]))),
        redacted: held.map((entry) => entry.finding),
        allowed
    };
}

/** How many findings of each kind, by name: what the audit keeps. */
export function countByKind(findings: readonly SecretFinding[]): SecretKindCounts {
    const counts: SecretKindCounts = {};
    for (const finding of findings)
        counts[finding.kind] = (counts[finding.kind] ?? 0) + 1;
    return counts;
}

function newlinesOf(text: string) {
    const newlines: number[] = [];
    for (let index = text.indexOf("\n"); index >= 0; index = text.indexOf("\n", index + 1))
        newlines.push(index);
    return newlines;
}

/** The 1-based line of `offset`: one more than the newlines before it (a binary search). */
function lineOf(newlines: readonly number[], offset: number) {
    let low = 0;
    let high = newlines.length;
    while (low < high) {
        const middle = (low + high) >>> 1;
        if (newlines[middle]! < offset)
            low = middle + 1;
        else
            high = middle;
    }
    return low + 1;
}
