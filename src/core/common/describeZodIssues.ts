/** The part of a zod issue a message needs (zod's `$ZodIssue` has more). */
export type ZodIssueLike = {
    readonly path: readonly PropertyKey[],
    readonly message: string
};

export type DescribeZodIssuesOptions = {
    /** What the value is called when an issue is about the whole of it (an empty path). Defaults to no prefix. */
    whole?: string,
    /** How many issues are described; the rest are counted in a last `and N more`. Defaults to `5`. */
    limit?: number
};

const defaultLimit = 5;
/**
 * Longest problem described, in UTF-16 units: an issue's path or message may carry what the sender sent (zod names every
 * unrecognized key), and a refusal does not echo a key of megabytes back to whoever sent it.
 */
export const longestProblem = 1_000;

/**
 * One problem per zod issue, the one format every refusal uses: `where: message`, where `where`
 * is the issue's path joined with dots (`settings.pool.budget`, `messages.0.content`), or `whole`
 * for an issue about the value itself. A problem longer than `longestProblem` is cut there, with `…`.
 */
export function describeZodIssues(issues: readonly ZodIssueLike[], {whole, limit = defaultLimit}: DescribeZodIssuesOptions = {}): string[] {
    const described = issues.slice(0, limit).map((issue) => {
        const where = issue.path.length > 0 ? issue.path.map(String).join(".") : whole;
        return shortened(where == null ? issue.message : `${where}: ${issue.message}`);
    });
    if (issues.length > limit)
        described.push(`and ${issues.length - limit} more`);
    return described;
}

function shortened(problem: string) {
    if (problem.length <= longestProblem)
        return problem;
    // Not between the two halves of a surrogate pair.
    const end = /[\uD800-\uDBFF]/.test(problem[longestProblem - 1]!) ? longestProblem - 1 : longestProblem;
    return `${problem.slice(0, end)}…`;
}
