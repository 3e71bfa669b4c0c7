import {CleanroomError, isErrorCode, type WireError} from "../errors.js";

/** A core error rebuilt on the caller's side from its wire form; branch on `code` (INTERNAL for a code this side does not know). */
export class RemoteCallError extends CleanroomError {
    public readonly method: string;

    public constructor(method: string, wire: WireError) {
        super(isErrorCode(wire.code) ? wire.code : "INTERNAL", wire.message, wire.details);
        this.name = "RemoteCallError";
        this.method = method;
    }
}
