import {CleanroomError} from "../../../common/errors.js";

/** The database file itself is damaged where SQLite must read first, though its key is the right one. */
export class DatabaseDamagedError extends CleanroomError {
    public override readonly code = "DATABASE_DAMAGED";

    public constructor(database: string, keyFile: string) {
        super(
            "DATABASE_DAMAGED",
            `The database file ${database} is damaged: its first page (which holds the list of tables) fails its integrity check, ` +
                `though the key in ${keyFile} opens the rest of the file, so the key is the right one. ` +
                `Put back the database file from a backup (the key file beside it stays), or give its conversations up and start over: \`cleanroom wipe --db ${database} --yes\`.`,
            {path: database, keyFile, page: 1}
        );
        this.name = "DatabaseDamagedError";
    }
}
