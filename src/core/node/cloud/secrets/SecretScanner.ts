import type {SecretLintCoreConfig, SecretLintCoreResultMessage, SecretLintRulePresetCreator} from "@secretlint/types";
import {findOwnSecrets, NeverSendMatcher} from "../../../common/secretScan/findOwnSecrets.js";
import {secretKindOfSecretlint, type SecretKindId} from "../../../common/secretScan/secretKinds.js";
import type {SecretMatch} from "../../../common/secretScan/types.js";

type Lint = (text: string) => Promise<SecretLintCoreResultMessage[]>;

/**
 * Between two messages of one request when they are linted as one text: no rule of the preset
 * matches across it (its patterns stop at a newline, at NUL, or at both), and one secretlint
 * call for the whole request costs less than one per message.
 */
const messageSeparator = "\n\u0000\n";

/**
 * Finds secrets in text: secretlint's recommended preset in process, and Cleanroom's own rules
 * (`findOwnSecrets`). Of the preset, the AWS access key ID rule is turned on (it is off by
 * default), AWS account IDs (not secret) are not reported, and the filter-comments rule is left
 * out: a `secretlint-disable` comment in a pasted text must not let a key out. secretlint is
 * loaded on first use or by `warm()`.
 */
export class SecretScanner {
    private _lint: Promise<Lint> | null = null;

    /** Loads secretlint and lints a short text once, so that the first request does not pay for it. */
    public async warm(): Promise<void> {
        await (await this._linter())("warm-up");
    }

    /** Secrets in each text (each a message of one request), in order, overlapping findings merged. */
    public async scan(texts: readonly string[], neverSend: readonly string[] = []): Promise<SecretMatch[][]> {
        const joined = texts.join(messageSeparator);
        const starts: number[] = [];
        let offset = 0;
        for (const text of texts) {
            starts.push(offset);
            offset += text.length + messageSeparator.length;
        }
        const perText: SecretMatch[][] = texts.map(() => []);
        for (const message of await (await this._linter())(joined)) {
            const kind = secretKindOfSecretlint(message.ruleId, message.messageId);
            if (kind == null)
                continue;
            const [start, end] = valueSpan(joined, message);
            const index = starts.findLastIndex((textStart) => textStart <= start);
            const textStart = starts[index]!;
            perText[index]!.push({kind, start: start - textStart, end: Math.min(end - textStart, texts[index]!.length)});
        }
        const matcher = neverSend.length > 0 ? new NeverSendMatcher(neverSend) : null;
        return texts.map((text, index) => mergeOverlapping([...perText[index]!, ...findOwnSecrets(text, matcher)]));
    }

    private _linter(): Promise<Lint> {
        this._lint ??= loadSecretlint();
        return this._lint;
    }
}

/** The preset's rule that honours `secretlint-disable` comments: never, in text a user pastes. */
const filterCommentsRule = "@secretlint/secretlint-rule-filter-comments";

async function loadSecretlint(): Promise<Lint> {
    const [{lintSource}, {creator}, {secretLintProfiler}] = await Promise.all([
        import("@secretlint/core"), import("@secretlint/secretlint-rule-preset-recommend"), import("@secretlint/profiler")
    ]);
    // secretlint 12 profiles every lint whether or not anyone reads it (secretlint#1633): about 56 performance marks a lint,
    // kept for ever in Node's global performance timeline and in the profiler's own arrays, which its observer searches
    // from the start at every mark. A core that scans cloud turns for days grew and slowed with it. secretlint 13's
    // `setEnabled(false)` (secretlint#1673) needs Node 22: until then its marks go nowhere.
    secretLintProfiler.mark = () => undefined;
    // The preset's creator, registering every rule but the comment filter: secretlint 12 does not
    // honour `disabled` for a rule inside a preset.
    const preset: SecretLintRulePresetCreator = {
        ...creator,
        create(context) {
            for (const rule of creator.rules)
                if (rule.meta.id !== filterCommentsRule)
                    context.registerRule(rule);
        }
    };
    const config: SecretLintCoreConfig = {rules: [{
        id: "@secretlint/secretlint-rule-preset-recommend",
        rule: preset,
        rules: [{id: "@secretlint/secretlint-rule-aws", options: {enableIDScanRule: true}, allowMessageIds: ["AWSAccountID"]}]
    }]};
    return async (text) => (await lintSource({
        source: {content: text, filePath: "cloud-request.txt", ext: ".txt", contentType: "text"},
        options: {config, noPhysicFilePath: true, locale: "en"}
    })).messages;
}

/**
 * Where the value of a secretlint finding stands. Its `range` is not always the value's (the AWS
 * secret key rule's starts at the variable's name), but its `data` holds the value: the longest
 * data string found at or after the range's start, within the range or just past it.
 */
function valueSpan(text: string, message: SecretLintCoreResultMessage): [number, number] {
    const [rangeStart, rangeEnd] = message.range;
    const values = Object.values(message.data ?? {}).filter((value): value is string => typeof value === "string" && value.length > 0);
    let best: [number, number] | null = null;
    for (const value of values) {
        const at = text.indexOf(value, rangeStart);
        if (at >= 0 && at <= rangeEnd && (best == null || value.length > best[1] - best[0]))
            best = [at, at + value.length];
    }
    return best ?? [rangeStart, rangeEnd];
}

/** Checksum and provider rules are surer than a `NAME=value` line, which is surer than the user's own phrases. */
function priority(kind: SecretKindId) {
    return kind === "never-send" ? 0 : kind === "env-secret" ? 1 : 2;
}

/** Overlapping findings become one, spanning them all, of the surest kind among them. */
function mergeOverlapping(matches: SecretMatch[]): SecretMatch[] {
    const merged: SecretMatch[] = [];
    for (const match of [...matches].sort((a, b) => a.start - b.start || b.end - a.end)) {
        const last = merged.at(-1);
        if (last != null && match.start < last.end) {
            last.end = Math.max(last.end, match.end);
            if (priority(match.kind) > priority(last.kind))
                last.kind = match.kind;
        } else
            merged.push({...match});
    }
    return merged;
}
