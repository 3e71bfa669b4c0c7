import {CleanroomError} from "../../../common/errors.js";

/** The database is protected by a passphrase and none was given (no `CLEANROOM_PASSPHRASE`, no terminal to ask on). */
export class PassphraseRequiredError extends CleanroomError {
    public override readonly code = "PASSPHRASE_REQUIRED";

    public constructor(database: string) {
        super("PASSPHRASE_REQUIRED",
            `${database} is protected by a passphrase: set CLEANROOM_PASSPHRASE, or run this in a terminal to be asked for it.`,
            {path: database});
        this.name = "PassphraseRequiredError";
    }
}
