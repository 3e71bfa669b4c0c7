/** The date groups of the conversation list, newest first. */
export const dateGroupNames = ["Pinned", "Today", "Yesterday", "Previous 7 days", "Previous 30 days", "Older"] as const;
export type DateGroupName = typeof dateGroupNames[number];

const dayMs = 24 * 60 * 60 * 1000;

/** Which group a conversation last updated at `updatedAt` goes in, seen at `now` (local calendar days). */
export function dateGroupOf(updatedAt: number, pinned: boolean, now: number): DateGroupName {
    if (pinned)
        return "Pinned";
    const today = new Date(now);
    today.setHours(0, 0, 0, 0);
    const start = today.getTime();
    if (updatedAt >= start)
        return "Today";
    if (updatedAt >= start - dayMs)
        return "Yesterday";
    if (updatedAt >= start - 7 * dayMs)
        return "Previous 7 days";
    if (updatedAt >= start - 30 * dayMs)
        return "Previous 30 days";
    return "Older";
}

/** Items in their date groups, in the groups' order, each group keeping the items' order; empty groups left out. */
export function groupByDate<T extends {updatedAt: number, pinned: boolean}>(items: T[], now: number): Array<{name: DateGroupName, items: T[]}> {
    const groups = new Map<DateGroupName, T[]>();
    for (const item of items) {
        const name = dateGroupOf(item.updatedAt, item.pinned, now);
        groups.set(name, [...groups.get(name) ?? [], item]);
    }
    return dateGroupNames.filter((name) => groups.has(name)).map((name) => ({name, items: groups.get(name)!}));
}
