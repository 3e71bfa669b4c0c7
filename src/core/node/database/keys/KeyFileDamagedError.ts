import {CleanroomError} from "../../../common/errors.js";

/**
 * The database's key file (`<database>-key.json`) cannot be read as one: empty, cut short,
 * overwritten. It holds what decrypts the database (the device key, or the passphrase's salt), so
 * nothing opens without it. Its contents are never echoed: a device key file holds the key.
 */
export class KeyFileDamagedError extends CleanroomError {
    public override readonly code = "KEY_FILE_DAMAGED";

    /** @param problem - what is wrong with it, as the end of a sentence: "it is empty", "it is not valid JSON". */
    public constructor(keyFile: string, database: string, problem: string) {
        super(
            "KEY_FILE_DAMAGED",
            `The key file ${keyFile} is damaged (${problem}), so ${database} cannot be opened: the key file holds what decrypts it. ` +
                "Put back a copy of that key file from a backup made together with the database; no other key file opens it. " +
                `To give up its conversations and start over instead: \`cleanroom wipe --db ${database} --yes\`.`,
            {path: keyFile, database, problem}
        );
        this.name = "KeyFileDamagedError";
    }
}
