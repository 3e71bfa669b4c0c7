import {useState} from "react";
import type {ApiInput, AppSettings} from "../../../src/core/common/api/index.js";
import {ResumeSnapshotMaxMiBSchema} from "../../../src/core/common/api/limits.js";
import {Switch} from "./Switch.js";

/**
 * Settings → Resume snapshots (#25): the switch, and the size cap of one snapshot in MiB. Each is
 * saved at once (`settings.set {resumeSnapshots}`, `{resumeSnapshotMaxMiB}`).
 */
export function ResumeSnapshotSettings({settings, onSave}: {
    settings: AppSettings, onSave: (changes: ApiInput<"settings.set">) => Promise<unknown>
}) {
    const [cap, setCap] = useState(String(settings.resumeSnapshotMaxMiB));
    const parsedCap = ResumeSnapshotMaxMiBSchema.safeParse(Number(cap.trim()));
    const capProblem = cap.trim() === "" || !parsedCap.success ? "A whole number of MiB, from 1 to 65536." : null;

    return (
        <fieldset>
            <legend>Resume snapshots</legend>
            <Switch label="Resume snapshots" checked={settings.resumeSnapshots}
                description="When a conversation's context ends, its model state is saved encrypted, for that conversation only, so its next turn starts at once instead of reading the whole history again. Deleting the conversation, Delete everything and wipe remove it."
                onChange={(checked) => void onSave({resumeSnapshots: checked})} />
            <form className="field" onSubmit={(event) => {
                event.preventDefault();
                if (parsedCap.success)
                    void onSave({resumeSnapshotMaxMiB: parsedCap.data});
            }}>
                <span>Largest snapshot (MiB)</span>
                <div className="field-row">
                    <input value={cap} onChange={(event) => setCap(event.target.value)} inputMode="numeric" aria-label="Largest snapshot (MiB)"
                        disabled={!settings.resumeSnapshots} />
                    <button type="submit" className="button" disabled={!settings.resumeSnapshots || capProblem != null || parsedCap.data === settings.resumeSnapshotMaxMiB}>Set</button>
                </div>
                <small>{capProblem ?? "A larger state is not saved: that conversation reads its history again when it resumes."}</small>
            </form>
        </fieldset>
    );
}
