import {maxNeverSendPhrases, NeverSendPhraseSchema} from "../api/limits.js";
import {CleanroomError} from "../errors.js";
import {describeZodIssues} from "../describeZodIssues.js";

/**
 * Edits of the "Never send these" list, the same in Settings and the CLI. The scan matches a phrase
 * in any case and with any spacing between its words (`NeverSendMatcher`), so two phrases that
 * differ only so are one entry: adding the second changes nothing, removing either removes it.
 */

/** A phrase as the scan reads it: words in lower case, one space between them. */
function comparable(phrase: string) {
    return phrase.trim().split(/\s+/).join(" ").toLowerCase();
}

/** The list with `phrase` added at the end (trimmed), or as it was when the list holds it already. */
export function addNeverSendPhrase(list: readonly string[], phrase: string): {list: string[], added: boolean} {
    const parsed = NeverSendPhraseSchema.safeParse(phrase);
    if (!parsed.success)
        throw new CleanroomError("INVALID_INPUT", `This phrase cannot be added: ${describeZodIssues(parsed.error.issues, {limit: 1})[0]}.`);
    if (list.some((entry) => comparable(entry) === comparable(parsed.data)))
        return {list: [...list], added: false};
    if (list.length >= maxNeverSendPhrases)
        throw new CleanroomError("INVALID_INPUT", `The Never send list is full: it holds at most ${maxNeverSendPhrases} phrases. Remove one first.`,
            {maxPhrases: maxNeverSendPhrases});
    return {list: [...list, parsed.data], added: true};
}

/** The list without `phrase` (in any case and spacing); `removed` is false when it was not there. */
export function removeNeverSendPhrase(list: readonly string[], phrase: string): {list: string[], removed: boolean} {
    const kept = list.filter((entry) => comparable(entry) !== comparable(phrase));
    return {list: kept, removed: kept.length < list.length};
}
