/**
 * Puts `text` on the clipboard; false when it could not. The async Clipboard API first; where it is
 * refused (the desktop shell denies every permission request, clipboard writes included) a copy
 * command on a hidden text field, which needs no permission.
 */
export async function copyText(text: string): Promise<boolean> {
    try {
        await navigator.clipboard.writeText(text);
        return true;
    } catch {
        return copyWithCommand(text);
    }
}

function copyWithCommand(text: string): boolean {
    const field = document.createElement("textarea");
    field.value = text;
    field.setAttribute("readonly", "");
    field.className = "visually-hidden";
    const focused = document.activeElement as HTMLElement | null;
    document.body.append(field);
    field.select();
    try {
        // Deprecated but still the one permission-free way to write the clipboard from a page.
        return document.execCommand("copy");
    } catch {
        return false;
    } finally {
        field.remove();
        focused?.focus();
    }
}
