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
 * One problem per zod issue, the one format every refusal uses: `where: message`, where `where`
 * is the issue's path joined with dots (`settings.pool.budget`, `messages.0.content`), or `whole`
 * for an issue about the value itself.
 */
export function describeZodIssues(issues: readonly ZodIssueLike[], {whole, limit = defaultLimit}: DescribeZodIssuesOptions = {}): string[] {
    const described = issues.slice(0, limit).map((issue) => {
        const where = issue.path.length > 0 ? issue.path.map(String).join(".") : whole;
        return where == null ? issue.message : `${where}: ${issue.message}`;
    });
    if (issues.length > limit)
        described.push(`and ${issues.length - limit} more`);
    return described;
}
