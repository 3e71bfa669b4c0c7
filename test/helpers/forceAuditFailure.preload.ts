// `node --import` this into the test build's CLI (test/helpers/testBuild.ts): SQLite refuses to record a scrub (as on a
// database re-keyed under the process), inside the pool's session-end listener, and a second such
// error is left as an unhandled rejection. CLEANROOM_FORCE_AUDIT_FAILURE says which: `listener`
// (the default) or `rejection`.
import Database from "better-sqlite3-multiple-ciphers";
import type {AuditKind} from "../../src/core/common/api/auditEvents.js";
import {AuditLog, type AuditRecord} from "../../src/core/node/audit/AuditLog.js";

const real = AuditLog.prototype.record;
AuditLog.prototype.record = function <Kind extends AuditKind>(this: AuditLog, record: AuditRecord<Kind>) {
    if (record.kind !== "scrub.verified")
        return (real<Kind>).call(this, record);
    const error = new Database.SqliteError("file is not a database", "SQLITE_NOTADB");
    if (process.env.CLEANROOM_FORCE_AUDIT_FAILURE === "rejection")
        void Promise.reject(error);
    throw error;
};
