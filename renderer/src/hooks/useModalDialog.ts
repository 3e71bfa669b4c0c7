import {useEffect, useRef, type KeyboardEvent} from "react";

/**
 * A modal dialog's keyboard: focus starts on the returned `initialFocus` element (the choice that
 * does nothing) and goes back where it was when the dialog closes; Escape calls `onEscape`; Tab
 * stays in the dialog (`onKeyDown` on the dialog element, `dialog` its ref).
 */
export function useModalDialog<Initial extends HTMLElement>(onEscape: () => void) {
    const dialog = useRef<HTMLDivElement>(null);
    const initialFocus = useRef<Initial>(null);
    useEffect(() => {
        const previous = document.activeElement as HTMLElement | null;
        initialFocus.current?.focus();
        return () => previous?.focus();
    }, []);
    useEffect(() => {
        const onKey = (event: globalThis.KeyboardEvent) => {
            if (event.key === "Escape") {
                event.preventDefault();
                onEscape();
            }
        };
        window.addEventListener("keydown", onKey);
        return () => window.removeEventListener("keydown", onKey);
    }, [onEscape]);
    const onKeyDown = (event: KeyboardEvent) => {
        if (event.key === "Tab" && dialog.current != null)
            keepFocusInside(dialog.current, event);
    };
    return {dialog, initialFocus, onKeyDown};
}

/** Tab from the last control goes to the first, Shift+Tab from the first to the last: a modal dialog keeps the focus. */
function keepFocusInside(container: HTMLElement, event: KeyboardEvent) {
    const focusable = [...container.querySelectorAll<HTMLElement>("button:not(:disabled), [href], input:not(:disabled), [tabindex]:not([tabindex='-1'])")];
    const first = focusable[0];
    const last = focusable.at(-1);
    if (first == null || last == null)
        return;
    if (event.shiftKey && document.activeElement === first) {
        event.preventDefault();
        last.focus();
    } else if (!event.shiftKey && document.activeElement === last) {
        event.preventDefault();
        first.focus();
    }
}
