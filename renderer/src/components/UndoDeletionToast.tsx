import type {PendingDeletion} from "../navigation.js";

/** "Deleted …" with its Undo, while the deletion can still be undone. */
export function UndoDeletionToast({deletion, onUndo}: {deletion: PendingDeletion | null, onUndo: () => void}) {
    if (deletion == null)
        return null;
    return (
        <div className="toast" role="status">
            <span>Deleted “{deletion.title}”.</span>
            <button type="button" className="button button-small" onClick={onUndo}>Undo</button>
        </div>
    );
}
