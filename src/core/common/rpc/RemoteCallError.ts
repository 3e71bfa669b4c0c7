import {CleanroomError, type ErrorCode, type WireError} from "../errors.js";

/** A core error rebuilt on the caller's side from its wire form; branch on `code`. */
export class RemoteCallError extends CleanroomError {
    public readonly method: string;

    public constructor(method: string, wire: WireError) {
        super(wire.code as ErrorCode, wire.message, wire.details);
        this.name = "RemoteCallError";
        this.method = method;
    }
}
