import {useEffect, useRef} from "react";

export type ShortcutActions = {
    newConversation: () => void,
    newIncognitoConversation: () => void,
    search: () => void,
    openSettings: () => void,
    openHelp: () => void,
    /** Escape outside a dialog (closes an open drawer). */
    escape: () => void
};

/**
 * The app's keyboard: Ctrl+N (Alt+N where the browser keeps Ctrl+N) new, with Shift incognito,
 * Ctrl+K search, Ctrl+, settings, Ctrl+/ or ? (outside a text field) the shortcuts sheet, Esc.
 * A modal dialog (Settings, the sheet, Secrets found) takes the keyboard until it is closed: it handles its own Escape.
 */
export function useShortcuts(actions: ShortcutActions) {
    const latest = useRef(actions);
    latest.current = actions;
    useEffect(() => {
        const onKey = (event: KeyboardEvent) => {
            if (document.querySelector("[role=dialog][aria-modal=true]") != null)
                return;
            const run = latest.current;
            const control = event.ctrlKey || event.metaKey;
            const typing = event.target instanceof HTMLElement && (event.target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(event.target.tagName));
            const key = event.key.toLowerCase();
            if (((control && !event.altKey) || (event.altKey && !control)) && key === "n") {
                event.preventDefault();
                if (event.shiftKey)
                    run.newIncognitoConversation();
                else
                    run.newConversation();
            } else if (control && key === "k") {
                event.preventDefault();
                run.search();
            } else if (control && key === ",") {
                event.preventDefault();
                run.openSettings();
            } else if ((control && key === "/") || (key === "?" && !typing)) {
                event.preventDefault();
                run.openHelp();
            } else if (key === "escape") {
                run.escape();
            }
        };
        window.addEventListener("keydown", onKey);
        return () => window.removeEventListener("keydown", onKey);
    }, []);
}
