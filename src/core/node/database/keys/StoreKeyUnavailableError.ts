import {CleanroomError} from "../../../common/errors.js";

/** The database is encrypted with a key this process cannot reach (the desktop app's keychain, a missing key file). */
export class StoreKeyUnavailableError extends CleanroomError {
    public override readonly code = "STORE_KEY_UNAVAILABLE";

    public constructor(database: string, reason: string) {
        super("STORE_KEY_UNAVAILABLE", `Cannot open ${database}: ${reason}.`, {path: database, reason});
        this.name = "StoreKeyUnavailableError";
    }
}
