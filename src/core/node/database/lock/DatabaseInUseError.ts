import {CleanroomError} from "../../../common/errors.js";
import type {LockHolder} from "./lockHolders.js";

/**
 * Another Cleanroom process stands in the way of this one: `open`, it has the database open, so a
 * switch (re-key, wipe, delete everything, migration) that needs it alone is refused; `switching`,
 * it is switching the database right now, so this process may neither open nor switch it.
 */
export class DatabaseInUseError extends CleanroomError {
    public override readonly code = "DATABASE_IN_USE";
    public readonly holders: readonly LockHolder[];

    /**
     * @param operation what was refused, as in "Cannot <operation> <database>" ("set the passphrase of", "open")
     * @param holders the other processes, when the OS tells (Linux: `/proc/locks`); empty when it does not
     */
    public constructor(database: string, situation: "open" | "switching", operation: string, holders: readonly LockHolder[]) {
        const who = describeHolders(holders);
        super("DATABASE_IN_USE", situation === "open"
            ? `Cannot ${operation} ${database}: another Cleanroom process${who} has it open. Nothing was changed. ` +
                "Close that process first (end its chat, quit the app or web mode), then try again."
            : `Cannot ${operation} ${database}: another Cleanroom process${who} is re-keying, wiping or migrating it right now. ` +
                "Nothing was changed. Try again when it has finished.",
        {database, situation, operation, pid: holders[0]?.pid ?? null, pids: holders.map((holder) => holder.pid).join(",")});
        this.name = "DatabaseInUseError";
        this.holders = holders;
    }
}

function describeHolders(holders: readonly LockHolder[]) {
    if (holders.length === 0)
        return "";
    const one = (holder: LockHolder) => holder.command != null ? `${holder.pid}: ${holder.command}` : `${holder.pid}`;
    return holders.length === 1
        ? ` (pid ${one(holders[0]!)})`
        : ` (pids ${holders.map(one).join(", ")})`;
}
