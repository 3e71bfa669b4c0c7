import {CleanroomError} from "../../../common/errors.js";

/** The passphrase does not open the database. Nothing on disk was changed by the attempt. */
export class WrongPassphraseError extends CleanroomError {
    public override readonly code = "WRONG_PASSPHRASE";

    public constructor(database: string) {
        super("WRONG_PASSPHRASE", `The passphrase does not open ${database}. Nothing was changed on disk.`, {path: database});
        this.name = "WrongPassphraseError";
    }
}
