import {CleanroomError} from "../../../common/errors.js";

/** `app.unlock` was refused unread: too many wrong passphrases in a row; the next try is allowed after `retryAfterMs`. */
export class UnlockBackoffError extends CleanroomError {
    public override readonly code = "UNLOCK_BACKOFF";

    public constructor(retryAfterMs: number, failures: number) {
        super("UNLOCK_BACKOFF",
            `${failures} wrong passphrase${failures === 1 ? "" : "s"} in a row: try again in ${Math.ceil(retryAfterMs / 1000)} s (the passphrase was not tried).`,
            {retryAfterMs, failures});
        this.name = "UnlockBackoffError";
    }
}
