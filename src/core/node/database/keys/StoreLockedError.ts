import {CleanroomError} from "../../../common/errors.js";

/** The app is locked: the core holds no key and no decrypted text, and answers nothing but `app.unlock`. */
export class StoreLockedError extends CleanroomError {
    public override readonly code = "STORE_LOCKED";

    public constructor(method: string) {
        super("STORE_LOCKED", `Cleanroom is locked: unlock it with the passphrase first (${method} was refused).`, {method});
        this.name = "StoreLockedError";
    }
}
