import {useEffect, useRef} from "react";

/** Every keyboard shortcut of the app, one row each. */
export const shortcuts: ReadonlyArray<{keys: string, action: string}> = [
    {keys: "Ctrl+N (Alt+N in a browser tab)", action: "New conversation"},
    {keys: "Ctrl+Shift+N (Alt+Shift+N in a browser tab)", action: "New incognito conversation (never written to disk)"},
    {keys: "Ctrl+K", action: "Search conversations"},
    {keys: "Ctrl+,", action: "Settings"},
    {keys: "Ctrl+/ or ?", action: "This list of shortcuts"},
    {keys: "Enter", action: "Send the message"},
    {keys: "Shift+Enter", action: "New line in the message"},
    {keys: "↑ in an empty message box", action: "Edit and resend your last message"},
    {keys: "Esc", action: "Stop the reply; cancel an edit; close a dialog or panel"}
];

/** The keyboard shortcuts, as a dialog; Escape or Close closes it and focus goes back where it was. */
export function HelpSheet({onClose}: {onClose: () => void}) {
    const close = useRef<HTMLButtonElement>(null);
    useEffect(() => {
        const previous = document.activeElement as HTMLElement | null;
        close.current?.focus();
        const onKey = (event: KeyboardEvent) => {
            if (event.key === "Escape")
                onClose();
        };
        window.addEventListener("keydown", onKey);
        return () => {
            window.removeEventListener("keydown", onKey);
            previous?.focus();
        };
    }, [onClose]);
    return (
        <div className="dialog-backdrop" onClick={(event) => {
            if (event.target === event.currentTarget)
                onClose();
        }}>
            <div className="dialog" role="dialog" aria-modal="true" aria-labelledby="help-title">
                <div className="dialog-header">
                    <h2 id="help-title">Keyboard shortcuts</h2>
                    <button ref={close} type="button" className="button button-ghost" onClick={onClose}>Close</button>
                </div>
                <table className="shortcuts">
                    <thead><tr><th scope="col">Keys</th><th scope="col">Does</th></tr></thead>
                    <tbody>
                        {shortcuts.map((shortcut) => (
                            <tr key={shortcut.keys}><td><kbd>{shortcut.keys}</kbd></td><td>{shortcut.action}</td></tr>
                        ))}
                    </tbody>
                </table>
            </div>
        </div>
    );
}
